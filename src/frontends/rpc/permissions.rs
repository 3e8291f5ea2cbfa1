//! `permissions/explain`, `permissions/grants` and `permissions/revoke`: how the host would
//! decide a call (without running it), and the grants users gave through `client/approve`.

use super::errors::invalid_params;
use super::session::Session;
use crate::policy::Book;
use crate::policy::book::wire_decision;
use crate::tool::Signal;
use dsh_tools_protocol::{self as wire, HostConfig};
use jsonrpsee_types::ErrorObjectOwned;
use serde_json::{Value, json};
use std::sync::Arc;

type RpcResult<T> = Result<T, ErrorObjectOwned>;

fn book(session: &Session) -> RpcResult<Arc<Book>> {
    session
        .host
        .book()
        .ok_or_else(|| invalid_params("the host is not configured yet: call initialize first"))
}

/// The decision record of one call, the grants it used, the hooks it would meet, whether an
/// ask would reach an approver, and the sandbox a command would get.
pub async fn explain(
    params: RpcResult<wire::ExplainParams>,
    session: Arc<Session>,
    _: Signal,
) -> RpcResult<wire::ExplainResult> {
    let params = params?;
    let agent = super::methods::known_scope(&session, params.agent)?;
    let runtime = &session.host.runtime;
    let decision = book(&session)?.explain(&params.name, &params.arguments, agent.as_ref());
    let hooks = runtime
        .listeners_for(agent.as_ref())
        .into_iter()
        .filter(|(_, name, _)| name != "permissions")
        .map(|(event, name, order)| wire::ExplainedHook {
            event: event.to_owned(),
            name,
            order,
        })
        .collect();
    let known = runtime
        .registry()
        .resolve(&params.name, agent.as_ref())
        .is_some();
    Ok(wire::ExplainResult {
        grants: Book::grants_used(&decision),
        permission: wire_decision(&decision),
        hooks,
        approver: runtime.has_approver(),
        sandbox: command_sandbox(&session.client().config, &params.name, &params.arguments),
        known,
    })
}

/// For `bash`: the sandbox its commands get (its own over the top-level one), or that this
/// call asks to run outside it.
fn command_sandbox(config: &HostConfig, name: &str, arguments: &Value) -> Option<Value> {
    let bash = config.builtins.bash.as_ref().filter(|_| name == "bash")?;
    if arguments.get("dangerouslyDisableSandbox") == Some(&Value::Bool(true)) {
        return Some(
            json!({ "mode": "off", "escalation": "dangerouslyDisableSandbox: the user is asked" }),
        );
    }
    let sandbox = bash.sandbox.as_ref().unwrap_or(&config.sandbox);
    serde_json::to_value(sandbox).ok()
}

/// Every grant of this host.
pub async fn grants(
    _: RpcResult<Value>,
    session: Arc<Session>,
    _: Signal,
) -> RpcResult<Vec<wire::PermissionGrant>> {
    Ok(book(&session)?.grants())
}

/// Removes one grant (an `always` one from its file too).
pub async fn revoke(
    params: RpcResult<wire::RevokeParams>,
    session: Arc<Session>,
    _: Signal,
) -> RpcResult<wire::RevokeResult> {
    let params = params?;
    let revoked = book(&session)?
        .revoke(&params.id)
        .map_err(|e| invalid_params(format!("invalid params: {e}")))?;
    Ok(wire::RevokeResult { revoked })
}
