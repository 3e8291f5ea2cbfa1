//! The isolate pool: keeps fresh isolates warm on their own threads and hands each run to one of them under its budgets.
//!
//! `size` is how many isolates are kept warm, not how many runs may be alive: a run that
//! finds none ready gets one made for it at once (`slot::spawn_once`), so runs never queue
//! behind runs (whose bindings may be waiting for them). The host's cap on runs alive is
//! `codeRuntime.maxConcurrentRuns`, enforced before a run reaches the pool.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use parking_lot::Mutex;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::isolate::Job;
use super::slot::{self, Assignment, SlotShared, Ticket};
use super::snapshot::Startup;
use super::strip;
use super::supply::Supply;
use super::terminator::keep_terminating;
use crate::runtime::contract::{
    FailureKind, PoolConfig, RunFailure, RunOutcome, RunRequest, RuntimeError,
};
use crate::runtime::control::{RunControl, StopReason, Watch};
use crate::runtime::verdict;

/// A pool of fresh isolates; cheap to clone, and every clone drives the same threads.
#[derive(Clone)]
pub struct IsolatePool {
    inner: Arc<PoolInner>,
}

struct PoolInner {
    config: PoolConfig,
    tickets: tokio::sync::Mutex<Tickets>,
    supply: Arc<Supply>,
    closed: CancellationToken,
    /// What a slot made on demand shares with the warm ones.
    shared: SlotShared,
    /// The warm slots' supervisors, and those made on demand that may not have ended yet.
    threads: Mutex<Vec<JoinHandle<()>>>,
}

/// Offers of ready isolates, in the order they were made.
struct Tickets {
    offers: mpsc::Receiver<Ticket>,
    /// The next offer, taken out early because a run was anticipated (its isolate warms up).
    next: Option<Ticket>,
}

impl Tickets {
    fn try_take(&mut self) -> Option<Ticket> {
        self.next.take().or_else(|| self.offers.try_recv().ok())
    }
}

impl Drop for PoolInner {
    fn drop(&mut self) {
        // The last handle is gone: let every slot thread wind down.
        self.closed.cancel();
    }
}

const SHUT_DOWN: &str = "isolate pool shut down";

impl IsolatePool {
    /// Starts building the startup snapshot (once per process), starts `config.size` slots and waits
    /// until each has its first isolate ready. Blocks the calling thread for that long (a
    /// second or so the first time), so call it at startup or from `spawn_blocking`.
    pub fn new(config: PoolConfig) -> Result<Self, RuntimeError> {
        if config.size == 0 {
            return Err(RuntimeError::InvalidConfig("size must be at least 1"));
        }
        if config.max_heap_mb == 0 {
            return Err(RuntimeError::InvalidConfig(
                "max_heap_mb must be at least 1",
            ));
        }
        let startup = Startup::of_process()?;
        let (ready, tickets) = mpsc::channel(config.size);
        let supply = Arc::<Supply>::default();
        let closed = CancellationToken::new();
        let shared = SlotShared {
            max_heap_mb: config.max_heap_mb,
            startup,
            ready,
            supply: supply.clone(),
            closed: closed.clone(),
        };
        let inner = Arc::new(PoolInner {
            config,
            tickets: tokio::sync::Mutex::new(Tickets {
                offers: tickets,
                next: None,
            }),
            supply,
            closed,
            shared: shared.clone(),
            threads: Mutex::new(Vec::with_capacity(config.size)),
        });
        let (started, starts) = std::sync::mpsc::channel();
        for index in 0..config.size {
            let thread = slot::spawn(index, shared.clone(), started.clone())
                .map_err(|error| RuntimeError::Thread(error.to_string()))?;
            inner.threads.lock().push(thread);
        }
        drop(started);
        for _ in 0..config.size {
            match starts.recv() {
                Ok(Ok(())) => {}
                Ok(Err(message)) => return Err(RuntimeError::Isolate(message)),
                Err(_) => {
                    return Err(RuntimeError::Isolate(
                        "an isolate thread exited during startup".to_owned(),
                    ));
                }
            }
        }
        Ok(Self { inner })
    }

    /// Isolates created, bootstrapped and waiting for a run.
    pub fn ready_isolates(&self) -> usize {
        self.inner.supply.ready()
    }

    /// Isolates warmed up for an anticipated run since the pool started.
    pub fn warm_ups(&self) -> usize {
        self.inner.supply.warm_ups()
    }

    /// A run is on its way (its call entered the pipeline): the isolate it will most likely get
    /// warms up meanwhile, on its own thread. Never blocks; nothing happens when no isolate is
    /// ready or another run is taking one right now.
    pub fn anticipate(&self) {
        let Ok(mut tickets) = self.inner.tickets.try_lock() else {
            return;
        };
        if tickets.next.is_none() {
            tickets.next = tickets.offers.try_recv().ok();
        }
        if let Some(ticket) = &tickets.next {
            ticket.assign.warm();
        }
    }

    /// Strips the program's types, takes a ready isolate (or has one made for this run at
    /// once, never waiting for another run) and runs the program on it.
    pub async fn run(&self, request: RunRequest) -> RunOutcome {
        let RunRequest {
            code,
            limits,
            tools,
            host,
            abort,
        } = request;
        let early = |kind: FailureKind, message: String| {
            verdict::early_failure(RunFailure::new(kind, message), limits.max_output_bytes)
        };
        let closed = &self.inner.closed;
        if closed.is_cancelled() {
            return early(FailureKind::WorkerExit, SHUT_DOWN.to_owned());
        }
        // A ready isolate is taken (and its thread woken) before the types are stripped, so
        // the thread wakes while they are; with none ready, one is made for this run, and
        // stripping overlaps its creation.
        let source = match self.ready_ticket() {
            Some(ticket) => Source::Ready(ticket),
            None => match self.made_for_this_run() {
                Ok(made) => Source::Made(made),
                Err(error) => {
                    return early(
                        FailureKind::WorkerExit,
                        format!("could not start an isolate thread: {error}"),
                    );
                }
            },
        };
        let stripped = strip::strip_types_within(&code, limits.max_depth);
        // The source is not held through the run, only what the engine is given.
        drop(code);
        let code = match stripped {
            Ok(code) => code,
            // A ticket dropped unused offers its isolate again; one made for this run ends.
            Err(error) => return early(FailureKind::Exception, error.to_string()),
        };
        let ticket = match source {
            Source::Ready(ticket) => Some(ticket),
            Source::Made(made) => tokio::select! {
                biased;
                () = closed.cancelled() => None,
                () = abort.cancelled() => return early(FailureKind::Abort, "run aborted".to_owned()),
                made = made => match made {
                    Ok(ticket) => Some(ticket),
                    Err(_) => return early(
                        FailureKind::WorkerExit,
                        "could not create an isolate for the run".to_owned(),
                    ),
                },
            },
        };
        let Some(Ticket {
            assign,
            left,
            abandon,
        }) = ticket
        else {
            return early(FailureKind::WorkerExit, SHUT_DOWN.to_owned());
        };
        let on_stop = Box::new(move || keep_terminating(left, move || abandon.now()));
        let control = Arc::new(RunControl::new(on_stop, limits.max_output_bytes));
        let (reply, mut answer) = oneshot::channel();
        let job = Job {
            code,
            limits,
            tools,
            host,
            control: control.clone(),
            max_heap_mb: self.inner.config.max_heap_mb,
        };
        if assign.give(Assignment { job, reply }).is_err() {
            return early(
                FailureKind::WorkerExit,
                "the isolate thread exited before the run started".to_owned(),
            );
        }
        let stop_if_dropped = StopOnDrop(&control);
        let watch = Watch {
            control: &control,
            limits,
            started: Instant::now(),
            abort: &abort,
            shutdown: closed,
        };
        let answered = watch.answer(&mut answer).await;
        let reason = control.reason();
        drop(stop_if_dropped);
        match answered {
            Some(outcome) => outcome,
            None => match reason {
                Some(reason) if reason != StopReason::Finished => {
                    verdict::conclude(verdict::stopped, reason, control.take_output(), limits)
                }
                _ => early(
                    FailureKind::WorkerExit,
                    "the isolate thread exited during the run".to_owned(),
                ),
            },
        }
    }

    /// A ticket of an isolate that is ready now, its thread woken, if there is one.
    fn ready_ticket(&self) -> Option<Ticket> {
        let ticket = self.inner.tickets.try_lock().ok()?.try_take()?;
        ticket.assign.wake();
        self.inner.supply.taken();
        Some(ticket)
    }

    /// Starts a slot that makes one isolate for the calling run; its ticket arrives on the
    /// receiver (dropped unsent if the isolate cannot be made).
    fn made_for_this_run(&self) -> std::io::Result<oneshot::Receiver<Ticket>> {
        let (ticket, made) = oneshot::channel();
        let thread = slot::spawn_once(self.inner.shared.clone(), ticket)?;
        let mut threads = self.inner.threads.lock();
        // Those of earlier runs that have ended are joined now (at once: they are over), so
        // the list holds only the warm slots and the on-demand ones still alive.
        let mut index = 0;
        while index < threads.len() {
            if index >= self.inner.config.size && threads[index].is_finished() {
                let _ = threads.swap_remove(index).join();
            } else {
                index += 1;
            }
        }
        threads.push(thread);
        Ok(made)
    }

    /// Stops every run, lets every slot thread exit and waits for them.
    pub async fn shutdown(&self) {
        self.inner.closed.cancel();
        self.inner.supply.close();
        {
            let mut tickets = self.inner.tickets.lock().await;
            tickets.offers.close();
            while tickets.try_take().is_some() {
                self.inner.supply.withdrawn();
            }
        }
        let threads = std::mem::take(&mut *self.inner.threads.lock());
        let joined = tokio::task::spawn_blocking(move || {
            for thread in threads {
                if thread.join().is_err() {
                    tracing::error!("an isolate thread panicked while shutting down");
                }
            }
        });
        if joined.await.is_err() {
            tracing::error!("could not wait for the isolate threads");
        }
    }
}

/// Where a run's isolate comes from.
enum Source {
    /// A warm one, taken from the pool.
    Ready(Ticket),
    /// One being made for this run.
    Made(oneshot::Receiver<Ticket>),
}

/// Stops the run if the caller stops waiting for it, so no isolate keeps running unwatched.
struct StopOnDrop<'a>(&'a RunControl);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.stop(StopReason::Abort);
    }
}
