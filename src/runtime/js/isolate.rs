//! One fresh isolate: created and bootstrapped ahead of time, then used for exactly one program.

use std::future::poll_fn;
use std::rc::Rc;
use std::sync::Arc;
use std::task::Poll;

use deno_core::{JsRuntime, PollEventLoopOptions, RuntimeOptions, v8};

use super::bridge::{self, Completion, RunScope};
use super::harness_call::HarnessCall;
use super::interrupt::EngineContext;
use super::snapshot::Startup;
use super::verdict::{self, Verdict};
use crate::runtime::contract::{BindingHost, RunLimits, RunOutcome};
use crate::runtime::control::RunControl;

/// The model's code becomes the body of this function. Positions the engine reports are one
/// line off; the harness (its `PROGRAM_LINE_OFFSET`) and `verdict` subtract the prefix lines.
const PROGRAM_PREFIX: &str = "(async function () {\n";
const PROGRAM_SUFFIX: &str = "\n})";
/// Lines the prefix adds above the model's first line.
pub(crate) const PROGRAM_PREFIX_LINES: i64 = {
    let bytes = PROGRAM_PREFIX.as_bytes();
    let mut lines = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\n' {
            lines += 1;
        }
        i += 1;
    }
    lines
};
/// What [`FreshIsolate::warm`] evaluates: a program's shape, never called.
const WARM_UP: &str = "(async function () {\nreturn 0\n})";
const WARM_UP_NAME: &str = "dsh-runtime:warm-up.js";
/// The script name positions in model programs are reported under.
pub(crate) const PROGRAM_NAME: &str = "program.ts";

/// A job for one isolate: a stripped program plus what it may use.
pub(crate) struct Job {
    pub(crate) code: String,
    pub(crate) limits: RunLimits,
    pub(crate) tools: Vec<String>,
    pub(crate) host: Arc<dyn BindingHost>,
    pub(crate) control: Arc<RunControl>,
    pub(crate) max_heap_mb: u64,
}

pub(crate) struct FreshIsolate {
    runtime: JsRuntime,
    /// Runs a compiled program and answers a tagged string (see bootstrap.ts).
    harness: v8::Global<v8::Function>,
    /// Completes a task (binding call, timer) the host finished after its op returned.
    settle: v8::Global<v8::Function>,
}

impl FreshIsolate {
    /// Restores an isolate from the startup snapshot (or, before it is built, evaluates the
    /// bootstrap) and finishes the bootstrap in it, keeping the harness and settle functions.
    pub(crate) fn new(max_heap_mb: u64, startup: Startup) -> Result<Self, String> {
        let heap_bytes = usize::try_from(max_heap_mb.saturating_mul(1024 * 1024))
            .map_err(|_| "max_heap_mb does not fit this platform".to_owned())?;
        // Read once: the snapshot may become ready while this isolate is being made.
        let snapshot = startup.snapshot();
        let mut runtime = JsRuntime::try_new(RuntimeOptions {
            extensions: vec![bridge::extension()],
            startup_snapshot: snapshot,
            // The snapshot already holds the op functions (bound to this runtime's ops
            // through its external references); deno_core would otherwise build a
            // template and a function for every op again, only to replace the restored
            // ones in `Deno.core.ops`: work that would be a large share of a trivial run.
            skip_op_registration: snapshot.is_some(),
            create_params: Some(v8::CreateParams::default().heap_limits(0, heap_bytes)),
            ..Default::default()
        })
        .map_err(|error| format!("isolate creation failed: {error}"))?;
        if snapshot.is_none() {
            runtime
                .execute_script("dsh-runtime:bootstrap.ts", startup.bootstrap())
                .map_err(|error| format!("bootstrap.ts failed: {error}"))?;
        }
        let exports = runtime
            .execute_script("dsh-runtime:finish.js", "__dshFinish()")
            .map_err(|error| format!("finishing the bootstrap failed: {error}"))?;
        let (harness, settle) = {
            deno_core::scope!(scope, &mut runtime);
            let exports = v8::Local::new(scope, exports);
            let exports = v8::Local::<v8::Object>::try_from(exports)
                .map_err(|_| "bootstrap did not evaluate to [harness, settle]".to_owned())?;
            let function = |index: u32| {
                exports
                    .get_index(scope, index)
                    .and_then(|value| v8::Local::<v8::Function>::try_from(value).ok())
                    .map(|function| v8::Global::new(scope, function))
                    .ok_or_else(|| "bootstrap did not evaluate to [harness, settle]".to_owned())
            };
            (function(0)?, function(1)?)
        };
        Ok(Self {
            runtime,
            harness,
            settle,
        })
    }

    /// Gets an isolate that sat idle ready for a run: evaluates a function expression the way
    /// a program is evaluated (without calling it) and turns the event loop once, which brings
    /// the compiler, the interpreter, the event loop and this isolate's heap back into the
    /// caches. Nothing of it can be seen by the program: the function is unreferenced garbage,
    /// no global changes and the loop has nothing to run. The warm-up costs about what it
    /// saves the run, so it pays only off the request path: the pool overlaps it with parsing
    /// and the pipeline (`cargo bench --bench isolate` measures both).
    pub(crate) fn warm(&mut self) {
        let warmed = self.runtime.execute_script(WARM_UP_NAME, WARM_UP).map(drop);
        if let Err(error) = warmed {
            tracing::debug!(%error, "an isolate's warm-up failed");
            return;
        }
        let waker = futures::task::noop_waker();
        let mut cx = std::task::Context::from_waker(&waker);
        let _ = self
            .runtime
            .poll_event_loop(&mut cx, PollEventLoopOptions::default());
    }

    /// Evaluates `code` as a script in the finished isolate, as a string (tests only).
    #[cfg(test)]
    pub(crate) fn evaluate(&mut self, code: &str) -> Result<String, String> {
        let value = self
            .runtime
            .execute_script("dsh-test:evaluate.js", code.to_owned())
            .map_err(|error| error.to_string())?;
        deno_core::scope!(scope, &mut self.runtime);
        let value = v8::Local::new(scope, value);
        Ok(value.to_rust_string_lossy(scope))
    }

    /// Requests termination and makes the engine check for it at its next call (tests only).
    #[cfg(test)]
    pub(crate) fn request_termination(&mut self) {
        self.handle().terminate_execution();
        if let Some(context) = self.engine_context() {
            // SAFETY: the isolate is alive for the whole call.
            unsafe { context.trigger() };
        }
    }

    /// Runs the queued microtasks, then lets scripts run again (tests only).
    #[cfg(test)]
    pub(crate) fn drain_then_resume(&mut self) {
        let isolate = self.runtime.v8_isolate();
        isolate.perform_microtask_checkpoint();
        isolate.cancel_terminate_execution();
    }

    /// The context programs run in, for forcing the engine's next termination check.
    pub(crate) fn engine_context(&mut self) -> Option<EngineContext> {
        EngineContext::of_main(&mut self.runtime)
    }

    pub(crate) fn handle(&mut self) -> v8::IsolateHandle {
        self.runtime.v8_isolate().thread_safe_handle()
    }

    /// Runs the job's program to its outcome; the isolate must be dropped afterwards.
    pub(crate) async fn run(&mut self, job: Job) -> RunOutcome {
        let Job {
            code,
            limits,
            tools,
            host,
            control,
            max_heap_mb,
        } = job;
        let scope = Rc::new(RunScope::new(
            host,
            control.clone(),
            limits.max_depth,
            tools,
        ));
        self.runtime.op_state().borrow_mut().put(scope.clone());
        let verdict = if control.is_stopped() {
            Verdict::Stopped
        } else {
            tokio::select! {
                biased;
                () = control.stopped() => Verdict::Stopped,
                verdict = self.execute(&code, &control, &scope) => verdict,
            }
        };
        let reason = control.finish();
        let terminated = self.runtime.v8_isolate().is_execution_terminating();
        let output = scope.close();
        let finished = || verdict::judge(verdict, terminated, max_heap_mb, limits.max_depth);
        crate::runtime::verdict::conclude(finished, reason, output, limits)
    }

    /// Compiles the program, calls the harness with it and drives host tasks and the event
    /// loop until the harness settles; all of it counts as busy time.
    async fn execute(&mut self, code: &str, control: &RunControl, scope: &RunScope) -> Verdict {
        let mut source =
            String::with_capacity(PROGRAM_PREFIX.len() + code.len() + PROGRAM_SUFFIX.len());
        source.push_str(PROGRAM_PREFIX);
        source.push_str(code);
        source.push_str(PROGRAM_SUFFIX);
        let Self {
            runtime,
            harness,
            settle,
        } = self;
        let program = match control.busy(|| runtime.execute_script(PROGRAM_NAME, source)) {
            Ok(program) => program,
            Err(error) => return Verdict::Failed(error),
        };
        let mut call = control.busy(|| HarnessCall::start(runtime, harness, &program));
        let options = PollEventLoopOptions::default();
        let answer = poll_fn(|cx| {
            control.busy(|| {
                loop {
                    if control.is_stopped() {
                        return Poll::Ready(Err(Verdict::Stopped));
                    }
                    let finished = scope.poll_tasks(cx);
                    if !finished.is_empty() {
                        deliver(runtime, settle, finished);
                    }
                    if let Some(answer) = call.answer(runtime) {
                        return Poll::Ready(answer.map_err(Verdict::Failed));
                    }
                    let idle = match runtime.poll_event_loop(cx, options) {
                        Poll::Ready(Err(error)) => {
                            return Poll::Ready(Err(Verdict::LoopFailed(error)));
                        }
                        Poll::Ready(Ok(())) => true,
                        Poll::Pending => false,
                    };
                    if let Some(answer) = call.answer(runtime) {
                        return Poll::Ready(answer.map_err(Verdict::Failed));
                    }
                    if scope.has_unpolled_tasks() {
                        continue;
                    }
                    if idle && !scope.has_tasks() {
                        return Poll::Ready(Err(Verdict::NeverSettled));
                    }
                    return Poll::Pending;
                }
            })
        })
        .await;
        match answer {
            Ok(answer) => {
                deno_core::scope!(v8_scope, runtime);
                let answer = v8::Local::new(v8_scope, answer);
                Verdict::Answered(answer.to_rust_string_lossy(v8_scope))
            }
            Err(verdict) => verdict,
        }
    }
}

/// Hands finished tasks to the bootstrap's `settle`; the event loop's next microtask
/// checkpoint runs what they unblocked.
fn deliver(runtime: &mut JsRuntime, settle: &v8::Global<v8::Function>, finished: Vec<Completion>) {
    deno_core::scope!(scope, runtime);
    v8::tc_scope!(let scope, scope);
    let settle = v8::Local::new(scope, settle);
    let receiver: v8::Local<v8::Value> = v8::undefined(scope).into();
    for (id, reply) in finished {
        let id: v8::Local<v8::Value> = v8::Integer::new_from_unsigned(scope, id).into();
        let reply = v8::String::new(scope, &reply)
            .or_else(|| v8::String::new(scope, "0the tool result is too large for the isolate"));
        let Some(reply) = reply else {
            continue;
        };
        if settle.call(scope, receiver, &[id, reply.into()]).is_none()
            && scope.is_execution_terminating()
        {
            return;
        }
    }
}
