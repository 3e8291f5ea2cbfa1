//! One pool slot: a dedicated thread that keeps a fresh isolate ready, runs one job on it, drops it and builds the next.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use deno_core::v8;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::contract::RunOutcome;
use super::isolate::{FreshIsolate, Job};

/// JavaScript gets 1 MiB of stack from the engine; the rest is for the Rust and C frames below it.
const THREAD_STACK_BYTES: usize = 8 * 1024 * 1024;
/// Pause before retrying after an isolate could not be created, so a failure does not spin.
const RETRY_PAUSE: Duration = Duration::from_millis(100);

/// A ready isolate, offered to the next run.
pub(crate) struct Ticket {
    pub(crate) isolate: v8::IsolateHandle,
    pub(crate) assign: oneshot::Sender<Assignment>,
}

/// A job handed to a ready isolate, with where its outcome goes.
pub(crate) struct Assignment {
    pub(crate) job: Job,
    pub(crate) reply: oneshot::Sender<RunOutcome>,
}

/// What every slot thread shares with the pool.
#[derive(Clone)]
pub(crate) struct SlotShared {
    pub(crate) max_heap_mb: u64,
    pub(crate) bootstrap: &'static str,
    pub(crate) ready: mpsc::Sender<Ticket>,
    pub(crate) ready_count: Arc<AtomicUsize>,
    pub(crate) closed: CancellationToken,
}

enum Cycle {
    Continue,
    Exit,
}

/// Starts a slot thread; `started` receives whether its first isolate could be created.
pub(crate) fn spawn(
    index: usize,
    shared: SlotShared,
    started: std::sync::mpsc::Sender<Result<(), String>>,
) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name(format!("dsh-isolate-{index}"))
        .stack_size(THREAD_STACK_BYTES)
        .spawn(move || serve(&shared, started))
}

fn serve(shared: &SlotShared, started: std::sync::mpsc::Sender<Result<(), String>>) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            let _ = started.send(Err(format!("no event loop for the isolate: {error}")));
            return;
        }
    };
    let mut started = Some(started);
    while !shared.closed.is_cancelled() {
        let cycle = std::panic::catch_unwind(AssertUnwindSafe(|| {
            runtime.block_on(serve_one_isolate(shared, &mut started))
        }));
        match cycle {
            Ok(Cycle::Continue) => {}
            Ok(Cycle::Exit) => return,
            Err(_) => tracing::error!("an isolate thread panicked; building a fresh isolate"),
        }
    }
}

/// Builds one isolate, offers it until a job takes it, runs that job and drops the isolate.
async fn serve_one_isolate(
    shared: &SlotShared,
    started: &mut Option<std::sync::mpsc::Sender<Result<(), String>>>,
) -> Cycle {
    let mut isolate = match FreshIsolate::new(shared.max_heap_mb, shared.bootstrap) {
        Ok(isolate) => isolate,
        Err(message) => {
            if let Some(started) = started.take() {
                let _ = started.send(Err(message));
                return Cycle::Exit;
            }
            tracing::error!(%message, "could not build a fresh isolate");
            return tokio::select! {
                () = shared.closed.cancelled() => Cycle::Exit,
                () = tokio::time::sleep(RETRY_PAUSE) => Cycle::Continue,
            };
        }
    };
    if let Some(started) = started.take() {
        let _ = started.send(Ok(()));
    }
    loop {
        let (assign, assigned) = oneshot::channel();
        let ticket = Ticket {
            isolate: isolate.handle(),
            assign,
        };
        shared.ready_count.fetch_add(1, Ordering::Relaxed);
        if shared.ready.send(ticket).await.is_err() {
            shared.ready_count.fetch_sub(1, Ordering::Relaxed);
            return Cycle::Exit;
        }
        match assigned.await {
            Ok(Assignment { job, reply }) => {
                let outcome = isolate.run(job).await;
                let _ = reply.send(outcome);
                // The isolate is dropped here, after the caller has its answer.
                return Cycle::Continue;
            }
            // The run that took the ticket went away before using it: offer the isolate again.
            Err(_) if !shared.closed.is_cancelled() => {}
            Err(_) => return Cycle::Exit,
        }
    }
}
