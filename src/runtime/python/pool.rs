//! The interpreter pool: keeps `size` fresh interpreters started ahead of the runs, hands
//! each run one of them and never reuses it.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::run::drive;
use super::spawn::{self, Interpreter};
use crate::runtime::contract::{FailureKind, RunFailure, RunOutcome, RunRequest, RuntimeError};
use crate::runtime::verdict;

/// How the pool starts interpreters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PythonConfig {
    /// `python3` (looked up on PATH) or a path.
    pub interpreter: String,
    /// Interpreters kept started (and runs that may execute at once); at least 1.
    pub size: usize,
    /// Address-space cap of one interpreter (RLIMIT_AS), in MiB.
    pub max_heap_mb: u64,
}

/// Pause before trying again after an interpreter failed to start.
const RESPAWN_BACKOFF: Duration = Duration::from_millis(500);

/// A pool of fresh interpreters; cheap to clone, every clone shares them.
#[derive(Clone)]
pub struct PythonPool {
    inner: Arc<Inner>,
}

struct Inner {
    max_heap_mb: u64,
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
    /// Finds the interpreter, starts the first one (so a missing or broken `python3` is an
    /// error here rather than on the first run) and keeps `size` started from then on.
    /// Call inside a tokio runtime.
    pub fn new(config: PythonConfig) -> Result<Self, RuntimeError> {
        if config.size == 0 {
            return Err(RuntimeError::InvalidConfig("size must be at least 1"));
        }
        if config.max_heap_mb == 0 {
            return Err(RuntimeError::InvalidConfig(
                "max_heap_mb must be at least 1",
            ));
        }
        let interpreter =
            spawn::find_interpreter(&config.interpreter).map_err(RuntimeError::Bootstrap)?;
        let first = spawn::spawn(&interpreter, config.max_heap_mb).map_err(|error| {
            RuntimeError::Bootstrap(format!(
                "could not start {}: {error}",
                interpreter.display()
            ))
        })?;
        let (sender, receiver) = mpsc::channel(config.size);
        let ready_count = Arc::new(AtomicUsize::new(0));
        if sender.try_send(first).is_ok() {
            ready_count.fetch_add(1, Ordering::Relaxed);
        }
        let closed = CancellationToken::new();
        tokio::spawn(refill(
            sender,
            interpreter,
            config.max_heap_mb,
            ready_count.clone(),
            closed.clone(),
        ));
        Ok(PythonPool {
            inner: Arc::new(Inner {
                max_heap_mb: config.max_heap_mb,
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

    /// Waits for a fresh interpreter and runs the program on it.
    pub async fn run(&self, request: RunRequest) -> RunOutcome {
        let cap = request.limits.max_output_bytes;
        let early = |kind: FailureKind, message: &str| {
            verdict::early_failure(RunFailure::new(kind, message), cap)
        };
        let closed = &self.inner.closed;
        let interpreter = tokio::select! {
            biased;
            () = closed.cancelled() => None,
            () = request.abort.cancelled() => return early(FailureKind::Abort, "run aborted"),
            interpreter = async { self.inner.ready.lock().await.recv().await } => interpreter,
        };
        let Some(interpreter) = interpreter else {
            return early(FailureKind::WorkerExit, "interpreter pool shut down");
        };
        self.inner.ready_count.fetch_sub(1, Ordering::Relaxed);
        drive(interpreter, request, self.inner.max_heap_mb, closed).await
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

/// Starts interpreters as runs take them, until the pool closes.
async fn refill(
    sender: mpsc::Sender<Interpreter>,
    interpreter: PathBuf,
    max_heap_mb: u64,
    ready_count: Arc<AtomicUsize>,
    closed: CancellationToken,
) {
    loop {
        let permit = tokio::select! {
            () = closed.cancelled() => return,
            permit = sender.reserve() => match permit {
                Ok(permit) => permit,
                Err(_) => return,
            },
        };
        match spawn::spawn(&interpreter, max_heap_mb) {
            Ok(fresh) => {
                permit.send(fresh);
                ready_count.fetch_add(1, Ordering::Relaxed);
            }
            Err(error) => {
                drop(permit);
                tracing::warn!("could not start {}: {error}", interpreter.display());
                tokio::select! {
                    () = closed.cancelled() => return,
                    () = tokio::time::sleep(RESPAWN_BACKOFF) => {}
                }
            }
        }
    }
}
