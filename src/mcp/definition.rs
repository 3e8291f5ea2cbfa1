//! One listed MCP tool as a [`ToolDefinition`]: its raw input schema (the server validates
//! arguments), an output declaration derived from `outputSchema`, policy hints from its
//! annotations, and per-tool warnings instead of failures.

use super::call::{McpToolBody, OutputShape};
use super::link::Link;
use super::names::registered_name;
use crate::codegen::untyped_part;
use crate::schema::check_supported;
use crate::tool::{Concurrency, ToolDefinition};
use dsh_tools_protocol::McpServerConfig;
use serde_json::{Value, json};
use std::sync::Arc;

/// What one listed tool became.
pub struct Ingested {
    /// The definition to register.
    pub definition: ToolDefinition,
    /// What was degraded, each naming the tool.
    pub warnings: Vec<String>,
}

/// Builds the definition of `raw` (one element of `tools/list`'s `tools`), whose `name` the
/// caller already read. Never fails because of a schema: unusable parts degrade with a warning.
pub fn ingest(
    link: &Arc<Link>,
    tool: &str,
    raw: &Value,
    config: &McpServerConfig,
) -> Result<Ingested, String> {
    let mut warnings = Vec::new();
    let mut warn = |text: String| warnings.push(format!("tool \"{tool}\": {text}"));
    let description = ["description", "title"]
        .iter()
        .find_map(|key| raw.get(*key).and_then(Value::as_str))
        .unwrap_or_default();
    let input = match raw.get("inputSchema") {
        Some(schema @ Value::Object(_)) => {
            if let Some(part) = untyped_part(schema, "inputSchema") {
                warn(format!(
                    "inputSchema goes beyond the SDK's schema subset at {part}; that part is typed `unknown` and the server validates arguments"
                ));
            }
            schema.clone()
        }
        Some(_) => {
            warn("inputSchema is not an object; its arguments are untyped".into());
            json!({ "type": "object" })
        }
        None => {
            warn("has no inputSchema; its arguments are untyped".into());
            json!({ "type": "object" })
        }
    };
    // An output schema beyond the enforced subset is still the tool's declared output: the
    // SDK types it (unknown parts as `unknown`) and `dsh-tools mcp` serves it with the
    // server's `structuredContent`; only the host's own check of the value is skipped.
    let (output, unenforced, shape) = match raw.get("outputSchema") {
        None | Some(Value::Null) => (json!({ "type": "string" }), None, OutputShape::Text),
        Some(schema @ Value::Object(_)) => match check_supported(schema, "outputSchema") {
            Ok(()) => (schema.clone(), None, OutputShape::Structured),
            Err(outside) => {
                warn(format!(
                    "outputSchema goes beyond the enforced subset ({outside}); its structured output is passed on unchecked"
                ));
                (json!({}), Some(schema.clone()), OutputShape::Structured)
            }
        },
        Some(_) => {
            warn(
                "outputSchema is not an object; its structured output is accepted as any JSON"
                    .into(),
            );
            (json!({}), None, OutputShape::Structured)
        }
    };
    let hint = |name: &str| {
        raw.get("annotations")
            .and_then(|a| a.get(name))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    };
    let concurrency = if hint("readOnlyHint") {
        Concurrency::Parallel
    } else {
        Concurrency::Exclusive
    };
    let body = McpToolBody {
        link: link.clone(),
        tool: Arc::from(tool),
        shape,
    };
    let mut builder = ToolDefinition::builder(registered_name(&link.name, tool))
        .description(description)
        .input_schema(input)
        .concurrency(concurrency)
        .idempotent(hint("idempotentHint"))
        .deferred(config.defer_tools);
    builder = match unenforced {
        Some(schema) => builder.unenforced_output_schema(schema),
        None => builder.output_json_schema(output),
    };
    if let Some(ms) = config.timeout_ms {
        builder = builder.timeout_ms(json!(ms));
    }
    let definition = builder.body(body).map_err(|e| e.to_string())?;
    Ok(Ingested {
        definition,
        warnings,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::tool::InputSchema;
    use dsh_tools_protocol::McpServerState;

    /// A server entry with `timeoutMs` and `deferTools`.
    fn server(timeout_ms: Option<u64>, defer_tools: bool) -> McpServerConfig {
        let mut config: McpServerConfig =
            serde_json::from_value(json!({ "command": "x", "deferTools": defer_tools })).unwrap();
        config.timeout_ms = timeout_ms;
        config
    }

    /// Ingests `raw` as tool "t" of server "s", checks its input and enforced output
    /// schemas and its warnings, and returns the definition.
    fn check(raw: Value, input: Value, output: Value, warnings: &[&str]) -> ToolDefinition {
        let link = Link::new(
            "s",
            dsh_tools_protocol::McpTransport::Stdio,
            McpServerState::Running,
            Arc::new(tokio::sync::watch::Sender::new(0)),
        );
        let ingested = ingest(&link, "t", &raw, &server(Some(5000), false)).unwrap();
        let definition = &ingested.definition;
        assert_eq!(&*definition.name, "mcp__s__t");
        assert!(matches!(definition.input, InputSchema::Raw(_)));
        assert_eq!(definition.input.json_schema(), &input, "{raw}");
        assert_eq!(definition.output.json_schema, output, "{raw}");
        assert_eq!(definition.timeout_ms, Some(5000));
        assert_eq!(ingested.warnings, warnings, "{raw}");
        ingested.definition
    }

    #[test]
    fn schemas_from_the_wild_degrade_per_tool() {
        let object = json!({ "type": "object", "properties": { "q": { "type": "string" } } });
        let referencing = json!({
            "type": "object",
            "properties": { "node": { "$ref": "#/$defs/Node" } },
            "$defs": { "Node": { "type": "object", "properties": { "next": { "$ref": "#/$defs/Node" } } } }
        });
        let any_of = json!({ "anyOf": [{ "type": "string" }, { "type": "number" }] });
        check(
            json!({ "name": "t", "inputSchema": object }),
            object.clone(),
            json!({ "type": "string" }),
            &[],
        );
        check(
            json!({ "name": "t", "inputSchema": referencing, "outputSchema": object }),
            referencing.clone(),
            object.clone(),
            &[
                "tool \"t\": inputSchema goes beyond the SDK's schema subset at inputSchema.properties.node; that part is typed `unknown` and the server validates arguments",
            ],
        );
        let unchecked = check(
            json!({ "name": "t", "inputSchema": {}, "outputSchema": any_of }),
            json!({}),
            json!({}),
            &[
                "tool \"t\": outputSchema goes beyond the enforced subset (outputSchema: unsupported keyword \"anyOf\"); its structured output is passed on unchecked",
            ],
        );
        assert_eq!(unchecked.output.presented_schema(), &any_of);
        // What zod writes (`$schema`) and what only narrows values (`minimum`, `format`)
        // keep a schema typed: no warning, and the output stays enforced.
        let zod = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "count": { "type": "number", "minimum": 1, "maximum": 10 },
                "data": { "type": "string", "format": "uri" }
            }
        });
        let output = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": { "t": { "type": "number", "description": "Temperature" } },
            "required": ["t"],
            "additionalProperties": false
        });
        let enforced = check(
            json!({ "name": "t", "inputSchema": zod, "outputSchema": output }),
            zod.clone(),
            output.clone(),
            &[],
        );
        assert!(enforced.output.unenforced.is_none());
        check(
            json!({ "name": "t" }),
            json!({ "type": "object" }),
            json!({ "type": "string" }),
            &["tool \"t\": has no inputSchema; its arguments are untyped"],
        );
        check(
            json!({ "name": "t", "inputSchema": true, "outputSchema": "x" }),
            json!({ "type": "object" }),
            json!({}),
            &[
                "tool \"t\": inputSchema is not an object; its arguments are untyped",
                "tool \"t\": outputSchema is not an object; its structured output is accepted as any JSON",
            ],
        );
    }

    #[test]
    fn annotations_become_policy_hints() {
        let link = Link::new(
            "s",
            dsh_tools_protocol::McpTransport::Stdio,
            McpServerState::Running,
            Arc::new(tokio::sync::watch::Sender::new(0)),
        );
        let raw = json!({ "name": "t", "description": "Reads.", "inputSchema": { "type": "object" },
            "annotations": { "readOnlyHint": true, "idempotentHint": true } });
        let definition = ingest(&link, "t", &raw, &server(None, false))
            .unwrap()
            .definition;
        assert!(matches!(definition.concurrency, Concurrency::Parallel));
        assert!(!definition.deferred);
        assert!(definition.idempotent);
        assert_eq!(definition.description, "Reads.");
        assert_eq!(definition.timeout_ms, None);
        let raw =
            json!({ "name": "t", "title": "Title only", "inputSchema": { "type": "object" } });
        let definition = ingest(&link, "t", &raw, &server(None, true))
            .unwrap()
            .definition;
        assert!(definition.deferred, "deferTools defers every tool");
        assert!(matches!(definition.concurrency, Concurrency::Exclusive));
        assert!(!definition.idempotent);
        assert_eq!(definition.description, "Title only");
    }
}
