//! Model providers' request shapes (issue 45): a tool list as Anthropic, OpenAI
//! (Responses and Chat Completions), Gemini or MCP take it, each provider's schema rules
//! applied by a transformation that is lossless or reports per tool what it weakened,
//! and a result as the provider's tool-result block. Pure JSON in, JSON out: the
//! registry, prompt assembly and the front ends decide what to shape.

mod arguments;
mod gemini;
mod report;
mod results;
mod strict;

pub use arguments::drop_strict_nulls;
pub use dsh_tools_protocol::{NativeToolSearch, ProviderFormat, SchemaChange, WeakenedTool};
pub use results::tool_result;

use report::Report;
use serde_json::{Map, Value, json};

/// One tool to shape.
#[derive(Clone, Copy, Debug)]
pub struct ToolShape<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub input_schema: &'a Value,
    /// Offered to `mcp` (as `outputSchema`, when it is an object schema).
    pub output_schema: Option<&'a Value>,
    /// Listed with `defer_loading: true` (`anthropic` with a native tool search only).
    pub defer_loading: bool,
}

/// A tool list in a provider's shape.
#[derive(Debug, Default)]
pub struct Shaped {
    /// Exactly what the provider's request takes as its tools.
    pub tools: Vec<Value>,
    /// Tools whose shape is weaker than their schema, or left out.
    pub weakened: Vec<WeakenedTool>,
}

/// The tools in `format`'s shape, in the order given.
pub fn shape(format: ProviderFormat, tools: &[ToolShape<'_>]) -> Shaped {
    let mut shaped = Shaped::default();
    let mut declarations = Vec::new();
    for tool in tools {
        let mut report = Report::default();
        let built = match name_refusal(format, tool.name) {
            Some(why) => {
                report.weaken("", why);
                None
            }
            None => one(format, tool, &mut report),
        };
        let omitted = built.is_none();
        match built {
            Some(value) if format == ProviderFormat::Gemini => declarations.push(value),
            Some(value) => shaped.tools.push(value),
            None => {}
        }
        if omitted || !report.changes.is_empty() {
            shaped.weakened.push(WeakenedTool {
                name: tool.name.to_owned(),
                omitted,
                changes: report.changes,
            });
        }
    }
    if !declarations.is_empty() {
        shaped
            .tools
            .push(json!({ "functionDeclarations": declarations }));
    }
    shaped
}

/// Anthropic's tool search tool of `kind` (a server tool the request lists beside the
/// deferred tools).
pub fn tool_search_tool(kind: NativeToolSearch) -> Value {
    match kind {
        NativeToolSearch::Bm25 => json!({
            "type": "tool_search_tool_bm25_20251119",
            "name": "tool_search_tool_bm25",
        }),
        NativeToolSearch::Regex => json!({
            "type": "tool_search_tool_regex_20251119",
            "name": "tool_search_tool_regex",
        }),
    }
}

/// The wire name of a format (`openai-responses`).
pub fn format_name(format: ProviderFormat) -> &'static str {
    match format {
        ProviderFormat::Anthropic => "anthropic",
        ProviderFormat::OpenaiResponses => "openai-responses",
        ProviderFormat::OpenaiChat => "openai-chat",
        ProviderFormat::Gemini => "gemini",
        ProviderFormat::Mcp => "mcp",
    }
}

/// Why the provider would refuse a tool of this name (it is then left out).
fn name_refusal(format: ProviderFormat, name: &str) -> Option<String> {
    let (pattern, fits) = match format {
        ProviderFormat::Anthropic => (
            "^[a-zA-Z0-9_-]{1,128}$",
            fits(name, 128, |c| {
                c.is_ascii_alphanumeric() || c == '_' || c == '-'
            }),
        ),
        ProviderFormat::OpenaiResponses | ProviderFormat::OpenaiChat => (
            "^[a-zA-Z0-9_-]{1,64}$",
            fits(name, 64, |c| {
                c.is_ascii_alphanumeric() || c == '_' || c == '-'
            }),
        ),
        ProviderFormat::Gemini => (
            "^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$",
            fits(name, 64, |c| {
                c.is_ascii_alphanumeric() || "_.:-".contains(c)
            }) && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'),
        ),
        ProviderFormat::Mcp => return None,
    };
    (!fits).then(|| {
        format!(
            "left out: {} takes tool names matching {pattern}, and it would refuse the whole request",
            format_name(format)
        )
    })
}

fn fits(name: &str, max: usize, allowed: impl Fn(char) -> bool) -> bool {
    !name.is_empty() && name.len() <= max && name.chars().all(allowed)
}

/// One tool in `format`'s shape (`None`: left out, the report says why).
fn one(format: ProviderFormat, tool: &ToolShape<'_>, report: &mut Report) -> Option<Value> {
    let input = object_root(tool.input_schema, report)?;
    Some(match format {
        ProviderFormat::Anthropic => {
            let mut out = Map::new();
            out.insert("name".into(), Value::from(tool.name));
            out.insert("description".into(), Value::from(tool.description));
            out.insert("input_schema".into(), input);
            if tool.defer_loading {
                out.insert("defer_loading".into(), Value::Bool(true));
            }
            Value::Object(out)
        }
        ProviderFormat::OpenaiResponses => {
            let parameters = strict::parameters(&input, report);
            json!({
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": parameters.schema,
                "strict": parameters.strict,
            })
        }
        ProviderFormat::OpenaiChat => {
            let parameters = strict::parameters(&input, report);
            json!({
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": parameters.schema,
                    "strict": parameters.strict,
                },
            })
        }
        ProviderFormat::Gemini => {
            let mut out = Map::new();
            out.insert("name".into(), Value::from(tool.name));
            out.insert("description".into(), Value::from(tool.description));
            if let Some(parameters) = gemini::parameters(&input, report) {
                out.insert("parameters".into(), parameters);
            }
            Value::Object(out)
        }
        ProviderFormat::Mcp => {
            let mut out = Map::new();
            out.insert("name".into(), Value::from(tool.name));
            out.insert("description".into(), Value::from(tool.description));
            out.insert("inputSchema".into(), input);
            if let Some(output) = tool.output_schema
                && output.get("type").is_some_and(|t| t == "object")
            {
                out.insert("outputSchema".into(), output.clone());
            }
            Value::Object(out)
        }
    })
}

/// The input schema with `type: "object"` at its root (added to a root that has only
/// `properties`; a root that is not an object schema leaves the tool out).
fn object_root(input: &Value, report: &mut Report) -> Option<Value> {
    let Value::Object(map) = input else {
        report.weaken(
            "",
            "left out: its input schema is not an object schema, which every provider requires",
        );
        return None;
    };
    match map.get("type") {
        Some(t) if t == "object" => Some(input.clone()),
        None if !map.contains_key("anyOf") && !map.contains_key("oneOf") => {
            let mut out = Map::new();
            out.insert("type".into(), Value::from("object"));
            out.extend(map.iter().map(|(k, v)| (k.clone(), v.clone())));
            Some(Value::Object(out))
        }
        _ => {
            report.weaken("", "left out: its input schema's root is not `type: \"object\"`, which every provider requires");
            None
        }
    }
}

#[cfg(test)]
mod tests;
