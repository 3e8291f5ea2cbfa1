//! The isolate pool: keeps fresh isolates warm on their own threads and hands each run to one of them under its budgets.

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

    async fn take(&mut self) -> Option<Ticket> {
        match self.next.take() {
            Some(ticket) => Some(ticket),
            None => self.offers.recv().await,
        }
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
        let inner = Arc::new(PoolInner {
            config,
            tickets: tokio::sync::Mutex::new(Tickets {
                offers: tickets,
                next: None,
            }),
            supply: Arc::default(),
            closed: CancellationToken::new(),
            threads: Mutex::new(Vec::with_capacity(config.size)),
        });
        let shared = SlotShared {
            max_heap_mb: config.max_heap_mb,
            startup,
            ready,
            supply: inner.supply.clone(),
            closed: inner.closed.clone(),
        };
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

    /// Strips the program's types, waits for a ready isolate and runs the program on it.
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
        // A ready isolate is taken (and its thread woken) before the types are stripped, so
        // the thread wakes while they are; with none ready, stripping overlaps the wait.
        let ready = self.ready_ticket();
        let code = match strip::strip_types(&code) {
            Ok(code) => code,
            // A ticket dropped unused offers its isolate again.
            Err(error) => return early(FailureKind::Exception, error.to_string()),
        };
        let closed = &self.inner.closed;
        let ticket = match ready {
            Some(ticket) => Some(ticket),
            None => tokio::select! {
                biased;
                () = closed.cancelled() => None,
                () = abort.cancelled() => return early(FailureKind::Abort, "run aborted".to_owned()),
                ticket = self.next_ticket() => ticket,
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

    /// Waits for the next ready isolate; `None` once the pool is shut down.
    async fn next_ticket(&self) -> Option<Ticket> {
        let ticket = self.inner.tickets.lock().await.take().await?;
        self.inner.supply.taken();
        Some(ticket)
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

/// Stops the run if the caller stops waiting for it, so no isolate keeps running unwatched.
struct StopOnDrop<'a>(&'a RunControl);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.stop(StopReason::Abort);
    }
}
