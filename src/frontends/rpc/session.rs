//! Per-connection state the methods share, grouped by concern: the host it serves, the
//! way back to the client, what `initialize` settled, the lifecycle, and the requests in
//! flight.

use super::lifecycle::LifecycleGate;
use super::list_changed::ListChanges;
use super::notifiers::{CodeNotifier, DispatchDetail, ExitNotifier, ResultNotifier};
use super::progress::ProgressRoutes;
use super::requests::InFlight;
use crate::host::Host;
use crate::pipeline::ListenerId;
use crate::transport::framing::Framing;
use crate::transport::{Outbox, Peer};
use dsh_tools_protocol::{ClientCapabilities, HostConfig};
use parking_lot::{Mutex, RwLock, RwLockReadGuard};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use tokio_util::sync::CancellationToken;

/// The cancellation signal of one incoming request (found in the method's extensions).
#[derive(Clone, Debug)]
pub struct RequestSignal(pub CancellationToken);

/// What `initialize` settled (defaults before it).
#[derive(Default)]
pub struct Client {
    /// What the client declared it supports.
    pub capabilities: ClientCapabilities,
    /// The configuration in force: `--config` with `initialize.config` merged over it.
    pub config: HostConfig,
}

/// Shared state of one connection.
pub struct Session {
    /// The host this connection serves.
    pub host: Host,
    /// Requests to the client (client tools, hooks, approvals) and their answers.
    pub peer: Arc<Peer>,
    /// The connection's write side.
    pub outbox: Outbox,
    /// Client-tool calls a `tools/reportProgress` may name.
    pub progress_routes: Arc<ProgressRoutes>,
    /// What the client is sent of sub-calls (`capabilities.codeDispatchEvents`).
    pub dispatch_detail: Arc<DispatchDetail>,
    /// `--config FILE` as JSON (`initialize.config` merges over it).
    pub base_config: serde_json::Value,
    /// Which requests are accepted now.
    pub lifecycle: LifecycleGate,
    /// The client's requests in flight.
    pub requests: InFlight,
    /// Hook subscriptions by id (`hooks/subscribe`).
    pub subscriptions: Mutex<HashMap<String, ListenerId>>,
    /// `tools/listChanged`, coalesced per scope.
    pub list_changes: ListChanges,
    client: RwLock<Client>,
    framing: OnceLock<Framing>,
}

impl Session {
    /// A fresh session writing through `outbox`, its host built from `config` (applied in
    /// full at `initialize`).
    pub fn new(outbox: Outbox, base_config: serde_json::Value, config: HostConfig) -> Arc<Self> {
        let host = Host::new(&config);
        let dispatch_detail = Arc::new(DispatchDetail::default());
        host.code.set_events(Arc::new(CodeNotifier {
            outbox: outbox.clone(),
            detail: dispatch_detail.clone(),
        }));
        host.exec.set_events(Some(Arc::new(ExitNotifier {
            outbox: outbox.clone(),
        })));
        let list_changes = ListChanges::new(outbox.clone());
        let announcer = list_changes.clone();
        host.runtime
            .registry()
            .on_change(Arc::new(move |agent| announcer.changed(agent)));
        host.runtime.add_observer(
            None,
            Arc::new(ResultNotifier {
                outbox: outbox.clone(),
                detail: dispatch_detail.clone(),
            }),
        );
        Arc::new(Session {
            host,
            peer: Arc::new(Peer::new(outbox.clone(), 4096)),
            outbox,
            progress_routes: Arc::default(),
            dispatch_detail,
            base_config,
            lifecycle: LifecycleGate::default(),
            requests: InFlight::default(),
            subscriptions: Mutex::new(HashMap::new()),
            list_changes,
            client: RwLock::new(Client {
                capabilities: ClientCapabilities::default(),
                config,
            }),
            framing: OnceLock::new(),
        })
    }

    /// Queues the response to a client request, after the registry changes still waiting
    /// to be announced (the request may have made them).
    pub fn respond(&self, response: Vec<u8>) -> bool {
        self.list_changes.flush();
        self.outbox.send(response)
    }

    /// What `initialize` settled (the `--config` configuration before it).
    pub fn client(&self) -> RwLockReadGuard<'_, Client> {
        self.client.read()
    }

    /// Records what `initialize` settled and opens the connection to every method.
    pub fn initialized(&self, client: Client) {
        *self.client.write() = client;
        self.lifecycle.initialized();
    }

    /// The input framing, once the first message decided it.
    pub fn framing(&self) -> Option<Framing> {
        self.framing.get().copied()
    }

    /// Records the framing the first message was read in.
    pub fn set_framing(&self, framing: Framing) {
        let _ = self.framing.set(framing);
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A session over a writer nobody reads (for tests of the table itself).
    pub fn session() -> Arc<Session> {
        let (outbox, _writer) = crate::transport::spawn_writer(tokio::io::sink(), Framing::Lsp);
        Session::new(outbox, serde_json::json!({}), HostConfig::default())
    }
}
