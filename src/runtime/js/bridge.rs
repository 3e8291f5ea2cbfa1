//! The ops the bootstrap captures (binding call, console line, timers, proxy probe, depth
//! bound, tool names) and the run-scoped task table they feed.
//!
//! Every op is synchronous: a binding call whose host future is ready at once answers in the
//! same op call; otherwise the op answers with a task id and the isolate's driver polls the
//! task, handing its reply to the bootstrap's `settle` function. No deno_core async-op
//! machinery (and none of its JavaScript) is involved.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use deno_core::{Extension, OpDecl, OpState, op2, v8};
use futures::future::{AbortHandle, Abortable, LocalBoxFuture};
use futures::stream::{FuturesUnordered, StreamExt};
use futures::{FutureExt, task::noop_waker_ref};

use crate::runtime::contract::{BindingHost, LogStream};
use crate::runtime::control::{RunControl, StopReason};
use crate::runtime::output::{Admission, OutputBudget};

/// A finished task: its id and the reply for `settle` (empty for timers).
pub(crate) type Completion = (u32, String);

/// What one run lends its isolate: the host, the control block and the run-scoped tasks.
pub(crate) struct RunScope {
    host: Arc<dyn BindingHost>,
    control: Arc<RunControl>,
    /// Deepest JSON nesting a binding call's arguments may have.
    max_depth: usize,
    /// The names `tools` binds, as the JSON array the bootstrap reads when the run starts.
    tools_json: String,
    tasks: RefCell<FuturesUnordered<LocalBoxFuture<'static, Option<Completion>>>>,
    timers: RefCell<HashMap<u32, AbortHandle>>,
    next_task: Cell<u32>,
    /// Tasks were added since the driver last polled: it must poll before going idle.
    added: Cell<bool>,
}

impl RunScope {
    pub(crate) fn new(
        host: Arc<dyn BindingHost>,
        control: Arc<RunControl>,
        max_depth: usize,
        tools: Vec<String>,
    ) -> Self {
        let tools_json = serde_json::to_string(&tools).unwrap_or_else(|_| "[]".to_owned());
        Self {
            host,
            control,
            max_depth,
            tools_json,
            tasks: RefCell::new(FuturesUnordered::new()),
            timers: RefCell::new(HashMap::new()),
            next_task: Cell::new(1),
            added: Cell::new(false),
        }
    }

    fn add_task(&self, task: LocalBoxFuture<'static, Option<Completion>>) {
        self.tasks.borrow_mut().push(task);
        self.added.set(true);
    }

    fn next_id(&self) -> u32 {
        let id = self.next_task.get();
        self.next_task.set(id.wrapping_add(1).max(1));
        id
    }

    /// Polls the outstanding tasks and returns those that finished.
    pub(crate) fn poll_tasks(&self, cx: &mut Context<'_>) -> Vec<Completion> {
        self.added.set(false);
        let mut tasks = self.tasks.borrow_mut();
        let mut finished = Vec::new();
        while let Poll::Ready(Some(completion)) = tasks.poll_next_unpin(cx) {
            if let Some((id, reply)) = completion {
                self.timers.borrow_mut().remove(&id);
                finished.push((id, reply));
            }
        }
        finished
    }

    /// Whether ops added tasks that have not been polled with the driver's waker yet.
    pub(crate) fn has_unpolled_tasks(&self) -> bool {
        self.added.get()
    }

    pub(crate) fn has_tasks(&self) -> bool {
        !self.tasks.borrow().is_empty()
    }

    /// Drops every outstanding binding future and timer, so nothing of the run outlives it,
    /// and hands back the run's output.
    pub(crate) fn close(&self) -> OutputBudget {
        let tasks = std::mem::take(&mut *self.tasks.borrow_mut());
        drop(tasks);
        self.timers.borrow_mut().clear();
        self.control.take_output()
    }
}

/// The extension every isolate is created with.
pub(crate) fn extension() -> Extension {
    const OPS: &[OpDecl] = &[
        op_dsh_call(),
        op_dsh_log(),
        op_dsh_timer(),
        op_dsh_cancel_timer(),
        op_dsh_is_proxy(),
        op_dsh_max_depth(),
        op_dsh_tool_names(),
    ];
    Extension {
        name: "dsh_runtime",
        ops: Cow::Borrowed(OPS),
        middleware_fn: Some(Box::new(disable_unneeded_core_ops)),
        ..Default::default()
    }
}

/// Core ops with effects outside the isolate (stdout, panics, resources, code loading) are
/// disabled outright, so even a leaked handle to them would do nothing.
fn disable_unneeded_core_ops(op: OpDecl) -> OpDecl {
    const DISABLED: &[&str] = &[
        "op_print",
        "op_panic",
        "op_resources",
        "op_close",
        "op_try_close",
        "op_cancel_read",
        "op_read",
        "op_read_all",
        "op_write",
        "op_read_sync",
        "op_write_sync",
        "op_write_all",
        "op_pipe",
        "op_write_type_error",
        "op_shutdown",
        "op_is_terminal",
        "op_import_sync",
        "op_import_sync_with_source",
        "op_lazy_load_esm",
        "op_load_ext_script",
        "op_eval_context",
        "op_compile_function",
        "op_wasm_streaming_feed",
        "op_wasm_streaming_set_url",
        "op_set_wasm_streaming_callback",
        "op_abort_wasm_streaming",
        "op_memory_usage",
        "op_leak_tracing_enable",
        "op_leak_tracing_submit",
        "op_leak_tracing_get_all",
        "op_leak_tracing_get",
    ];
    if DISABLED.contains(&op.name) {
        op.disable()
    } else {
        op
    }
}

fn run_scope(state: &OpState) -> Option<Rc<RunScope>> {
    state.try_borrow::<Rc<RunScope>>().cloned()
}

/// Starts one binding call. Answers "1<json>" (value) or "0<message>" (failure) when the host
/// answered at once, else "p<task id>" for `settle` to complete later.
#[op2]
#[string]
fn op_dsh_call(state: &mut OpState, #[string] name: &str, #[string] arguments: &str) -> String {
    let Some(scope) = run_scope(state) else {
        return failure("no run is active");
    };
    if scope.control.is_stopped() {
        return failure("the run is over");
    }
    let arguments = match crate::json::parse_within(arguments, scope.max_depth) {
        Ok(value) => value,
        Err(error) => return failure(&format!("arguments must be lossless JSON: {error}")),
    };
    // A panic must not unwind into the engine's C frames: it fails this call instead.
    let started = std::panic::catch_unwind(AssertUnwindSafe(|| {
        let mut future = scope.host.call(name, arguments);
        // The driver polls again with its own waker before it goes idle (`has_unpolled_tasks`).
        match future.poll_unpin(&mut Context::from_waker(noop_waker_ref())) {
            Poll::Ready(result) => Err(result),
            Poll::Pending => Ok(future),
        }
    }));
    match started {
        Ok(Ok(future)) => {
            let id = scope.next_id();
            scope.add_task(Box::pin(
                future.map(move |result| Some((id, encode_reply(result)))),
            ));
            format!("p{id}")
        }
        Ok(Err(answered)) => encode_reply(answered),
        Err(_) => failure("the tool host failed"),
    }
}

fn failure(message: &str) -> String {
    let mut reply = String::with_capacity(message.len() + 1);
    reply.push('0');
    reply.push_str(message);
    reply
}

/// The reply the bootstrap settles a binding with, the value rendered without recursion so a
/// result of any depth the transport let through reaches the program.
fn encode_reply(result: Result<serde_json::Value, String>) -> String {
    match result {
        Ok(value) => {
            let json = crate::json::render_compact(&value);
            crate::json::drop_deep(value);
            let mut reply = String::with_capacity(json.len() + 1);
            reply.push('1');
            reply.push_str(&json);
            reply
        }
        Err(message) => failure(&message),
    }
}

/// One console line: kept and forwarded while the output budget lasts, else the run stops.
#[op2(fast)]
fn op_dsh_log(state: &mut OpState, #[smi] stream: u32, #[string] text: &str) {
    let Some(scope) = run_scope(state) else {
        return;
    };
    let stream = match stream {
        0 => LogStream::Log,
        1 => LogStream::Info,
        2 => LogStream::Warn,
        3 => LogStream::Error,
        _ => LogStream::Debug,
    };
    let admission = scope.control.push_output(text);
    match admission {
        Admission::Accepted => {
            // A panic must not unwind into the engine's C frames; the line is kept regardless.
            // Unmetered: the front end may hold the line while its client is not reading.
            let forwarded = scope.control.unmetered(|| {
                std::panic::catch_unwind(AssertUnwindSafe(|| scope.host.log(stream, text)))
            });
            if forwarded.is_err() {
                tracing::error!("the binding host panicked while taking a console line");
            }
        }
        Admission::Refused => scope.control.stop(StopReason::OutputLimit),
    }
}

/// Starts a run-scoped timer and returns its task id (0 when no run is active).
#[op2(fast)]
#[smi]
fn op_dsh_timer(state: &mut OpState, #[smi] ms: u32) -> u32 {
    let Some(scope) = run_scope(state) else {
        return 0;
    };
    let id = scope.next_id();
    let (abort, registration) = AbortHandle::new_pair();
    let sleep = tokio::time::sleep(Duration::from_millis(u64::from(ms)));
    scope.timers.borrow_mut().insert(id, abort);
    scope.add_task(Box::pin(
        Abortable::new(sleep, registration)
            .map(move |fired| fired.ok().map(|()| (id, String::new()))),
    ));
    id
}

#[op2(fast)]
fn op_dsh_cancel_timer(state: &mut OpState, #[smi] id: u32) {
    if let Some(scope) = run_scope(state)
        && let Some(abort) = scope.timers.borrow_mut().remove(&id)
    {
        abort.abort();
    }
}

/// The run's JSON depth bound, which the bootstrap's lossless snapshot enforces with a path.
#[op2(fast)]
fn op_dsh_max_depth(state: &mut OpState) -> u32 {
    run_scope(state).map_or(0, |scope| {
        u32::try_from(scope.max_depth).unwrap_or(u32::MAX)
    })
}

/// The names the run's `tools` object binds, as a JSON array of strings.
#[op2]
#[string]
fn op_dsh_tool_names(state: &mut OpState) -> String {
    run_scope(state).map_or_else(|| "[]".to_owned(), |scope| scope.tools_json.clone())
}

/// Whether a value is a Proxy: the one exotic object JavaScript cannot detect without running its traps.
#[op2(fast)]
fn op_dsh_is_proxy(value: v8::Local<v8::Value>) -> bool {
    value.is_proxy()
}
