//! The method table: each method's handler (typed params in, wire results out) and how it
//! runs, declared together in [`router`].

use super::batch::Batch;
use super::errors::{invalid_params, rpc_error};
use super::hooks::{ClientApprover, ClientHook};
use super::progress::ProgressNotifier;
use super::reply::{DirectReply, Results};
use super::router::{Dispatch, Router};
use super::session::{Client, RequestSignal, Session};
use super::{client_tool, convert, params, permissions, shapes};
use crate::config;
use crate::pipeline::wrappers::ToolMetrics;
use crate::process::sandbox;
use crate::registry::Restriction;
use crate::tool::{AgentId, Signal, ToolExecutionInput};
use dsh_tools_protocol::{self as wire, CodeLanguage, error_codes};
use jsonrpsee_types::ErrorObjectOwned;
use serde_json::value::RawValue;
use std::collections::HashSet;
use std::sync::Arc;

type RpcResult<T> = Result<T, ErrorObjectOwned>;

/// The cancellation signal the server attached to a request.
fn signal_of(extensions: &jsonrpsee::Extensions) -> Signal {
    extensions
        .get::<RequestSignal>()
        .map(|s| Signal::new(s.0.clone()))
        .unwrap_or_default()
}

/// Builds the routes over one session. Methods that may wait on the client or on tools run
/// as tasks (`shutdown` too: it waits for the work in flight); every other method is
/// answered inline, in arrival order.
pub fn router(session: Arc<Session>) -> Router {
    let mut router = Router::new(session);
    macro_rules! method {
        ($name:literal, $dispatch:ident, $handler:expr) => {
            // Names are distinct literals, so registration cannot fail.
            let _ = router
                .route($name, Dispatch::$dispatch)
                .register_async_method($name, move |params, session, extensions| async move {
                    $handler(params::parse(&params), session, signal_of(&extensions)).await
                });
        };
    }
    // Methods answering with results: written in place when the server gave a slot.
    macro_rules! results_method {
        ($name:literal, $dispatch:ident, $handler:expr) => {
            let _ = router
                .route($name, Dispatch::$dispatch)
                .register_async_method($name, move |params, session, extensions| async move {
                    let results =
                        $handler(params::parse(&params), session, signal_of(&extensions)).await?;
                    Ok::<_, ErrorObjectOwned>(match extensions.get::<DirectReply>() {
                        Some(reply) => {
                            reply.answer(&results);
                            RawValue::NULL.to_owned()
                        }
                        None => results.to_json(),
                    })
                });
        };
    }
    method!("initialize", Inline, initialize);
    method!("shutdown", Task, shutdown);
    method!("tools/register", Inline, register);
    method!("tools/unregister", Inline, unregister);
    method!("tools/reserve", Inline, reserve);
    method!("tools/schemas", Inline, shapes::schemas);
    method!("tools/get", Inline, get);
    method!("tools/isAdmitted", Inline, is_admitted);
    method!("tools/restrict", Inline, restrict);
    method!("tools/presentAs", Inline, present_as);
    method!("agents/open", Inline, open_agent);
    method!("agents/close", Inline, close_agent);
    method!("tools/executionMode", Task, execution_mode);
    results_method!("tools/execute", Task, execute);
    // Read, run and answered call by call (`batch`): its params stay text.
    let _ = router
        .route("tools/executeBatch", Dispatch::Task)
        .register_async_method(
            "tools/executeBatch",
            |params, session, extensions| async move {
                let batch = Batch {
                    session: &session,
                    signal: signal_of(&extensions),
                    reply: extensions.get::<DirectReply>(),
                };
                let answered = batch.run(params.as_str().unwrap_or("{}")).await?;
                Ok::<_, ErrorObjectOwned>(answered.unwrap_or_else(|| RawValue::NULL.to_owned()))
            },
        );
    method!("tools/prompt", Inline, shapes::prompt);
    method!("tools/loaded", Inline, loaded);
    method!("tools/unload", Inline, unload);
    method!("tools/metrics", Inline, metrics);
    method!("tools/presentCall", Inline, present_call);
    method!("tools/presentResult", Inline, present_result);
    method!("hooks/subscribe", Inline, subscribe);
    method!("hooks/unsubscribe", Inline, unsubscribe);
    method!("mcp/status", Inline, mcp_status);
    method!("permissions/explain", Inline, permissions::explain);
    method!("permissions/grants", Inline, permissions::grants);
    method!("permissions/revoke", Inline, permissions::revoke);
    router
}

/// The framing's name in `initialize`'s result.
fn framing_name(framing: crate::transport::framing::Framing) -> &'static str {
    match framing {
        crate::transport::framing::Framing::Ndjson => "ndjson",
        _ => "lsp",
    }
}

/// Methods that make the host ask the client need the matching capability.
fn require(declared: bool, message: &str) -> RpcResult<()> {
    match declared {
        true => Ok(()),
        false => Err(rpc_error(
            error_codes::REQUEST_FAILED,
            message,
            Some("CLIENT_CAPABILITY"),
        )),
    }
}

fn agent(name: Option<String>) -> Option<AgentId> {
    name.map(AgentId::from)
}

/// Rejects a viewing scope that is not open.
pub(super) fn known_scope(session: &Session, name: Option<String>) -> RpcResult<Option<AgentId>> {
    match name {
        Some(name) if !session.host.runtime.registry().has_agent(&name) => {
            Err(crate::registry::RegistryError::UnknownAgent(name).into())
        }
        other => Ok(agent(other)),
    }
}

async fn initialize(
    params: RpcResult<wire::InitializeParams>,
    session: Arc<Session>,
    _: Signal,
) -> RpcResult<wire::InitializeResult> {
    let params = params?;
    if params.protocol_version != "1" {
        return Err(invalid_params(format!(
            "invalid params: protocolVersion: unsupported version {:?} (this host speaks \"1\")",
            params.protocol_version
        )));
    }
    let mut merged = session.base_config.clone();
    let base_origins = session.client().config.permissions.origins.clone();
    let over = params.config.unwrap_or(serde_json::Value::Null);
    let origins =
        crate::config::layers::permission_origins(&base_origins, &[("initialize.config", &over)]);
    if !over.is_null() {
        config::merge(&mut merged, over);
    }
    let mut config =
        config::parse(merged).map_err(|e| invalid_params(format!("invalid params: {e}")))?;
    config.permissions.origins = origins;
    let host = &session.host;
    // Before the MCP servers start: their `initialize` declares what is answered.
    host.mcp.set_elicitor(super::elicit::for_client(
        &session.peer,
        params.capabilities.elicitation,
    ));
    if params.capabilities.open_url {
        // Before `configure` starts the servers: their first 401 may already need it.
        let opener = super::open_url::ClientUrlOpener(session.peer.clone());
        host.mcp.set_url_opener(Some(Arc::new(opener)));
    }
    host.configure(&config)
        .map_err(|e| invalid_params(format!("invalid params: {e}")))?;
    if params.capabilities.approval {
        host.runtime
            .set_approver(Some(Arc::new(ClientApprover(session.peer.clone()))));
    }
    session
        .peer
        .set_cancel_grace_ms(config.pipeline.cancel_grace_ms);
    host.prewarm_in_background(config.tools.mode);
    session
        .dispatch_detail
        .set(params.capabilities.code_dispatch_events);
    if let Some(format) = params.capabilities.result_format {
        session.dispatch_detail.set_result_format(format);
    }
    // What automatic deferral chose depends on the servers' listings: wait for the first.
    let auto_deferred = match config.tools.auto_defer {
        Some(_) => {
            host.mcp.ready().await;
            host.runtime.registry().auto_deferred(None)
        }
        None => None,
    };
    if params.capabilities.progress {
        let notifier = ProgressNotifier::new(session.outbox.clone());
        // `initialize` is accepted once, so this is the only sink.
        if host.runtime.set_progress_sink(notifier.clone()).is_ok() {
            host.runtime.add_observer(None, notifier);
        }
    }
    let framing = session.framing().map_or("lsp", framing_name);
    session.initialized(Client {
        capabilities: params.capabilities,
        config: config.clone(),
    });
    Ok(wire::InitializeResult {
        protocol_version: "1".into(),
        server_info: wire::PeerInfo {
            name: "dsh-tools".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
        },
        capabilities: wire::HostCapabilities {
            modes: vec!["native".into(), "code".into(), "both".into()],
            code_languages: [CodeLanguage::Typescript, CodeLanguage::Python]
                .into_iter()
                .filter(|language| config.code_runtime.loads(*language))
                .map(|language| crate::code_mode::language_name(language).into())
                .collect(),
            framing: framing.into(),
            max_message_bytes: config.transport.max_message_bytes,
            sandbox: sandbox::families::report(&config, &sandbox::kernel_support()),
            auto_deferred,
            config,
        },
    })
}

/// New requests are refused from the moment `shutdown` arrives (the server loop moved the
/// lifecycle); the answer waits until every earlier request was answered, so a client that
/// sends `exit` after it loses nothing.
async fn shutdown(
    _: RpcResult<serde_json::Value>,
    session: Arc<Session>,
    _: Signal,
) -> RpcResult<()> {
    session.requests.drained_to(1).await;
    Ok(())
}

async fn register(
    params: RpcResult<wire::RegisterParams>,
    session: Arc<Session>,
    _: Signal,
) -> RpcResult<wire::RegistrationResult> {
    let params = params?;
    let declared = session.client().capabilities.execute_tools;
    require(
        declared,
        "tools/register registers client-executed tools: declare capabilities.executeTools in initialize",
    )?;
    let definition = client_tool::definition(params.tool, &session.peer, &session.progress_routes)?;
    let registration = session
        .host
        .runtime
        .register(definition, agent(params.agent))?;
    Ok(wire::RegistrationResult {
        registration: registration.to_string(),
    })
}

async fn unregister(
    params: RpcResult<wire::UnregisterParams>,
    session: Arc<Session>,
    _: Signal,
) -> RpcResult<()> {
    Ok(session
        .host
        .runtime
        .registry()
        .unregister(&params?.registration)?)
}

async fn reserve(
    params: RpcResult<wire::ReserveParams>,
    session: Arc<Session>,
    _: Signal,
) -> RpcResult<wire::RegistrationResult> {
    let params = params?;
    let registration = session
        .host
        .runtime
        .registry()
        .reserve(&params.name, agent(params.agent))?;
    Ok(wire::RegistrationResult {
        registration: registration.to_string(),
    })
}

/// `ToolSchema | null`, rendered without recursion.
async fn get(
    params: RpcResult<wire::NameParams>,
    session: Arc<Session>,
    _: Signal,
) -> RpcResult<Option<Box<RawValue>>> {
    let params = params?;
    let scope = known_scope(&session, params.agent)?;
    let Some(tool) = session
        .host
        .runtime
        .registry()
        .resolve(&params.name, scope.as_ref())
    else {
        return Ok(None);
    };
    if !tool.definition.role.is_code_entry() {
        return Ok(Some(convert::tool_schema(&tool)));
    }
    // `run_code` is described in the language of the scope asking, as its prompt is.
    let code = session.client().config.code_runtime.clone();
    let language = crate::code_mode::language_of(&session.host.runtime, scope.as_ref(), &code);
    Ok(Some(convert::run_code_schema(&tool, language)))
}

async fn is_admitted(
    params: RpcResult<wire::NameParams>,
    session: Arc<Session>,
    _: Signal,
) -> RpcResult<bool> {
    let params = params?;
    let scope = known_scope(&session, params.agent)?;
    Ok(session
        .host
        .runtime
        .registry()
        .is_admitted(&params.name, scope.as_ref()))
}

/// `tools/restrict` params with an optional `agent`: a restriction from no agent is the
/// registry's `NEEDS_AGENT` error (protocol section 3), not a bare `-32602`.
#[derive(serde::Deserialize)]
struct RestrictRequest {
    #[serde(default)]
    agent: Option<String>,
    #[serde(default)]
    allow: Option<Vec<String>>,
    #[serde(default)]
    deny: Option<Vec<String>>,
}

/// `tools/presentAs` params with an optional `agent`, for the same reason.
#[derive(serde::Deserialize)]
struct PresentAsRequest {
    #[serde(default)]
    agent: Option<String>,
    mode: wire::PresentationMode,
    #[serde(default)]
    language: Option<wire::CodeLanguage>,
}

async fn restrict(
    params: RpcResult<RestrictRequest>,
    session: Arc<Session>,
    _: Signal,
) -> RpcResult<wire::RegistrationResult> {
    let params = params?;
    let names = |list: Vec<String>| {
        list.into_iter()
            .map(Arc::from)
            .collect::<HashSet<Arc<str>>>()
    };
    let restriction = match (params.allow, params.deny) {
        (Some(allow), None) => Restriction::Allow(names(allow)),
        (None, Some(deny)) => Restriction::Deny(names(deny)),
        _ => return Err(crate::registry::RegistryError::EmptyFilter.into()),
    };
    let registration = session
        .host
        .runtime
        .registry()
        .restrict(agent(params.agent), restriction)?;
    Ok(wire::RegistrationResult {
        registration: registration.to_string(),
    })
}

async fn present_as(
    params: RpcResult<PresentAsRequest>,
    session: Arc<Session>,
    _: Signal,
) -> RpcResult<wire::RegistrationResult> {
    let params = params?;
    let registration = session.host.runtime.registry().present_as_in(
        agent(params.agent),
        params.mode,
        params.language,
    )?;
    Ok(wire::RegistrationResult {
        registration: registration.to_string(),
    })
}

async fn open_agent(
    params: RpcResult<wire::OpenAgentParams>,
    session: Arc<Session>,
    _: Signal,
) -> RpcResult<()> {
    let params = params?;
    Ok(session
        .host
        .runtime
        .registry()
        .open_agent(AgentId::from(params.agent), agent(params.parent))?)
}

async fn close_agent(
    params: RpcResult<wire::CloseAgentParams>,
    session: Arc<Session>,
    _: Signal,
) -> RpcResult<()> {
    Ok(session.host.runtime.close_agent(&params?.agent)?)
}

async fn execution_mode(
    params: RpcResult<wire::ExecutionModeParams>,
    session: Arc<Session>,
    _: Signal,
) -> RpcResult<wire::ExecutionMode> {
    let params = params?;
    let scope = known_scope(&session, params.agent)?;
    Ok(session
        .host
        .runtime
        .execution_mode(&params.name, &params.arguments, scope.as_ref())
        .await)
}

async fn execute(
    params: RpcResult<wire::ExecuteParams>,
    session: Arc<Session>,
    signal: Signal,
) -> RpcResult<Results> {
    let params = params?;
    let scope = known_scope(&session, params.agent)?;
    let mut arguments = params.arguments;
    shapes::strict_arguments(
        &session,
        params.format,
        &params.name,
        scope.as_ref(),
        &mut arguments,
    );
    let (call_id, name) = (params.call_id.clone(), params.name.clone());
    let input = ToolExecutionInput::new(params.call_id, params.name, arguments)
        .with_signal(signal)
        .with_agent(scope);
    let result = session.host.runtime.execute(input).await;
    Ok(match params.format {
        Some(format) => Results::Shaped {
            result,
            format,
            call_id,
            name,
        },
        None => Results::One(result),
    })
}

/// The deferred tools the scope has loaded, in the order found.
async fn loaded(
    params: RpcResult<wire::ScopeParams>,
    session: Arc<Session>,
    _: Signal,
) -> RpcResult<Vec<String>> {
    let scope = known_scope(&session, params?.agent)?;
    let loaded = session.host.runtime.registry().loaded(scope.as_ref());
    Ok(loaded.iter().map(|name| name.to_string()).collect())
}

/// Takes loaded tools out of the scope's prompt again (`tools/listChanged` when it changed).
async fn unload(
    params: RpcResult<wire::UnloadParams>,
    session: Arc<Session>,
    _: Signal,
) -> RpcResult<()> {
    let params = params?;
    let scope = known_scope(&session, params.agent)?;
    let names: Vec<Arc<str>> = params.names.into_iter().map(Arc::from).collect();
    session
        .host
        .runtime
        .registry()
        .unload(scope.as_ref(), &names);
    Ok(())
}

async fn metrics(
    _: RpcResult<serde_json::Value>,
    session: Arc<Session>,
    _: Signal,
) -> RpcResult<Vec<ToolMetrics>> {
    Ok(session.host.metrics())
}

async fn subscribe(
    params: RpcResult<wire::SubscribeParams>,
    session: Arc<Session>,
    _: Signal,
) -> RpcResult<wire::SubscribeResult> {
    let params = params?;
    let declared = session.client().capabilities.hooks;
    require(
        declared,
        "hooks/subscribe needs the hooks client capability (declare capabilities.hooks in initialize)",
    )?;
    let scope = known_scope(&session, params.agent)?;
    let mut subscriptions = session.subscriptions.lock();
    // Ids are never reused: an old id must not name a newer subscription.
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let subscription = format!(
        "hook:{}",
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let timeout_ms = session.client().config.pipeline.hook_timeout_ms;
    let hook = Arc::new(ClientHook {
        subscription: subscription.clone(),
        peer: session.peer.clone(),
        timeout_ms,
    });
    let runtime = &session.host.runtime;
    let id = match params.event {
        wire::HookEvent::PreExecute => runtime.add_pre_execute(params.order, scope, hook),
        wire::HookEvent::Guard => runtime.add_guard(params.order, scope, hook),
        wire::HookEvent::PostExecute => runtime.add_post_execute(params.order, scope, hook),
        wire::HookEvent::CodeDispatchLog => runtime.add_dispatch_log(params.order, scope, hook),
    };
    subscriptions.insert(subscription.clone(), id);
    Ok(wire::SubscribeResult { subscription })
}

async fn unsubscribe(
    params: RpcResult<wire::UnsubscribeParams>,
    session: Arc<Session>,
    _: Signal,
) -> RpcResult<()> {
    let subscription = params?.subscription;
    let id = session.subscriptions.lock().remove(&subscription);
    match id {
        Some(id) if session.host.runtime.remove_listener(id) => Ok(()),
        _ => Err(rpc_error(
            error_codes::REQUEST_FAILED,
            format!("unknown subscription \"{subscription}\""),
            Some("UNKNOWN_SUBSCRIPTION"),
        )),
    }
}

async fn present_call(
    params: RpcResult<wire::PresentCallParams>,
    session: Arc<Session>,
    _: Signal,
) -> RpcResult<Option<serde_json::Value>> {
    let params = params?;
    let scope = known_scope(&session, params.agent)?;
    Ok(crate::cards::call_card(
        &session.host.runtime,
        &params.name,
        &params.arguments,
        scope.as_ref(),
    ))
}

async fn present_result(
    params: RpcResult<wire::PresentResultParams>,
    session: Arc<Session>,
    _: Signal,
) -> RpcResult<Option<serde_json::Value>> {
    let params = params?;
    let scope = known_scope(&session, params.agent)?;
    let result = crate::tool::DurableResult {
        is_error: params.result.is_error,
        content: params.result.content,
        meta: params.meta.or(params.result.meta),
    };
    Ok(crate::cards::result_card(
        &session.host.runtime,
        &params.name,
        &params.arguments,
        &result,
        scope.as_ref(),
    ))
}

async fn mcp_status(
    _: RpcResult<serde_json::Value>,
    session: Arc<Session>,
    _: Signal,
) -> RpcResult<Vec<wire::McpServerStatus>> {
    Ok(session.host.mcp.status())
}
