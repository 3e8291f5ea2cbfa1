//! The interpreter pool: keeps `size` fresh interpreters started ahead of the runs, hands
//! each run one of them and never reuses it. A run that finds none ready starts one of its
//! own at once rather than waiting for another run to end (`size` is how many are kept
//! warm; the host caps runs alive with `codeRuntime.maxConcurrentRuns`).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::frames;
use super::run::drive;
use super::spawn::{self, Interpreter};
use super::timing::{BOOT_GUARD, RESPAWN_BACKOFF};
use crate::process::Sandbox;
use crate::runtime::contract::{FailureKind, RunFailure, RunOutcome, RunRequest, RuntimeError};
use crate::runtime::verdict;

/// How the pool starts interpreters.
#[derive(Debug, Clone)]
pub struct PythonConfig {
    /// `python3` (looked up on PATH) or a path.
    pub interpreter: String,
    /// Interpreters kept started ahead of the runs; at least 1.
    pub size: usize,
    /// Address-space cap of one interpreter (RLIMIT_AS), in MiB.
    pub max_heap_mb: u64,
    /// Applied to each interpreter before it boots (its scratch dir is writable too).
    pub sandbox: Sandbox,
}

/// A pool of fresh interpreters; cheap to clone, every clone shares them.
#[derive(Clone)]
pub struct PythonPool {
    inner: Arc<Inner>,
}

struct Inner {
    max_heap_mb: u64,
    /// How interpreters start, for one started for a run that found none ready.
    start: Arc<Start>,
    ready: tokio::sync::Mutex<mpsc::Receiver<Interpreter>>,
    ready_count: Arc<AtomicUsize>,
    closed: CancellationToken,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.closed.cancel();
    }
}

impl PythonPool {
    /// Finds the interpreter (running it once, so a missing or broken `python3` is an error
    /// here rather than on the first run; this blocks) and keeps `size` started from then
    /// on. Call inside a tokio runtime.
    pub fn new(config: PythonConfig) -> Result<Self, RuntimeError> {
        if config.size == 0 {
            return Err(RuntimeError::InvalidConfig("size must be at least 1"));
        }
        if config.max_heap_mb == 0 {
            return Err(RuntimeError::InvalidConfig(
                "max_heap_mb must be at least 1",
            ));
        }
        if let Some(message) = config.sandbox.unavailable() {
            return Err(RuntimeError::Unavailable(message.to_owned()));
        }
        let interpreter =
            spawn::find_interpreter(&config.interpreter).map_err(RuntimeError::Bootstrap)?;
        let (sender, receiver) = mpsc::channel(config.size);
        let ready_count = Arc::new(AtomicUsize::new(0));
        let closed = CancellationToken::new();
        let start = Arc::new(Start {
            interpreter,
            max_heap_mb: config.max_heap_mb,
            sandbox: config.sandbox,
        });
        tokio::spawn(refill(
            sender,
            start.clone(),
            ready_count.clone(),
            closed.clone(),
        ));
        Ok(PythonPool {
            inner: Arc::new(Inner {
                max_heap_mb: config.max_heap_mb,
                start,
                ready: tokio::sync::Mutex::new(receiver),
                ready_count,
                closed,
            }),
        })
    }

    /// Interpreters started and waiting for a run.
    pub fn ready_interpreters(&self) -> usize {
        self.inner.ready_count.load(Ordering::Relaxed)
    }

    /// Takes a ready interpreter, or starts one for this run at once, and runs the program
    /// on it.
    pub async fn run(&self, request: RunRequest) -> RunOutcome {
        let cap = request.limits.max_output_bytes;
        let early = |kind: FailureKind, message: &str| {
            verdict::early_failure(RunFailure::new(kind, message), cap)
        };
        let closed = &self.inner.closed;
        if closed.is_cancelled() {
            return early(FailureKind::WorkerExit, "interpreter pool shut down");
        }
        let interpreter = match self.ready_interpreter() {
            Some(interpreter) => interpreter,
            None => {
                let booted = tokio::select! {
                    biased;
                    () = closed.cancelled() => {
                        return early(FailureKind::WorkerExit, "interpreter pool shut down");
                    }
                    () = request.abort.cancelled() => return early(FailureKind::Abort, "run aborted"),
                    booted = boot(&self.inner.start) => booted,
                };
                match booted {
                    Ok(interpreter) => interpreter,
                    Err(error) => {
                        let message =
                            format!("could not start an interpreter for the run: {error}");
                        return early(FailureKind::WorkerExit, &message);
                    }
                }
            }
        };
        drive(interpreter, request, self.inner.max_heap_mb, closed).await
    }

    /// An interpreter that is ready now, if there is one (never waits: another run may be
    /// taking one this instant, and then this run starts its own).
    fn ready_interpreter(&self) -> Option<Interpreter> {
        let interpreter = self.inner.ready.try_lock().ok()?.try_recv().ok()?;
        self.inner.ready_count.fetch_sub(1, Ordering::Relaxed);
        Some(interpreter)
    }

    /// Stops every run and kills every waiting interpreter.
    pub async fn shutdown(&self) {
        self.inner.closed.cancel();
        let mut ready = self.inner.ready.lock().await;
        ready.close();
        while ready.try_recv().is_ok() {
            self.inner.ready_count.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// How each interpreter of the pool starts.
struct Start {
    interpreter: PathBuf,
    max_heap_mb: u64,
    sandbox: Sandbox,
}

/// Starts interpreters as runs take them, each booting on a task of its own, until the
/// pool closes.
async fn refill(
    sender: mpsc::Sender<Interpreter>,
    start: Arc<Start>,
    ready_count: Arc<AtomicUsize>,
    closed: CancellationToken,
) {
    loop {
        let permit = tokio::select! {
            () = closed.cancelled() => return,
            permit = sender.clone().reserve_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => return,
            },
        };
        let (start, ready_count, closed) = (start.clone(), ready_count.clone(), closed.clone());
        tokio::spawn(async move {
            tokio::select! {
                () = closed.cancelled() => {}
                booted = boot(&start) => match booted {
                    Ok(fresh) => {
                        permit.send(fresh);
                        ready_count.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(error) => {
                        tracing::warn!("could not start {}: {error}", start.interpreter.display());
                        // The permit is held through the pause, so failures do not spin.
                        tokio::time::sleep(RESPAWN_BACKOFF).await;
                    }
                },
            }
        });
    }
}

/// Starts an interpreter and waits until it says it is ready: only a booted interpreter is
/// handed out, so its start-up costs a run neither wall time nor compute budget.
async fn boot(start: &Start) -> Result<Interpreter, String> {
    let mut fresh = spawn::spawn(&start.interpreter, start.max_heap_mb, &start.sandbox)
        .map_err(|e| e.to_string())?;
    let from_child = fresh
        .from_child
        .as_mut()
        .ok_or_else(|| "the interpreter has no pipe".to_owned())?;
    match tokio::time::timeout(BOOT_GUARD, frames::await_ready(from_child)).await {
        Ok(true) => Ok(fresh),
        Ok(false) | Err(_) => Err("the interpreter did not finish starting".to_owned()),
    }
}
