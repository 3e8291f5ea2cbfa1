//! The binding bridge of one run: each `tools.x(args)` from the isolate becomes a sub-call
//! through the complete pipeline, with the outer execution as parent, scheduled by a per-run
//! [`CallQueue`] (submission order; safe calls overlap up to `maxParallelSubCalls`;
//! exclusive calls are barriers).

use super::announcer::Announcer;
use super::events::{CodeEvents, DispatchEnd, DispatchStart, now_ms};
use crate::pipeline::{CallQueue, ToolRuntime};
use crate::runtime::{BindingHost, LogStream};
use crate::tool::{ContextMessage, Signal, ToolExecution, ToolExecutionInput};
use futures::future::BoxFuture;
use futures::task::noop_waker_ref;
use parking_lot::Mutex;
use serde_json::Value;
use std::sync::Arc;
use std::task::Context;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Host side of one run.
pub struct Bridge {
    runtime: Arc<ToolRuntime>,
    queue: Arc<CallQueue>,
    outer: Arc<ToolExecution>,
    /// Fires when the run settled for any reason (an outer abort ends the run first); every
    /// sub-call's signal.
    settled: CancellationToken,
    events: Arc<dyn CodeEvents>,
    /// Dispatch events, in dispatch-number order.
    announcer: Announcer,
    handle: tokio::runtime::Handle,
    state: Mutex<BridgeState>,
}

#[derive(Default)]
struct BridgeState {
    submitted: u64,
    in_flight: Vec<JoinHandle<()>>,
    /// Sub-call contexts by dispatch number, deferred through the outer result in order.
    contexts: Vec<(u64, Vec<ContextMessage>)>,
}

impl Bridge {
    /// A bridge for the run of `outer`, cancelled by `settled`.
    pub fn new(
        runtime: Arc<ToolRuntime>,
        outer: Arc<ToolExecution>,
        settled: CancellationToken,
        events: Arc<dyn CodeEvents>,
    ) -> Arc<Self> {
        let bound = runtime.settings().max_parallel;
        Arc::new(Bridge {
            queue: CallQueue::new(runtime.clone(), bound, false),
            runtime,
            outer,
            settled,
            announcer: Announcer::new(events.clone()),
            events,
            handle: tokio::runtime::Handle::current(),
            state: Mutex::new(BridgeState::default()),
        })
    }

    /// Aborts what is still running, waits for every sub-call to settle, and returns the
    /// sub-calls' contexts in dispatch order.
    pub async fn drain(&self) -> Vec<ContextMessage> {
        self.settled.cancel();
        loop {
            let pending = std::mem::take(&mut self.state.lock().in_flight);
            if pending.is_empty() {
                break;
            }
            for task in pending {
                let _ = task.await;
            }
        }
        let mut contexts = std::mem::take(&mut self.state.lock().contexts);
        contexts.sort_by_key(|(n, _)| *n);
        contexts.into_iter().flat_map(|(_, c)| c).collect()
    }
}

impl BindingHost for Arc<Bridge> {
    fn call(&self, name: &str, arguments: Value) -> BoxFuture<'static, Result<Value, String>> {
        let (answer, mut receiver) = tokio::sync::oneshot::channel();
        let ticket = self.queue.ticket();
        let mut state = self.state.lock();
        state.submitted += 1;
        let number = state.submitted;
        let outer = &self.outer;
        let id = format!("{}:code:{number}", outer.call_id);
        let input = ToolExecutionInput {
            call_id: Arc::from(id.as_str()),
            name: Arc::from(name),
            arguments: arguments.clone(),
            signal: Signal::new(self.settled.clone()),
            agent: outer.agent.clone(),
            parent: Some(outer.token),
        };
        let bridge = self.clone();
        let (name, parent) = (name.to_string(), outer.call_id.to_string());
        // Unconstrained: the isolate's driver makes many op calls within one poll, and tokio's
        // per-poll budget would otherwise send every call after the first few to a task.
        let mut work: BoxFuture<'static, ()> = Box::pin(tokio::task::unconstrained(async move {
            let started = Mutex::new(0.0);
            let on_start = || {
                let time = now_ms();
                *started.lock() = time;
                let event = DispatchStart {
                    id: id.clone(),
                    parent: parent.clone(),
                    name: name.clone(),
                    arguments: arguments.clone(),
                    time,
                };
                bridge.announcer.started(number, event);
            };
            let Some(mut result) = bridge.queue.run(ticket, input, true, on_start).await else {
                bridge.announcer.abandoned(number);
                let _ = answer.send(Err(format!(
                    "tool \"{name}\" was abandoned when the run settled"
                )));
                return;
            };
            let reply = match (result.value(), result.error()) {
                (Some(value), _) => Ok(Value::clone(value)),
                (None, Some(error)) => Err(error.message.clone()),
                (None, None) => Err(format!("tool \"{name}\" produced no result")),
            };
            if !result.additional_contexts.is_empty() {
                let contexts = std::mem::take(&mut result.additional_contexts);
                bridge.state.lock().contexts.push((number, contexts));
            }
            let start = *started.lock();
            let is_error = result.is_error();
            let log = DispatchEnd {
                id,
                parent,
                name,
                arguments,
                content: result.content,
                is_error,
                time: (start, now_ms()),
            };
            let outer = bridge.outer.clone();
            if !bridge.runtime.dispatch_log_applies(&outer, &log.content) {
                bridge.announcer.ended(number, log);
                let _ = answer.send(reply);
                return;
            }
            // The program has its value before the logged copy is shaped (a client hook may
            // take its time, a large text is written to a file); run settlement still waits
            // for the notification.
            let _ = answer.send(reply);
            let log = bridge.runtime.shape_dispatch_log(&outer, log).await;
            bridge.announcer.ended(number, log);
        }));
        drop(state);
        // Most sub-calls can finish without waiting (a native body, no client hook): driving
        // them here, inside the isolate's op call, saves two thread hops per call. One that
        // would wait goes on as a task of the host runtime, exactly as if it had been spawned
        // (a spawned task is polled again with its own waker). The synchronous part of a
        // sub-call therefore counts as the program's busy time.
        let waiting = {
            let _host_runtime = self.handle.enter();
            work.as_mut()
                .poll(&mut Context::from_waker(noop_waker_ref()))
                .is_pending()
        };
        if waiting {
            let task = self.handle.spawn(work);
            self.state.lock().in_flight.push(task);
        } else if let Ok(reply) = receiver.try_recv() {
            // Taken directly: awaiting the receiver would spend the isolate task's coop
            // budget, and after ~128 calls within one JavaScript turn every later call would
            // be sent the slow way round.
            return Box::pin(std::future::ready(reply));
        }
        Box::pin(async move {
            receiver
                .await
                .unwrap_or_else(|_| Err("the run settled before the call finished".into()))
        })
    }

    fn log(&self, stream: LogStream, text: &str) {
        self.events.log(&self.outer.call_id, stream, text);
    }

    fn behind(&self) -> bool {
        self.events.behind()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::code_mode::events::NoEvents;
    use crate::tool::{BodyOutput, Concurrency, ExecutionToken, ToolDefinition, ToolRunContext};
    use dsh_tools_protocol::HostConfig;
    use futures::FutureExt;
    use serde_json::json;

    fn echo() -> ToolDefinition {
        ToolDefinition::builder("echo")
            .description("Echo the arguments.")
            .input_schema(json!({ "type": "object" }))
            .output(json!({ "type": "json" }))
            .concurrency(Concurrency::Parallel)
            .body(
                |ctx: ToolRunContext| async move { Ok(BodyOutput::from(ctx.arguments().clone())) },
            )
            .unwrap()
    }

    /// Many calls made within one poll of the isolate's task (one JavaScript turn, as
    /// `Promise.all` over a thousand calls does) are all answered on the spot: tokio's
    /// per-poll coop budget runs out after ~128 operations, and answers that spent it would
    /// take the slow way round through the driver.
    #[tokio::test(flavor = "current_thread")]
    async fn calls_within_one_turn_are_answered_on_the_spot_past_the_coop_budget() {
        let runtime = ToolRuntime::new(&HostConfig::default());
        runtime.register(echo(), None).unwrap();
        let outer = Arc::new(ToolExecution {
            token: ExecutionToken::fresh(),
            call_id: Arc::from("outer"),
            name: Arc::from(crate::code_mode::RUN_CODE),
            arguments: Arc::new(json!({})),
            agent: None,
            parent: None,
            signal: Signal::new(CancellationToken::new()),
        });
        let bridge = Bridge::new(runtime, outer, CancellationToken::new(), Arc::new(NoEvents));
        let mut waker = Context::from_waker(noop_waker_ref());
        for i in 0..1000 {
            let answer = bridge
                .call("echo", json!({ "i": i }))
                .poll_unpin(&mut waker);
            assert_eq!(
                answer,
                std::task::Poll::Ready(Ok(json!({ "i": i }))),
                "call {i}"
            );
        }
        assert!(bridge.drain().await.is_empty());
    }
}
