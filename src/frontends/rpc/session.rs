//! Per-connection state the methods share: lifecycle, client capabilities, in-flight
//! requests (for `$/cancelRequest`), the runtime and the peer.

use super::convert;
use super::progress::ProgressRoutes;
use crate::code_mode::{CodeEvents, CodeMode, DispatchEnd, DispatchStart, stream_name};
use crate::pipeline::hooks::ResultObserver;
use crate::pipeline::{ListenerId, ToolRuntime};
use crate::policy::PolicySet;
use crate::runtime::LogStream;
use crate::tool::{ToolExecution, ToolExecutionResult};
use crate::transport::{OBSERVED_HIGH_WATER, Outbox, Peer};
use dsh_tools_protocol::{
    ClientCapabilities, CodeDispatchEvents, CodeDispatchStartNotification,
    CodeDispatchStartSummary, CodeDispatchSummary, CodeLogNotification, DispatchTime, HostConfig,
    ListChangedNotification,
};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use tokio_util::sync::CancellationToken;

/// Where the connection is in the LSP-style lifecycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lifecycle {
    /// Only `initialize` (and `exit`) are accepted.
    Uninitialized,
    /// Serving.
    Initialized,
    /// `shutdown` answered; only `exit` is accepted.
    ShutDown,
}

/// The cancellation signal of one incoming request (found in the method's extensions).
#[derive(Clone, Debug)]
pub struct RequestSignal(pub CancellationToken);

/// Shared state of one connection.
pub struct Session {
    pub runtime: Arc<ToolRuntime>,
    pub code: Arc<CodeMode>,
    pub policy: Mutex<Option<PolicySet>>,
    pub subscriptions: Mutex<HashMap<String, ListenerId>>,
    pub mcp: crate::mcp::McpHost,
    pub peer: Arc<Peer>,
    /// The connection's write side (for notifiers installed at `initialize`).
    pub outbox: Outbox,
    /// Client-tool calls a `tools/reportProgress` may name.
    pub progress_routes: Arc<ProgressRoutes>,
    pub base_config: serde_json::Value,
    pub config: Mutex<HostConfig>,
    pub capabilities: Mutex<ClientCapabilities>,
    /// What the client is sent of sub-calls (`capabilities.codeDispatchEvents`).
    pub dispatch_detail: Arc<DispatchDetail>,
    pub lifecycle: Mutex<Lifecycle>,
    pub framing: Mutex<String>,
    in_flight: Mutex<HashMap<String, CancellationToken>>,
    settled: tokio::sync::Notify,
}

impl Session {
    /// A fresh session writing through `outbox`.
    pub fn new(outbox: Outbox, base_config: serde_json::Value, config: HostConfig) -> Arc<Self> {
        let runtime = ToolRuntime::new(&config);
        // Installing `run_code` only fails for an invalid built-in schema: a bug, not input.
        let code = CodeMode::install(&runtime, config.code_runtime.clone())
            .unwrap_or_else(|e| unreachable!("run_code definition is valid: {e}"));
        code.set_max_depth(config.transport.max_nesting_depth);
        crate::discovery::install(&runtime, &code)
            .unwrap_or_else(|e| unreachable!("search_tools definition is valid: {e}"));
        let dispatch_detail = Arc::new(DispatchDetail::default());
        code.set_events(Arc::new(CodeNotifier {
            outbox: outbox.clone(),
            detail: dispatch_detail.clone(),
        }));
        let peer = Arc::new(Peer::new(outbox.clone(), 4096));
        let session = Arc::new(Session {
            runtime,
            code,
            policy: Mutex::new(None),
            subscriptions: Mutex::new(HashMap::new()),
            mcp: crate::mcp::McpHost::new(),
            peer,
            outbox: outbox.clone(),
            progress_routes: Arc::default(),
            base_config,
            config: Mutex::new(config),
            capabilities: Mutex::new(ClientCapabilities::default()),
            dispatch_detail: dispatch_detail.clone(),
            lifecycle: Mutex::new(Lifecycle::Uninitialized),
            framing: Mutex::new(String::new()),
            in_flight: Mutex::new(HashMap::new()),
            settled: tokio::sync::Notify::new(),
        });
        let notifier = outbox.clone();
        session.runtime.registry().on_change(Arc::new(move |agent| {
            notifier.notify(
                "tools/listChanged",
                &ListChangedNotification {
                    agent: agent.map(|a| a.to_string()),
                },
            );
        }));
        session.runtime.add_observer(
            None,
            Arc::new(ResultNotifier {
                outbox,
                detail: dispatch_detail,
            }),
        );
        session
    }

    /// Tracks an incoming request so `$/cancelRequest` can abort it.
    pub fn track(&self, id: &str) -> CancellationToken {
        let token = CancellationToken::new();
        self.in_flight.lock().insert(id.to_string(), token.clone());
        token
    }

    /// Stops tracking a finished request.
    pub fn untrack(&self, id: &str) {
        self.in_flight.lock().remove(id);
        self.settled.notify_waiters();
    }

    /// Waits until at most `remaining` requests are in flight (`shutdown` counts itself).
    pub async fn drained_to(&self, remaining: usize) {
        loop {
            let settled = self.settled.notified();
            if self.in_flight.lock().len() <= remaining {
                return;
            }
            settled.await;
        }
    }

    /// Aborts the request with this id (raw JSON text of the id).
    pub fn cancel(&self, id: &str) -> bool {
        match self.in_flight.lock().get(id) {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// Aborts everything in flight (EOF, exit).
    pub fn cancel_all(&self) {
        for token in self.in_flight.lock().values() {
            token.cancel();
        }
    }
}

/// `capabilities.codeDispatchEvents`, read by the notifiers on every event (set once, at
/// `initialize`, after they were installed).
#[derive(Default)]
pub struct DispatchDetail(AtomicU8);

impl DispatchDetail {
    pub fn set(&self, events: CodeDispatchEvents) {
        self.0.store(events as u8, Ordering::Relaxed);
    }

    fn get(&self) -> CodeDispatchEvents {
        match self.0.load(Ordering::Relaxed) {
            x if x == CodeDispatchEvents::Summary as u8 => CodeDispatchEvents::Summary,
            x if x == CodeDispatchEvents::None as u8 => CodeDispatchEvents::None,
            _ => CodeDispatchEvents::Full,
        }
    }
}

/// Sends `tools/result` for every final outcome (a sub-call's only with full dispatch events).
struct ResultNotifier {
    outbox: Outbox,
    detail: Arc<DispatchDetail>,
}

impl ResultObserver for ResultNotifier {
    fn observe(&self, execution: &ToolExecution, result: &ToolExecutionResult) {
        if execution.parent.is_some() && self.detail.get() != CodeDispatchEvents::Full {
            return;
        }
        // `ResultNotification`, written in place: the result is not cloned to be sent.
        let capacity = convert::result_json_capacity(result) + 256;
        self.outbox
            .notify_observed_with(OBSERVED_HIGH_WATER, "tools/result", capacity, |out| {
                out.push_str("{\"execution\":");
                crate::json::append_serialized(out, &convert::execution_ref(execution));
                out.push_str(",\"result\":");
                convert::write_result_json(out, result);
                out.push('}');
            });
    }
}

/// Sends Code Mode's dispatch events, in the detail the client chose, and live output.
struct CodeNotifier {
    outbox: Outbox,
    detail: Arc<DispatchDetail>,
}

impl CodeEvents for CodeNotifier {
    fn dispatch_start(&self, event: DispatchStart) {
        let DispatchStart {
            id,
            parent,
            name,
            arguments,
            time,
        } = event;
        match self.detail.get() {
            CodeDispatchEvents::Full => self.outbox.notify_observed(
                "tools/codeDispatchStart",
                &CodeDispatchStartNotification {
                    id,
                    parent,
                    name,
                    arguments,
                    time,
                },
            ),
            CodeDispatchEvents::Summary => self.outbox.notify_observed(
                "tools/codeDispatchStart",
                &CodeDispatchStartSummary {
                    id,
                    parent,
                    name,
                    time,
                },
            ),
            CodeDispatchEvents::None => false,
        };
    }

    fn dispatch_end(&self, event: DispatchEnd) {
        match self.detail.get() {
            CodeDispatchEvents::Full => self
                .outbox
                .notify_observed("tools/codeDispatch", &convert::dispatch_notification(event)),
            CodeDispatchEvents::Summary => self.outbox.notify_observed(
                "tools/codeDispatch",
                &CodeDispatchSummary {
                    id: event.id,
                    parent: event.parent,
                    name: event.name,
                    is_error: event.is_error,
                    time: DispatchTime {
                        start: event.time.0,
                        end: event.time.1,
                    },
                },
            ),
            CodeDispatchEvents::None => false,
        };
    }

    fn log(&self, call_id: &str, stream: LogStream, text: &str) {
        let notification = CodeLogNotification {
            call_id: call_id.to_string(),
            stream: stream_name(stream).into(),
            text: text.into(),
        };
        self.outbox.notify_observed("code/log", &notification);
    }
}
