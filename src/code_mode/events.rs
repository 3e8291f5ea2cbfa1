//! What Code Mode reports while a program runs: sub-call dispatch events and live output.
//! The wire layer turns them into notifications; the CLI prints them.

use crate::runtime::LogStream;
use serde_json::Value;

/// A sub-call entered the pipeline (`tools/codeDispatchStart`).
#[derive(Clone, Debug, PartialEq)]
pub struct DispatchStart {
    /// `<parentCallId>:code:<n>`.
    pub id: String,
    /// The outer `run_code` call id.
    pub parent: String,
    /// Tool name.
    pub name: String,
    /// Arguments as submitted.
    pub arguments: Value,
    /// Start, ms since the Unix epoch.
    pub time: f64,
}

/// A sub-call settled (`tools/codeDispatch`), with its logged outcome: the pipeline's
/// dispatch-log record, after the `tools/code-dispatch-log` stage.
pub use crate::pipeline::hooks::DispatchLog as DispatchEnd;

/// Receives Code Mode events. Implementations must not block.
pub trait CodeEvents: Send + Sync + 'static {
    /// A sub-call started.
    fn dispatch_start(&self, event: DispatchStart);
    /// A sub-call settled.
    fn dispatch_end(&self, event: DispatchEnd);
    /// One line of live program output of the run `call_id`.
    fn log(&self, call_id: &str, stream: LogStream, text: &str);
    /// Whether the receiver has fallen behind, so runs should produce no more output yet.
    fn behind(&self) -> bool {
        false
    }
}

/// Discards every event (a library user that does not listen).
pub struct NoEvents;

impl CodeEvents for NoEvents {
    fn dispatch_start(&self, _: DispatchStart) {}
    fn dispatch_end(&self, _: DispatchEnd) {}
    fn log(&self, _: &str, _: LogStream, _: &str) {}
}

/// The wire spelling of a stream.
pub fn stream_name(stream: LogStream) -> &'static str {
    match stream {
        LogStream::Log => "log",
        LogStream::Info => "info",
        LogStream::Warn => "warn",
        LogStream::Error => "error",
        LogStream::Debug => "debug",
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(0.0)
}
