//! `tools/executeBatch`, executed as it is read: each call is parsed from the request's
//! text when its turn to start comes, and each result is written into the response and
//! dropped as soon as every earlier one was. The host holds the request's text, a bounded
//! window of calls in flight and the response being written; never every call's parsed
//! arguments, future and result at once (500,000 calls took 864 MB that way).
//!
//! The request is checked whole before any call starts (one call at a time, each parsed
//! and dropped), so a malformed call still fails the request with nothing run.
//! A call starts only while fewer than [`WORK_HIGH_WATER`] bytes wait to be written: a
//! client that stopped reading stops the batch, not just the reader.

use super::backpressure::WORK_HIGH_WATER;
use super::convert;
use super::errors::invalid_params;
use super::params;
use super::reply::DirectReply;
use super::session::Session;
use super::shapes;
use crate::pipeline::CallQueue;
use crate::tool::{AgentId, Signal, ToolExecutionInput, ToolExecutionResult};
use crate::transport::Outbox;
use dsh_tools_protocol as wire;
use futures::StreamExt;
use futures::stream::FuturesOrdered;
use jsonrpsee_types::ErrorObjectOwned;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::sync::Arc;

/// Calls in flight: four times `maxParallel` (those running, plus those done or queued
/// whose results wait for an earlier one), within these bounds. Every call that frees a
/// place wakes the queued ones, so the window is kept small.
const MIN_WINDOW: usize = 32;
const MAX_WINDOW: usize = 4096;

/// The request's fields, its calls left as text.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Head<'a> {
    #[serde(borrow)]
    calls: Vec<&'a RawValue>,
    #[serde(default)]
    agent: Option<String>,
    #[serde(default)]
    max_parallel: Option<u32>,
    #[serde(default)]
    format: Option<wire::ProviderFormat>,
}

/// A call's `callId` and tool name (empty without a provider `format`).
type CallIds = (String, String);

/// What a batch needs of the connection.
pub struct Batch<'a> {
    pub session: &'a Arc<Session>,
    pub signal: Signal,
    pub reply: Option<&'a DirectReply>,
}

impl Batch<'_> {
    /// Runs the batch in `text` (the request's params) and answers it: through the reply
    /// slot when there is one (`Ok(None)`), else as the `result` JSON text.
    pub async fn run(self, text: &str) -> Result<Option<Box<RawValue>>, ErrorObjectOwned> {
        let head = parse_head(text)?;
        for call in &head.calls {
            if params::from_str::<wire::BatchCall>(call.get()).is_err() {
                // The whole request's parse names the call and the field, as it always did.
                return Err(params::from_str::<wire::ExecuteBatchParams>(text)
                    .err()
                    .unwrap_or_else(|| invalid_params("invalid params: calls")));
            }
        }
        let scope = match head.agent {
            Some(name) if !self.session.host.runtime.registry().has_agent(&name) => {
                return Err(crate::registry::RegistryError::UnknownAgent(name).into());
            }
            other => other.map(AgentId::from),
        };
        let runtime = &self.session.host.runtime;
        let bound = head
            .max_parallel
            .map_or_else(|| runtime.settings().max_parallel, |n| n.max(1) as usize);
        let window = bound.saturating_mul(4).clamp(MIN_WINDOW, MAX_WINDOW);
        let queue = CallQueue::new(runtime.clone(), bound, true);
        let mut text = match self.reply {
            Some(reply) => reply.open(0),
            None => String::new(),
        };
        let result_start = text.len();
        text.push('[');
        let mut written = 0usize;
        let format = head.format;
        let mut write =
            |text: &mut String, (ids, result): (CallIds, Option<ToolExecutionResult>)| {
                if let Some(result) = result {
                    if written > 0 {
                        text.push(',');
                    }
                    written += 1;
                    text.reserve(convert::result_json_capacity(&result) + 1);
                    let shape = format.map(|format| convert::ResultShape {
                        format,
                        call_id: &ids.0,
                        name: &ids.1,
                    });
                    convert::write_shaped_result_json(text, &result, shape);
                }
            };
        let outbox = &self.session.outbox;
        let mut calls = head.calls.into_iter();
        let mut next = calls.next();
        let mut running = FuturesOrdered::new();
        loop {
            let may_start = next.is_some() && running.len() < window;
            if may_start && outbox.queued_bytes() < WORK_HIGH_WATER {
                let Some(raw) = next.take() else { break };
                next = calls.next();
                let (ids, input) = self.input(raw, scope.clone(), format)?;
                let ticket = queue.ticket();
                let queue = queue.clone();
                running
                    .push_back(async move { (ids, queue.run(ticket, input, false, || {}).await) });
                continue;
            }
            tokio::select! {
                Some(result) = running.next(), if !running.is_empty() => write(&mut text, result),
                () = waiting_for_room(outbox), if may_start => {}
                else => break,
            }
        }
        text.push(']');
        Ok(match self.reply {
            Some(reply) => {
                reply.complete(text);
                None
            }
            None => Some(convert::raw_json(text.split_off(result_start))),
        })
    }

    /// One checked call, as the runtime takes it.
    /// With a provider `format`, its ids are kept for the result's tool-result block (and
    /// a strict OpenAI model's `null`s dropped: `shapes::strict_arguments`).
    fn input(
        &self,
        raw: &RawValue,
        scope: Option<AgentId>,
        format: Option<wire::ProviderFormat>,
    ) -> Result<(CallIds, ToolExecutionInput), ErrorObjectOwned> {
        let mut call: wire::BatchCall = params::from_str(raw.get())?;
        let ids = match format {
            Some(_) => {
                let name = &call.name;
                shapes::strict_arguments(
                    self.session,
                    format,
                    name,
                    scope.as_ref(),
                    &mut call.arguments,
                );
                (call.call_id.clone(), call.name.clone())
            }
            None => (String::new(), String::new()),
        };
        let input = ToolExecutionInput::new(call.call_id, call.name, call.arguments)
            .with_signal(self.signal.clone())
            .with_agent(scope);
        Ok((ids, input))
    }
}

/// Resolves once fewer than [`WORK_HIGH_WATER`] bytes wait to be written.
async fn waiting_for_room(outbox: &Outbox) {
    outbox.wait_below(WORK_HIGH_WATER).await;
}

/// The request's fields; a malformed request gets the error its whole parse gives.
fn parse_head(text: &str) -> Result<Head<'_>, ErrorObjectOwned> {
    let text = match text.trim_start().starts_with('[') {
        true => {
            return Err(invalid_params(
                "invalid params: expected an object (every method takes named params)",
            ));
        }
        false => text,
    };
    let mut json = serde_json::Deserializer::from_str(text);
    // Calls are taken as text here, skipped without recursion; the transport bounded depth.
    json.disable_recursion_limit();
    let head = Head::deserialize(&mut json).and_then(|head| json.end().map(|()| head));
    head.map_err(|_| {
        params::from_str::<wire::ExecuteBatchParams>(text)
            .err()
            .unwrap_or_else(|| invalid_params("invalid params"))
    })
}
