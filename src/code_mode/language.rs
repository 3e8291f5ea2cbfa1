//! Which Code Mode language a scope speaks.

use crate::pipeline::ToolRuntime;
use crate::tool::AgentId;
use dsh_tools_protocol::{CodeLanguage, CodeRuntimeConfig};

/// The wire spelling of a Code Mode language.
pub fn language_name(language: CodeLanguage) -> &'static str {
    match language {
        CodeLanguage::Typescript => "typescript",
        CodeLanguage::Python => "python",
    }
}

/// The Code Mode language of `agent`: its `presentAs` language, else the configured default.
pub fn language_of(
    runtime: &ToolRuntime,
    agent: Option<&AgentId>,
    code: &CodeRuntimeConfig,
) -> CodeLanguage {
    runtime.registry().language(agent).unwrap_or(code.language)
}
