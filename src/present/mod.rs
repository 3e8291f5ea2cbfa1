//! What `tools/presentCall` and `tools/presentResult` answer: the resolved tool's own card,
//! or `None` (JSON `null`) for the generic fallback.

mod views;

pub use views::*;

use crate::pipeline::ToolRuntime;
use crate::tool::{AgentId, PresentedResult, Presenter};
use serde_json::Value;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

/// The pending-call card of `name` as `agent` resolves it (so the card matches what runs).
pub fn present_call(
    runtime: &ToolRuntime,
    name: &str,
    arguments: &Value,
    agent: Option<&AgentId>,
) -> Option<Value> {
    let presenter = presenter_of(runtime, name, agent)?;
    contained(|| presenter.present_call(arguments))
}

/// The completed-call card of `name` for a durable (live or replayed) `result`.
pub fn present_result(
    runtime: &ToolRuntime,
    name: &str,
    arguments: &Value,
    result: &PresentedResult,
    agent: Option<&AgentId>,
) -> Option<Value> {
    let presenter = presenter_of(runtime, name, agent)?;
    contained(|| presenter.present_result(arguments, result))
}

fn presenter_of(
    runtime: &ToolRuntime,
    name: &str,
    agent: Option<&AgentId>,
) -> Option<Arc<dyn Presenter>> {
    runtime
        .registry()
        .resolve(name, agent)?
        .definition
        .presenter
        .clone()
}

/// A presenter that panics or answers something other than a card falls back to generic.
fn contained(present: impl FnOnce() -> Option<Value>) -> Option<Value> {
    std::panic::catch_unwind(AssertUnwindSafe(present))
        .ok()
        .flatten()
        .filter(|view| view.get("card").is_some_and(Value::is_string))
}
