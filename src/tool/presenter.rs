//! Tool-owned UI presentation: pure presenters over a call's arguments and its durable result.

use super::{ContentBlock, ToolExecutionResult};
use serde_json::Value;
use std::sync::Arc;

/// The durable part of a result, as a session log replays it: never the canonical value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PresentedResult {
    /// Failure flag.
    pub is_error: bool,
    /// Model-facing content.
    pub content: Vec<ContentBlock>,
    /// Presentation metadata persisted with the result.
    pub meta: Option<Value>,
}

impl From<&ToolExecutionResult> for PresentedResult {
    fn from(result: &ToolExecutionResult) -> Self {
        PresentedResult {
            is_error: result.is_error(),
            content: result.content.clone(),
            meta: result.meta.clone(),
        }
    }
}

/// Says how a UI renders one tool's calls (`ToolCallView` / `ToolResultView` card JSON).
///
/// Presenters are pure over their inputs because UIs call them both while a call streams
/// and when a log is replayed; old or malformed arguments must yield `None` (the generic
/// fallback), never a failure.
pub trait Presenter: Send + Sync + 'static {
    /// The pending call's card, or `None` for the generic fallback.
    fn present_call(&self, arguments: &Value) -> Option<Value>;

    /// The completed call's card, or `None` for the generic fallback.
    fn present_result(&self, arguments: &Value, result: &PresentedResult) -> Option<Value>;
}

/// Derives presentation metadata from `(arguments, value)` for successful direct calls; the
/// pipeline stores it in `result.meta` so it persists with the result.
pub type PresentationMeta = Arc<dyn Fn(&Value, &Value) -> Option<Value> + Send + Sync>;
