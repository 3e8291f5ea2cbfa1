//! The methods that take a provider `format` (issue 45): `tools/prompt` and `tools/schemas`
//! in a model provider's shape, and the way back from OpenAI's strict schemas for
//! `tools/execute`. The shaping itself is `crate::prompt::provider` and `crate::providers`.

use super::convert;
use super::errors::{invalid_params, rpc_error};
use super::methods::known_scope;
use super::session::Session;
use crate::tool::{AgentId, Signal};
use dsh_tools_protocol::{self as wire, error_codes};
use jsonrpsee_types::ErrorObjectOwned;
use serde_json::value::RawValue;
use std::sync::Arc;

type RpcResult<T> = Result<T, ErrorObjectOwned>;

/// Drops the `null`s a strict OpenAI model sends for what it leaves out
/// (`providers::drop_strict_nulls`), for a call made with an OpenAI `format`.
pub(super) fn strict_arguments(
    session: &Session,
    format: Option<wire::ProviderFormat>,
    name: &str,
    scope: Option<&AgentId>,
    arguments: &mut serde_json::Value,
) {
    let strict = matches!(
        format,
        Some(wire::ProviderFormat::OpenaiResponses | wire::ProviderFormat::OpenaiChat)
    );
    if !strict {
        return;
    }
    if let Some(tool) = session.host.runtime.registry().resolve(name, scope) {
        crate::providers::drop_strict_nulls(tool.definition.input.json_schema(), arguments);
    }
}

/// `ToolSchema[]`, rendered without recursion (see [`convert::tool_schema`]); with a
/// `format`, `ProviderTools`.
pub(super) async fn schemas(
    params: RpcResult<wire::SchemasParams>,
    session: Arc<Session>,
    _: Signal,
) -> RpcResult<Box<RawValue>> {
    let params = params?;
    let scope = known_scope(&session, params.agent)?;
    if let Some(format) = params.format {
        let shaped = crate::prompt::schemas_for(&session.host.runtime, scope.as_ref(), format);
        let mut text = String::new();
        crate::json::append_serialized(&mut text, &shaped);
        return Ok(convert::raw_json(text));
    }
    let visible = session.host.runtime.registry().visible(scope.as_ref());
    let schemas: Vec<Box<RawValue>> = visible.iter().map(|t| convert::tool_schema(t)).collect();
    Ok(convert::raw_array(&schemas))
}

/// `tools/prompt`: the host's own shape, or a provider's with `format`.
#[derive(Clone, serde::Serialize)]
#[serde(untagged)]
pub(super) enum PromptAnswer {
    Assembly(wire::PromptAssembly),
    Provider(wire::ProviderPrompt),
}

pub(super) async fn prompt(
    params: RpcResult<wire::PromptParams>,
    session: Arc<Session>,
    _: Signal,
) -> RpcResult<PromptAnswer> {
    let params = params?;
    let scope = known_scope(&session, params.agent)?;
    let client = session.client();
    let refused = |e: crate::prompt::PromptError| {
        rpc_error(error_codes::REQUEST_FAILED, e.to_string(), Some(e.code()))
    };
    let Some(format) = params.format else {
        if params.native_tool_search.is_some() {
            return Err(invalid_params(
                "invalid params: nativeToolSearch is Anthropic's tool search: it needs format \"anthropic\"",
            ));
        }
        return crate::prompt::assemble(
            &session.host.runtime,
            scope.as_ref(),
            &client.config.tools.tool_order,
            &client.config.code_runtime,
        )
        .map(PromptAnswer::Assembly)
        .map_err(refused);
    };
    crate::prompt::assemble_for(
        &session.host.runtime,
        scope.as_ref(),
        &client.config.tools.tool_order,
        &client.config.code_runtime,
        format,
        params.native_tool_search,
    )
    .map(PromptAnswer::Provider)
    .map_err(|e| match e {
        crate::prompt::ProviderPromptError::Prompt(e) => refused(e),
        other => invalid_params(format!("invalid params: {other}")),
    })
}
