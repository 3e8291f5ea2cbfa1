//! The `search_tools` definition: arguments, the search or `select:` lookup, loading, the
//! result value (with declarations inside a program) and its rendering for the model.

use super::Discovery;
use crate::code_mode::sdk_tool;
use crate::codegen;
use crate::json;
use crate::registry::RegisteredTool;
use crate::tool::{
    BodyOutput, ContentBlock, DefinitionError, HarnessCode, HostRole, Presence, Render, Renderer,
    ToolDefinition, ToolError, ToolExecution, ToolRole, ToolRunContext,
};
use dsh_tools_protocol::CodeLanguage;
use futures::future::BoxFuture;
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// Matches returned when the call names no `limit`.
pub const DEFAULT_LIMIT: u64 = 5;
/// The largest `limit`.
pub const MAX_LIMIT: u64 = 20;

/// What the model reads about `search_tools` (natively and in the SDK).
pub const SEARCH_DESCRIPTION: &str = "Find deferred tools (available, but not described in \
full) by keywords for what you want to do or part of a tool's name, and load the best \
matches: each comes back with its definition (inside a `run_code` program: its declaration \
as text, plus its schemas), and loaded tools are presented in full from the next turn on. \
`select:<name>[,<name>]` as the query loads tools by exact name. `limit` is 1 to 20 \
(default 5).";

/// The discovery tool's name: the one place it is spelled.
pub const SEARCH_TOOLS: &str = "search_tools";

/// `search_tools`' role: reserved, present while a scope sees a deferred tool, and a binding.
const ROLE: ToolRole = ToolRole::Host(HostRole {
    purpose: "tool discovery",
    presence: Presence::WhileDeferred,
    code_entry: false,
});

/// The `search_tools` definition over `discovery`.
pub(super) fn definition(discovery: Arc<Discovery>) -> Result<ToolDefinition, DefinitionError> {
    ToolDefinition::builder(SEARCH_TOOLS)
        .role(ROLE)
        .description(SEARCH_DESCRIPTION)
        .validated_input_schema(json!({
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "Keywords (what the tool should do, or part of its name), or select:<name>[,<name>] for exact names."
                },
                "limit": {
                    "type": "integer",
                    "description": "How many matches at most: 1 to 20 (default 5)."
                }
            },
            "required": ["query"],
            "additionalProperties": false
        }))
        .output_json_schema(json!({
            "type": "object",
            "properties": {
                "tools": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": { "type": "string" },
                            "description": { "type": "string" },
                            "inputSchema": {},
                            "outputSchema": {},
                            "declaration": { "type": "string" }
                        },
                        "required": ["name", "description", "inputSchema"],
                        "additionalProperties": false
                    }
                },
                "hint": { "type": "string" }
            },
            "required": ["tools"],
            "additionalProperties": false
        }))
        .concurrency(crate::tool::Concurrency::Parallel)
        .render(Render::Custom(Arc::new(MatchesRenderer)))
        .body(move |ctx: ToolRunContext| {
            let discovery = discovery.clone();
            async move { search(&discovery, &ctx) }
        })
}

/// `invalid arguments: <why>` (`INVALID_ARGS`), as schema violations read.
fn invalid(why: impl std::fmt::Display) -> ToolError {
    ToolError::harness(
        HarnessCode::InvalidArgs,
        format!("invalid arguments: {why}"),
    )
}

fn search(discovery: &Discovery, ctx: &ToolRunContext) -> Result<BodyOutput, ToolError> {
    let registry = discovery
        .registry
        .upgrade()
        .ok_or_else(|| ToolError::new("the tool runtime is shutting down"))?;
    let arguments = ctx.arguments();
    let query = arguments
        .get("query")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim();
    if query.is_empty() {
        return Err(invalid("\"query\" must be a non-empty string"));
    }
    let limit = match arguments.get("limit") {
        None => DEFAULT_LIMIT,
        Some(limit) => limit
            .as_u64()
            .filter(|n| (1..=MAX_LIMIT).contains(n))
            .ok_or_else(|| {
                invalid(format!(
                    "\"limit\" must be an integer from 1 to {MAX_LIMIT}"
                ))
            })?,
    };
    let scope = ctx.execution.agent.as_ref();
    let view = registry.view(scope);
    let found: Vec<Arc<RegisteredTool>> = match query.strip_prefix("select:") {
        Some(list) => select(&view, list)?,
        None => {
            let index = discovery.index(&registry, scope, &view);
            let limit = usize::try_from(limit).unwrap_or(usize::MAX);
            index
                .search(query, limit)
                .into_iter()
                .map(|document| index.tools[document].clone())
                .collect()
        }
    };
    let deferred: Vec<Arc<str>> = found
        .iter()
        .map(|tool| tool.definition.name.clone())
        .filter(|name| view.find(name).is_some_and(|i| view.is_deferred(i)))
        .collect();
    registry.load(scope, &deferred);
    // Inside a program (only Code Mode sets a parent) matches carry their declarations.
    let language = ctx.execution.parent.map(|_| {
        registry
            .language(scope)
            .unwrap_or_else(|| discovery.code.default_language())
    });
    let tools: Vec<Value> = found.iter().map(|tool| entry(tool, language)).collect();
    let mut value = Map::new();
    let empty = tools.is_empty();
    value.insert("tools".into(), Value::Array(tools));
    if empty {
        value.insert("hint".into(), Value::String(hint(query)));
    }
    Ok(BodyOutput::from(Value::Object(value)))
}

/// The visible tools named by `select:<name>[,<name>]`, in the order named (each once).
fn select(
    view: &crate::registry::ScopeView,
    list: &str,
) -> Result<Vec<Arc<RegisteredTool>>, ToolError> {
    let names: Vec<&str> = list
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .collect();
    if names.is_empty() {
        return Err(invalid(
            "\"query\" select: names no tool (write select:<name>[,<name>])",
        ));
    }
    let unknown: Vec<String> = names
        .iter()
        .filter(|name| view.find(name).is_none())
        .map(|name| json::render_compact(&Value::String((*name).to_owned())))
        .collect();
    match unknown.as_slice() {
        [] => {}
        [one] => return Err(invalid(format!("\"query\" selects unknown tool {one}"))),
        many => {
            let many = many.join(", ");
            return Err(invalid(format!("\"query\" selects unknown tools {many}")));
        }
    }
    let mut found: Vec<Arc<RegisteredTool>> = Vec::with_capacity(names.len());
    for name in names {
        if let Some(index) = view.find(name)
            && !found.iter().any(|tool| &*tool.definition.name == name)
        {
            found.push(view.tools()[index].clone());
        }
    }
    Ok(found)
}

/// One match: `{ name, description, inputSchema }`, and inside a program in `language`
/// also `outputSchema` and `declaration`.
fn entry(tool: &RegisteredTool, language: Option<CodeLanguage>) -> Value {
    let definition = &tool.definition;
    let mut entry = Map::new();
    entry.insert("name".into(), Value::from(definition.name.to_string()));
    entry.insert(
        "description".into(),
        Value::from(definition.description.clone()),
    );
    entry.insert("inputSchema".into(), definition.input.json_schema().clone());
    if let Some(language) = language {
        entry.insert(
            "outputSchema".into(),
            definition.output.presented_schema().clone(),
        );
        let declaration = match language {
            CodeLanguage::Typescript => codegen::typescript_declaration(&sdk_tool(tool)),
            CodeLanguage::Python => codegen::python_declaration(&sdk_tool(tool)),
        };
        entry.insert("declaration".into(), Value::from(declaration));
    }
    Value::Object(entry)
}

/// The one line a search that found nothing answers with.
fn hint(query: &str) -> String {
    let quoted = json::render_compact(&Value::String(query.to_owned()));
    format!(
        "No deferred tool matches {quoted}: try other or fewer keywords (what the tool does, or part of its name), or select:<name> for a name you know."
    )
}

/// The matches as the model reads them: a line saying they are loaded, then each one's
/// definition as compact JSON (`{ name, description, inputSchema }`); the hint when none.
struct MatchesRenderer;

impl Renderer for MatchesRenderer {
    fn render(
        &self,
        _: &ToolExecution,
        _: &str,
        value: &Value,
    ) -> BoxFuture<'static, Result<Vec<ContentBlock>, ToolError>> {
        let text = render_matches(value);
        Box::pin(async move { Ok(vec![ContentBlock::text(text)]) })
    }
}

fn render_matches(value: &Value) -> String {
    let tools = value
        .get("tools")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if tools.is_empty() {
        return value
            .get("hint")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
    }
    let count = match tools.len() {
        1 => "1 tool".to_owned(),
        n => format!("{n} tools"),
    };
    let mut text = format!(
        "Found {count}, now loaded: call them directly (they are listed with your tools from the next turn on).\n"
    );
    for tool in tools {
        let mut definition = Map::new();
        for key in ["name", "description", "inputSchema"] {
            if let Some(field) = tool.get(key) {
                definition.insert(key.into(), field.clone());
            }
        }
        text.push('\n');
        text.push_str(&json::render_compact(&Value::Object(definition)));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_render_as_definitions_and_no_match_as_the_hint() {
        let value = json!({ "tools": [
            { "name": "a", "description": "A.", "inputSchema": { "type": "object" }, "declaration": "x" },
            { "name": "b", "description": "", "inputSchema": {} }
        ] });
        assert_eq!(
            render_matches(&value),
            "Found 2 tools, now loaded: call them directly (they are listed with your tools from the next turn on).\n\n{\"name\":\"a\",\"description\":\"A.\",\"inputSchema\":{\"type\":\"object\"}}\n{\"name\":\"b\",\"description\":\"\",\"inputSchema\":{}}"
        );
        let none = json!({ "tools": [], "hint": hint("zz \"q\"") });
        assert_eq!(
            render_matches(&none),
            "No deferred tool matches \"zz \\\"q\\\"\": try other or fewer keywords (what the tool does, or part of its name), or select:<name> for a name you know."
        );
    }
}
