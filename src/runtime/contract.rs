//! The runtime's public vocabulary: pool configuration, run requests, the host seam and outcomes.

use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

/// How many fresh isolates are kept ready and how much heap each may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolConfig {
    /// Ready isolates kept warm; at least 1. Not a cap on runs: one that finds none ready
    /// gets an isolate made for it at once.
    pub size: usize,
    /// Heap ceiling of one isolate in MiB; exceeding it ends the run as `worker-exit`.
    pub max_heap_mb: u64,
}

/// One model program to run in a fresh isolate or interpreter.
pub struct RunRequest {
    /// The model's program (TypeScript for the isolates, Python for the interpreters): the
    /// body of an async function.
    pub code: String,
    pub limits: RunLimits,
    /// The names the program's `tools` object binds (the calling scope's visible tools when
    /// the run starts, `run_code` excluded); any other name is no binding at all.
    pub tools: Vec<String>,
    /// Receives binding calls and live output.
    pub host: Arc<dyn BindingHost>,
    /// Firing it ends the run as `abort`.
    pub abort: CancellationToken,
}

/// The budgets of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunLimits {
    /// Busy time of the isolate thread (running JS or polling its event loop); waiting on a
    /// binding accrues nothing.
    pub compute_ms: u64,
    /// Wall-clock ceiling from the moment an isolate takes the run.
    pub max_wall_ms: u64,
    /// Bytes of compact JSON of the logs array plus the completion value or failure message.
    pub max_output_bytes: u64,
    /// Deepest JSON nesting of a binding call's arguments or the completion value.
    pub max_depth: usize,
}

/// The host side of the bridge: where binding calls and console output go.
pub trait BindingHost: Send + Sync + 'static {
    /// Called synchronously from the isolate thread, in submission order, once per binding call whose
    /// arguments passed the lossless snapshot. Must not block. The future runs on the isolate's event loop;
    /// Ok(value) resolves the JS promise with that JSON, Err(message) rejects it with ToolCallError(name, message).
    fn call(
        &self,
        name: &str,
        arguments: serde_json::Value,
    ) -> BoxFuture<'static, Result<serde_json::Value, String>>;

    /// Live program output, in emission order; not called once the output cap was hit.
    fn log(&self, stream: LogStream, text: &str);

    /// Whether whoever reads the output has fallen behind (a client not reading): a run
    /// that cannot wait inside `log` (Python's, on the host's workers) reads no more of its
    /// program's output meanwhile.
    fn behind(&self) -> bool {
        false
    }
}

/// The console method a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LogStream {
    Log,
    Info,
    Warn,
    Error,
    Debug,
}

/// What a run produced: its console lines and its completion or failure.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    pub logs: Vec<String>,
    /// `Ok(None)` means the program returned `undefined`.
    pub result: Result<Option<serde_json::Value>, RunFailure>,
}

/// Why a run failed, in the model-facing vocabulary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunFailure {
    pub kind: FailureKind,
    pub message: String,
}

impl RunFailure {
    pub(crate) fn new(kind: FailureKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}

/// The failure kinds of `code run failed (<kind>): <message>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailureKind {
    Exception,
    Timeout,
    Abort,
    WorkerExit,
    InvalidOutput,
    OutputLimit,
}

impl FailureKind {
    /// The wire spelling of the kind.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Exception => "exception",
            FailureKind::Timeout => "timeout",
            FailureKind::Abort => "abort",
            FailureKind::WorkerExit => "worker-exit",
            FailureKind::InvalidOutput => "invalid-output",
            FailureKind::OutputLimit => "output-limit",
        }
    }
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why the pool could not be created.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RuntimeError {
    #[error("invalid pool config: {0}")]
    InvalidConfig(&'static str),
    #[error("the runtime bootstrap failed: {0}")]
    Bootstrap(String),
    /// The sandbox cannot be applied (fail closed): what is missing and how to opt out.
    #[error("{0}")]
    Unavailable(String),
    #[error("could not start an isolate thread: {0}")]
    Thread(String),
    #[error("could not create an isolate: {0}")]
    Isolate(String),
}
