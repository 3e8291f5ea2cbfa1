//! One call as it moves through the pipeline: its input, identity and the context a body sees.

use super::{ContextMessage, Progress, Signal};
use parking_lot::Mutex;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The agent scope a call comes from; `None` is the global scope.
pub type AgentId = Arc<str>;

/// Opaque identity of one execution, assigned by the pipeline; callers never choose it.
/// It supports equality only; on the wire it is the string `t<N>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ExecutionToken(u64);

impl ExecutionToken {
    /// A fresh token (process-unique).
    pub(crate) fn fresh() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        ExecutionToken(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

impl fmt::Display for ExecutionToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t{}", self.0)
    }
}

/// What a caller supplies to run one call.
#[derive(Clone, Debug)]
pub struct ToolExecutionInput {
    /// The model's call id.
    pub call_id: Arc<str>,
    /// Tool name.
    pub name: Arc<str>,
    /// Arguments (snapshotted and frozen by the pipeline).
    pub arguments: Value,
    /// The caller-owned abort signal.
    pub signal: Signal,
    /// The calling agent.
    pub agent: Option<AgentId>,
    /// The enclosing execution (Code Mode sub-calls). Only the host sets this.
    pub parent: Option<ExecutionToken>,
}

impl ToolExecutionInput {
    /// A top-level call from the global scope with a signal that never fires.
    pub fn new(call_id: impl Into<Arc<str>>, name: impl Into<Arc<str>>, arguments: Value) -> Self {
        ToolExecutionInput {
            call_id: call_id.into(),
            name: name.into(),
            arguments,
            signal: Signal::never(),
            agent: None,
            parent: None,
        }
    }

    /// The same call with `signal`.
    pub fn with_signal(mut self, signal: Signal) -> Self {
        self.signal = signal;
        self
    }

    /// The same call from `agent`.
    pub fn with_agent(mut self, agent: Option<AgentId>) -> Self {
        self.agent = agent;
        self
    }
}

/// The immutable pipeline view of one call.
#[derive(Clone, Debug)]
pub struct ToolExecution {
    /// Fresh opaque token.
    pub token: ExecutionToken,
    /// The model's call id.
    pub call_id: Arc<str>,
    /// Tool name.
    pub name: Arc<str>,
    /// Frozen, canonical arguments.
    pub arguments: Arc<Value>,
    /// The calling agent.
    pub agent: Option<AgentId>,
    /// The enclosing execution.
    pub parent: Option<ExecutionToken>,
    /// The caller's signal.
    pub signal: Signal,
}

/// What a tool body receives: the execution, the (re-fused) signal, and `defer_context`.
#[derive(Clone, Debug)]
pub struct ToolRunContext {
    /// The call.
    pub execution: Arc<ToolExecution>,
    /// The signal the body must observe (caller's, fused with any wrapper replacement).
    pub signal: Signal,
    /// The registration that resolved (a shadowing agent tool and a global one share a name).
    pub registration: Arc<str>,
    /// Live output and progress of the call, for whoever listens.
    pub progress: Progress,
    deferred: Arc<Mutex<Vec<ContextMessage>>>,
}

impl ToolRunContext {
    pub(crate) fn new(
        execution: Arc<ToolExecution>,
        signal: Signal,
        registration: Arc<str>,
        progress: Progress,
        deferred: Arc<Mutex<Vec<ContextMessage>>>,
    ) -> Self {
        ToolRunContext {
            execution,
            signal,
            registration,
            progress,
            deferred,
        }
    }

    /// The arguments.
    pub fn arguments(&self) -> &Value {
        &self.execution.arguments
    }

    /// Defers one context until the final result, even when the tool later fails.
    pub fn defer_context(&self, context: ContextMessage) {
        self.deferred.lock().push(context);
    }
}
