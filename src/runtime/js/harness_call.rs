//! Calling the harness and watching its promise by reading its state, not by reacting to it.
//!
//! deno_core's `call_with_args` watches the returned promise with reaction callbacks that
//! own the polling task's waker. When the program never settles (it awaits forever, or is
//! stopped while awaiting), those callbacks are never called and never freed, and the waker
//! they hold keeps the isolate thread's whole tokio runtime allocated after the thread has
//! ended: one runtime leaked per never-settling run, so a host that serves such programs
//! grows without bound (`docs/performance.md`, memory and soak runs). The promise's state is
//! read after each turn of the run's loop instead; nothing is attached to it, so nothing
//! outlives the run.

use deno_core::error::{JsError, exception_to_err};
use deno_core::{JsRuntime, v8};

/// What the harness answered, or the failure that stands for its answer.
pub(super) type Answer = Result<v8::Global<v8::Value>, Box<JsError>>;

/// One harness call, from its start to its answer.
pub(super) enum HarnessCall {
    /// The harness returned a promise that had not settled when last looked at.
    Pending(v8::Global<v8::Promise>),
    /// The answer, until it is taken.
    Settled(Option<Answer>),
}

impl HarnessCall {
    /// Calls `harness(program)`. A promise it returns is marked handled, as a reaction would
    /// mark it, so that its rejection is the harness's answer, not an unhandled rejection.
    pub(super) fn start(
        runtime: &mut JsRuntime,
        harness: &v8::Global<v8::Function>,
        program: &v8::Global<v8::Value>,
    ) -> HarnessCall {
        deno_core::scope!(scope, runtime);
        v8::tc_scope!(let scope, scope);
        let harness = v8::Local::new(scope, harness);
        let program = v8::Local::new(scope, program);
        let receiver = v8::undefined(scope).into();
        let Some(returned) = harness.call(scope, receiver, &[program]) else {
            // Terminated, or the harness threw: the error deno_core would have made.
            let exception = match scope.exception() {
                Some(exception) if !scope.is_execution_terminating() => exception,
                _ => v8::undefined(scope).into(),
            };
            return HarnessCall::Settled(Some(Err(exception_to_err(
                scope, exception, false, true,
            ))));
        };
        match v8::Local::<v8::Promise>::try_from(returned) {
            Ok(promise) => {
                promise.mark_as_handled();
                HarnessCall::Pending(v8::Global::new(scope, promise))
            }
            Err(_) => HarnessCall::Settled(Some(Ok(v8::Global::new(scope, returned)))),
        }
    }

    /// The answer, once the promise has settled (given once).
    pub(super) fn answer(&mut self, runtime: &mut JsRuntime) -> Option<Answer> {
        let promise = match self {
            HarnessCall::Settled(answer) => return answer.take(),
            HarnessCall::Pending(promise) => promise,
        };
        deno_core::scope!(scope, runtime);
        let promise = v8::Local::new(scope, &*promise);
        let answer = match promise.state() {
            v8::PromiseState::Pending => return None,
            v8::PromiseState::Fulfilled => Ok(v8::Global::new(scope, promise.result(scope))),
            v8::PromiseState::Rejected => {
                let reason = promise.result(scope);
                Err(exception_to_err(scope, reason, true, true))
            }
        };
        *self = HarnessCall::Settled(None);
        Some(answer)
    }
}
