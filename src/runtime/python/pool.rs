//! The interpreter pool: keeps `size` interpreters started ahead of the runs, hands each run
//! one of them and never reuses it. A run that finds none ready starts one of its own at
//! once rather than waiting for another run to end (`size` is how many are kept warm; the
//! host caps runs alive with `codeRuntime.maxConcurrentRuns`).
//!
//! Each interpreter is a child of the pool's [fork server](super::server), fully set up
//! for its run (so a run pays only for handing its program over), or, where a server
//! cannot start or its child cannot confine itself, a fresh `python3` (the fallback,
//! reported as `capabilities.sandbox.pythonRunner`). A server that died (a program killed
//! it) is started again by the next boot; its waiting children died with it and are
//! passed over.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::frames::{self, Started};
use super::run::drive;
use super::server::ForkServer;
use super::spawn::{self, Interpreter};
use super::timing::{BOOT_GUARD, REFILL_DEFERRAL, RESPAWN_BACKOFF};
use crate::process::Sandbox;
use crate::process::sandbox::python_runner;
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
            server: tokio::sync::Mutex::new(None),
            fallback: OnceLock::new(),
            active_runs: AtomicUsize::new(0),
            run_ended: tokio::sync::Notify::new(),
        });
        if let Some(why) = python_runner::simulated_fallback() {
            start.fall_back(why);
        }
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
        let start = &self.inner.start;
        start.active_runs.fetch_add(1, Ordering::Relaxed);
        let outcome = drive(interpreter, request, self.inner.max_heap_mb, closed).await;
        start.active_runs.fetch_sub(1, Ordering::Relaxed);
        start.run_ended.notify_waiters();
        outcome
    }

    /// An interpreter that is ready now, if there is one (never waits: another run may be
    /// taking one this instant, and then this run starts its own). Children of a server
    /// that died are dropped on the way.
    fn ready_interpreter(&self) -> Option<Interpreter> {
        let mut ready = self.inner.ready.try_lock().ok()?;
        loop {
            let interpreter = ready.try_recv().ok()?;
            self.inner.ready_count.fetch_sub(1, Ordering::Relaxed);
            if interpreter.is_alive() {
                return Some(interpreter);
            }
        }
    }

    /// The fork server's pid while there is one (for measurements of its memory).
    pub async fn fork_server_pid(&self) -> Option<i32> {
        let server = self.inner.start.server.lock().await;
        server
            .as_ref()
            .filter(|s| s.is_alive())
            .and_then(|s| s.pid())
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

/// Tries the fork server as a pool would (starts one, forks a child confined by `sandbox`,
/// waits for it to be ready): `dsh-tools sandbox check`'s probe. A failure is recorded as
/// this process's fallback, so the report says why. Blocks while the interpreter starts.
pub async fn probe_fork_server(interpreter: &str, max_heap_mb: u64, sandbox: Sandbox) {
    if python_runner::simulated_fallback().is_some() || sandbox.unavailable().is_some() {
        return;
    }
    let Ok(interpreter) = spawn::find_interpreter(interpreter) else {
        return;
    };
    let start = Start {
        interpreter,
        max_heap_mb,
        sandbox,
        server: tokio::sync::Mutex::new(None),
        fallback: OnceLock::new(),
        active_runs: AtomicUsize::new(0),
        run_ended: tokio::sync::Notify::new(),
    };
    match start.fork().await {
        Ok(_) => {}
        Err(ForkFailure::Unusable(why) | ForkFailure::Failed(why)) => start.fall_back(why),
    }
}

/// How each interpreter of the pool starts.
struct Start {
    interpreter: PathBuf,
    max_heap_mb: u64,
    sandbox: Sandbox,
    /// The fork server, once started (started again when found dead).
    server: tokio::sync::Mutex<Option<Arc<ForkServer>>>,
    /// Why runs start fresh interpreters instead, once they do (for good).
    fallback: OnceLock<String>,
    /// Runs being driven now, and a wake-up as each ends: a refill waits for them.
    active_runs: AtomicUsize,
    run_ended: tokio::sync::Notify,
}

/// Why a child could not be forked.
enum ForkFailure {
    /// Forking cannot serve this pool: fall back to fresh interpreters.
    Unusable(String),
    /// This boot failed; the next may not.
    Failed(String),
}

impl Start {
    /// Waits until no run is being driven, for at most [`REFILL_DEFERRAL`]: preparing a child
    /// (fork, copy-on-write faults, its dry pass) takes CPU a run on a 2-core machine would
    /// otherwise wait for.
    async fn while_runs_are_active(&self) {
        let deadline = tokio::time::Instant::now() + REFILL_DEFERRAL;
        loop {
            let ended = self.run_ended.notified();
            tokio::pin!(ended);
            ended.as_mut().enable();
            if self.active_runs.load(Ordering::Relaxed) == 0 {
                return;
            }
            tokio::select! {
                () = ended => {}
                () = tokio::time::sleep_until(deadline) => return,
            }
        }
    }

    fn fall_back(&self, why: String) {
        tracing::warn!("Python Code Mode starts a fresh interpreter per run: {why}");
        python_runner::record_fallback(&why);
        let _ = self.fallback.set(why);
    }

    /// The live server, started (again) if there is none.
    async fn server(&self) -> Result<Arc<ForkServer>, ForkFailure> {
        let mut server = self.server.lock().await;
        if let Some(running) = server.as_ref().filter(|s| s.is_alive()) {
            return Ok(running.clone());
        }
        *server = None;
        let started = ForkServer::start(&self.interpreter, self.max_heap_mb, &self.sandbox)
            .await
            .map_err(|e| ForkFailure::Unusable(format!("the fork server could not start: {e}")))?;
        let started = Arc::new(started);
        *server = Some(started.clone());
        Ok(started)
    }

    /// A child of the server, ready for its program; a server found dead on the way is
    /// started again once.
    async fn fork(&self) -> Result<Interpreter, ForkFailure> {
        for _ in 0..2 {
            let server = self.server().await?;
            let mut child = match server.fork(&self.sandbox).await {
                Ok(child) => child,
                Err(_) if !server.is_alive() => continue,
                Err(error) => return Err(ForkFailure::Failed(error.to_string())),
            };
            let Some(from_child) = child.from_child.as_mut() else {
                return Err(ForkFailure::Failed("the child has no pipe".into()));
            };
            match tokio::time::timeout(BOOT_GUARD, frames::await_ready(from_child)).await {
                Ok(Started::Ready) => return Ok(child),
                Ok(Started::Refused(why)) => {
                    return Err(ForkFailure::Unusable(format!(
                        "a forked child could not take on its run's state: {why}"
                    )));
                }
                Ok(Started::Broken) | Err(_) if !server.is_alive() => continue,
                Ok(Started::Broken) | Err(_) => {
                    return Err(ForkFailure::Failed(
                        "the forked child did not finish starting".into(),
                    ));
                }
            }
        }
        Err(ForkFailure::Failed(
            "the fork server died twice in a row".into(),
        ))
    }
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
                booted = async {
                    start.while_runs_are_active().await;
                    boot(&start).await
                } => match booted {
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

/// Forks a child (or, in the fallback, starts an interpreter) and waits until it says it
/// is ready: only a booted interpreter is handed out, so its start-up costs a run neither
/// wall time nor compute budget.
async fn boot(start: &Start) -> Result<Interpreter, String> {
    if start.fallback.get().is_none() {
        match start.fork().await {
            Ok(child) => return Ok(child),
            Err(ForkFailure::Failed(why)) => return Err(why),
            Err(ForkFailure::Unusable(why)) => start.fall_back(why),
        }
    }
    let mut fresh = spawn::spawn(&start.interpreter, start.max_heap_mb, &start.sandbox)
        .map_err(|e| e.to_string())?;
    let from_child = fresh
        .from_child
        .as_mut()
        .ok_or_else(|| "the interpreter has no pipe".to_owned())?;
    match tokio::time::timeout(BOOT_GUARD, frames::await_ready(from_child)).await {
        Ok(Started::Ready) => Ok(fresh),
        _ => Err("the interpreter did not finish starting".to_owned()),
    }
}
