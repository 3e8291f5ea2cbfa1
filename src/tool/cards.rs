//! Tool-owned UI cards: pure renderings of a call's arguments and its durable result.

use super::{ContentBlock, ToolExecutionResult};
use serde_json::Value;
use std::sync::Arc;

/// The durable part of a result, as a session log replays it: never the canonical value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DurableResult {
    /// Failure flag.
    pub is_error: bool,
    /// Model-facing content.
    pub content: Vec<ContentBlock>,
    /// Card metadata persisted with the result.
    pub meta: Option<Value>,
}

impl From<&ToolExecutionResult> for DurableResult {
    fn from(result: &ToolExecutionResult) -> Self {
        DurableResult {
            is_error: result.is_error(),
            content: result.content.clone(),
            meta: result.meta.clone(),
        }
    }
}

/// Says how a UI renders one tool's calls (`ToolCallView` / `ToolResultView` card JSON).
///
/// Cards are pure over their inputs because UIs call them both while a call streams
/// and when a log is replayed; old or malformed arguments must yield `None` (the generic
/// fallback), never a failure.
pub trait ToolCards: Send + Sync + 'static {
    /// The pending call's card, or `None` for the generic fallback.
    fn call_card(&self, arguments: &Value) -> Option<Value>;

    /// The completed call's card, or `None` for the generic fallback.
    fn result_card(&self, arguments: &Value, result: &DurableResult) -> Option<Value>;
}

/// Derives card metadata from `(arguments, value)` for successful direct calls; the
/// pipeline stores it in `result.meta` so it persists with the result.
pub type CardMeta = Arc<dyn Fn(&Value, &Value) -> Option<Value> + Send + Sync>;
