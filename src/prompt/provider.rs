//! `tools/prompt` and `tools/schemas` in a model provider's shape: the same assembly,
//! its tools shaped by `providers`, with what each shape weakened. `anthropic` with a
//! native tool search lists the deferred tools with `defer_loading: true` beside
//! Anthropic's tool search tool, instead of `search_tools` and the deferred section.

use super::{PromptError, assemble};
use crate::pipeline::ToolRuntime;
use crate::providers::{self, NativeToolSearch, ProviderFormat, ToolShape};
use crate::tool::AgentId;
use dsh_tools_protocol::{
    CodeRuntimeConfig, PresentationMode, PromptTool, ProviderPrompt, ProviderTools,
};

/// Why a provider prompt was refused.
#[derive(Debug, thiserror::Error)]
pub enum ProviderPromptError {
    /// The assembly itself was refused.
    #[error(transparent)]
    Prompt(#[from] PromptError),
    /// `nativeToolSearch` names Anthropic's tool search for another provider.
    #[error(
        "nativeToolSearch is Anthropic's tool search: it needs format \"anthropic\", not \"{0}\""
    )]
    NativeSearchNeedsAnthropic(&'static str),
}

/// The prompt of `agent`'s scope with its tools in `format`'s shape.
pub fn assemble_for(
    runtime: &ToolRuntime,
    agent: Option<&AgentId>,
    tool_order: &[String],
    code: &CodeRuntimeConfig,
    format: ProviderFormat,
    native: Option<NativeToolSearch>,
) -> Result<ProviderPrompt, ProviderPromptError> {
    if native.is_some() && format != ProviderFormat::Anthropic {
        return Err(ProviderPromptError::NativeSearchNeedsAnthropic(
            providers::format_name(format),
        ));
    }
    let mut assembly = assemble(runtime, agent, tool_order, code)?;
    let registry = runtime.registry();
    let presented = registry.presented(agent);
    let native = native.filter(|_| {
        registry.mode(agent) != PresentationMode::Code && !presented.deferred.is_empty()
    });
    let mut deferred: Vec<PromptTool> = Vec::new();
    if native.is_some() {
        // Anthropic's tool search replaces ours: the deferred tools are listed with
        // `defer_loading`, and neither `search_tools` nor its section is shown.
        let search = presented
            .search
            .as_ref()
            .map(|t| t.definition.name.to_string());
        assembly
            .tools
            .retain(|tool| Some(&tool.name) != search.as_ref());
        assembly
            .sections
            .retain(|section| section.name != "tools:deferred");
        deferred = presented
            .unloaded()
            .map(|tool| PromptTool {
                name: tool.definition.name.to_string(),
                description: tool.definition.description.clone(),
                input_schema: tool.definition.input.json_schema().clone(),
            })
            .collect();
    }
    let shapes: Vec<ToolShape<'_>> = assembly
        .tools
        .iter()
        .map(|tool| (tool, false))
        .chain(deferred.iter().map(|tool| (tool, true)))
        .map(|(tool, defer_loading)| ToolShape {
            name: &tool.name,
            description: &tool.description,
            input_schema: &tool.input_schema,
            output_schema: None,
            defer_loading,
        })
        .collect();
    let mut shaped = providers::shape(format, &shapes);
    let tool_search = native.map(providers::tool_search_tool);
    if let Some(search) = &tool_search {
        shaped.tools.insert(0, search.clone());
    }
    Ok(ProviderPrompt {
        format,
        sections: assembly.sections,
        tools: shaped.tools,
        weakened: shaped.weakened,
        tool_search,
        auto_deferred: assembly.auto_deferred,
    })
}

/// The catalog of `agent`'s scope (what `tools/schemas` lists) in `format`'s shape.
pub fn schemas_for(
    runtime: &ToolRuntime,
    agent: Option<&AgentId>,
    format: ProviderFormat,
) -> ProviderTools {
    let visible = runtime.registry().visible(agent);
    let shapes: Vec<ToolShape<'_>> = visible
        .iter()
        .map(|tool| ToolShape {
            name: &tool.definition.name,
            description: &tool.definition.description,
            input_schema: tool.definition.input.json_schema(),
            output_schema: Some(&tool.definition.output.json_schema),
            defer_loading: false,
        })
        .collect();
    let shaped = providers::shape(format, &shapes);
    ProviderTools {
        format,
        tools: shaped.tools,
        weakened: shaped.weakened,
    }
}
