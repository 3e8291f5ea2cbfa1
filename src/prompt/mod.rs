//! Prompt assembly (`tools/prompt`): what one scope's model is shown — function definitions
//! and the Code Mode sections — in a deterministic, prefix-cache-friendly form.

use crate::code_mode::{CodeMode, language_name, language_of};
use crate::codegen;
use crate::pipeline::ToolRuntime;
use crate::registry::{Presented, RegisteredTool};
use crate::tool::AgentId;
use dsh_tools_protocol::{
    AutoDeferral, CodeRuntimeConfig, PresentationMode, PromptAssembly, PromptSection, PromptTool,
};

/// The rule stated under `code` (order 99, before per-tool guidance).
pub const CODE_ONLY_RULE: &str = "Only `run_code` is callable directly. Every other tool in the SDK below is reachable \
only from inside a `run_code` program as `await tools.<name>(args)`; calling it directly fails.";

/// Why assembly was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PromptError {
    /// `toolOrder` names a tool this presentation does not contribute.
    #[error("tools.toolOrder lists \"{0}\", which the {1} presentation does not contribute")]
    OrderNotContributed(String, &'static str),
    /// The scope's Code Mode language has no runtime loaded in this host.
    #[error(
        "Code Mode language \"{0}\" has no runtime loaded in this host (codeRuntime.language / codeRuntime.languages)"
    )]
    NoRuntime(&'static str),
}

impl PromptError {
    /// The `data.code` string.
    pub fn code(&self) -> &'static str {
        match self {
            PromptError::OrderNotContributed(..) => "TOOL_ORDER",
            PromptError::NoRuntime(_) => "NO_CODE_RUNTIME",
        }
    }
}

/// Assembles the prompt of `agent`'s scope; a code presentation speaks the agent's
/// language, which must have a loaded runtime.
pub fn assemble(
    runtime: &ToolRuntime,
    agent: Option<&AgentId>,
    tool_order: &[String],
    code: &CodeRuntimeConfig,
) -> Result<PromptAssembly, PromptError> {
    let language = language_of(runtime, agent, code);
    let mode = runtime.registry().mode(agent);
    let mut sections = Vec::new();
    let mode_name = match mode {
        PresentationMode::Native => "native",
        PresentationMode::Code => "code",
        PresentationMode::Both => "both",
    };
    let presented = runtime.registry().presented(agent);
    let auto_deferred = runtime.registry().auto_deferred(agent);
    if let Some(auto) = auto_deferred
        .as_ref()
        .filter(|auto| !auto.servers.is_empty())
    {
        sections.push(PromptSection {
            name: "tools:auto-deferred".into(),
            order: 141,
            text: auto_deferred_section(auto),
        });
    }
    // The always-loaded part (which `toolOrder` arranges); loaded deferred tools follow it.
    let mut tools: Vec<PromptTool> = Vec::new();
    if mode != PresentationMode::Code {
        tools.extend(presented.always.iter().map(|t| prompt_tool(t)));
        tools.extend(presented.search.iter().map(|t| prompt_tool(t)));
    }
    if mode == PresentationMode::Native && !presented.deferred.is_empty() {
        sections.push(PromptSection {
            name: "tools:deferred".into(),
            order: 140,
            text: deferred_section(&presented),
        });
    }
    if mode != PresentationMode::Native {
        if !code.loads(language) {
            return Err(PromptError::NoRuntime(language_name(language)));
        }
        let rule = if mode == PresentationMode::Code {
            CODE_ONLY_RULE
        } else {
            ""
        };
        sections.push(PromptSection {
            name: "tools:code-only".into(),
            order: 99,
            text: rule.into(),
        });
        sections.push(PromptSection {
            name: "tools:sdk".into(),
            order: 150,
            text: CodeMode::sdk_in(runtime, agent, language),
        });
        if let Some(entry) = runtime.registry().code_entry(agent) {
            tools.push(PromptTool {
                name: entry.definition.name.to_string(),
                description: codegen::run_code_description_in(language, ""),
                input_schema: codegen::run_code_input_schema_in(language),
            });
        }
    }
    let known = runtime.registry().known_names(agent);
    let mut ordered = Vec::with_capacity(tools.len());
    for name in tool_order {
        match tools.iter().position(|t| &t.name == name) {
            Some(index) => ordered.push(tools.remove(index)),
            // A reserved, restricted-away or deferred name may be listed; it just contributes
            // nothing (a loaded deferred tool keeps its place after the always-loaded ones).
            None if mode != PresentationMode::Code
                && (known.contains(name.as_str()) || listable_host_tool(runtime, name)) => {}
            None => return Err(PromptError::OrderNotContributed(name.clone(), mode_name)),
        }
    }
    ordered.extend(tools);
    if mode != PresentationMode::Code {
        ordered.extend(presented.loaded.iter().map(|t| prompt_tool(t)));
    }
    Ok(PromptAssembly {
        sections,
        tools: ordered,
        auto_deferred,
    })
}

/// A host tool that a native listing may show (present or not at the moment).
fn listable_host_tool(runtime: &ToolRuntime, name: &str) -> bool {
    let host = runtime.registry().host_tool(name);
    host.is_some_and(|tool| tool.definition.role.is_listable())
}

/// One tool as a function definition.
fn prompt_tool(tool: &RegisteredTool) -> PromptTool {
    PromptTool {
        name: tool.definition.name.to_string(),
        description: tool.definition.description.clone(),
        input_schema: tool.definition.input.json_schema().clone(),
    }
}

/// The heading that names the deferred tools of a native prompt (order 140).
pub const DEFERRED_HEADING: &str = "## Deferred tools\n\n\
These tools are available, but their definitions are not in your tool list. To use one, call \
`search_tools` with a few keywords for what you want to do (or `select:<name>[,<name>]` for \
names below): it returns the best matches' definitions and loads them, so you can call them \
directly from then on.\n";

/// The `tools:deferred` section: the heading, then every deferred tool's name (loaded ones
/// too, so loading leaves the system prompt unchanged), one per line in byte order.
fn deferred_section(presented: &Presented) -> String {
    let mut text = String::from(DEFERRED_HEADING);
    for tool in &presented.deferred {
        text.push_str("\n- ");
        text.push_str(&codegen::one_line(&tool.definition.name));
    }
    text
}

/// The `tools:auto-deferred` section (order 141): which MCP servers automatic deferral
/// deferred and why, so the model knows they exist beyond its tool list.
fn auto_deferred_section(auto: &AutoDeferral) -> String {
    let servers: Vec<String> = auto
        .servers
        .iter()
        .map(|server| {
            format!(
                "`{}` ({} tools, {} tokens)",
                server.name, server.tools, server.tokens
            )
        })
        .collect();
    format!(
        "## Automatically deferred MCP servers\n\nThe tool definitions came to {} tokens, over this \
host's budget of {} (`tools.autoDefer`), so the tools of these MCP servers were deferred, the largest \
first, leaving {} tokens: {}. Their tools are available: find them as described for deferred tools.",
        auto.tokens_before,
        auto.above_tokens,
        auto.tokens_after,
        servers.join(", ")
    )
}

mod provider;
pub use provider::{ProviderPromptError, assemble_for, schemas_for};
