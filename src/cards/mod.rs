//! UI cards: what `tools/presentCall` and `tools/presentResult` answer (the resolved tool's
//! own card, or `None`, JSON `null`, for the generic fallback) and the card view types.

mod read;
mod views;
mod web;

pub use read::*;
pub use views::*;
pub use web::*;

use crate::pipeline::ToolRuntime;
use crate::tool::{AgentId, DurableResult, ToolCards};
use serde_json::Value;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

/// The pending-call card of `name` as `agent` resolves it (so the card matches what runs).
pub fn call_card(
    runtime: &ToolRuntime,
    name: &str,
    arguments: &Value,
    agent: Option<&AgentId>,
) -> Option<Value> {
    let cards = cards_of(runtime, name, agent)?;
    contained(|| cards.call_card(arguments))
}

/// The completed-call card of `name` for a durable (live or replayed) `result`.
pub fn result_card(
    runtime: &ToolRuntime,
    name: &str,
    arguments: &Value,
    result: &DurableResult,
    agent: Option<&AgentId>,
) -> Option<Value> {
    let cards = cards_of(runtime, name, agent)?;
    contained(|| cards.result_card(arguments, result))
}

fn cards_of(
    runtime: &ToolRuntime,
    name: &str,
    agent: Option<&AgentId>,
) -> Option<Arc<dyn ToolCards>> {
    runtime
        .registry()
        .resolve(name, agent)?
        .definition
        .cards
        .clone()
}

/// A card renderer that panics or answers something other than a card falls back to generic.
fn contained(present: impl FnOnce() -> Option<Value>) -> Option<Value> {
    std::panic::catch_unwind(AssertUnwindSafe(present))
        .ok()
        .flatten()
        .filter(|view| view.get("card").is_some_and(Value::is_string))
}
