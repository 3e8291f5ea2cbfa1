//! The task that owns a session's process group from its start to its end: it reaps the
//! shell, acts on stop requests, kills the tree past a budget, a deadline (the call's
//! `timeout`, `exec.idleTimeoutMs`, `exec.maxLifetimeMs`) or the end of the Code Mode run
//! that owns it, then lets the output drain, closes the file and reports the end. It sleeps
//! until one of those happens: an idle session costs no wake-ups.

use super::running::{Ended, Reason, Request, Session};
use crate::builtins::bash::run::{BUDGET_CHECK, REAP_GRACE, wait_for_reader};
use crate::process::{ProcessGroup, Scratch};
use nix::sys::signal::Signal as UnixSignal;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// What ends a session besides itself.
#[derive(Clone, Copy, Debug, Default)]
pub struct Deadlines {
    /// From its start (the call's `timeout`).
    pub timeout: Option<Duration>,
    /// From the last output or use (`exec.idleTimeoutMs`).
    pub idle: Option<Duration>,
    /// From its start (`exec.maxLifetimeMs`).
    pub lifetime: Option<Duration>,
}

/// Everything the supervisor owns.
pub struct Supervised {
    pub group: ProcessGroup,
    /// Removed when the session ends (held for its drop).
    #[allow(dead_code)]
    pub scratch: Option<Scratch>,
    pub readers: Vec<JoinHandle<()>>,
    pub requests: mpsc::UnboundedReceiver<Request>,
    pub deadlines: Deadlines,
    /// Fires when the Code Mode run that owns it settles.
    pub owner: Option<CancellationToken>,
    /// Dropped at the end: frees its place under `exec.maxSessions`.
    #[allow(dead_code)]
    pub slot: Box<dyn Send>,
}

/// Runs `session` to its end, then calls `ended` with it.
pub async fn supervise(
    session: Arc<Session>,
    mut run: Supervised,
    ended: impl FnOnce(&Arc<Session>) + Send,
) {
    let status = watch(&session, &mut run).await;
    for reader in std::mem::take(&mut run.readers) {
        wait_for_reader(reader).await;
    }
    let closing = session.clone();
    // Closing the file flushes its buffer: off the async threads.
    let _ = tokio::task::spawn_blocking(move || closing.lock().log.finish()).await;
    {
        let mut inner = session.lock();
        let reason = inner.stopping;
        inner.ended = Some(Ended {
            status,
            reason,
            runtime: session.started.elapsed(),
        });
    }
    drop(run);
    // The client is told before any waiter wakes: a `bash_output` that saw the end is
    // answered after `bash/exited` was queued.
    ended(&session);
    session.changed();
}

/// Waits for the shell's end, acting on requests and deadlines meanwhile; its status (none
/// when a killed shell could not be reaped).
async fn watch(session: &Session, run: &mut Supervised) -> Option<ExitStatus> {
    let owner = run.owner.clone().unwrap_or_default();
    let owned = run.owner.is_some();
    loop {
        let (due, why) = next_deadline(session, &run.deadlines);
        let stop = tokio::select! {
            waited = run.group.wait_within_budget(BUDGET_CHECK) => match waited {
                Ok(status) => return status.ok(),
                Err(exceeded) => Reason::Exceeded(exceeded),
            },
            request = run.requests.recv() => match request {
                Some(Request::Signal(UnixSignal::SIGKILL, reason)) => reason,
                Some(Request::Signal(signal, _)) => {
                    run.group.signal(signal);
                    continue;
                }
                // The session holds the sender as long as this task holds the session.
                None => Reason::Shutdown,
            },
            () = owner.cancelled(), if owned => Reason::RunEnded,
            () = sleep_until(due) => match why {
                Some(reason) if still_due(session, &run.deadlines, reason) => reason,
                _ => continue,
            },
        };
        session.lock().stopping.get_or_insert(stop);
        return run.group.kill_and_reap(REAP_GRACE).await;
    }
}

/// The earliest deadline and what it is.
fn next_deadline(session: &Session, deadlines: &Deadlines) -> (Option<Instant>, Option<Reason>) {
    let touched = session.lock().touched;
    [
        (
            deadlines.timeout.map(|d| session.started + d),
            Reason::TimedOut,
        ),
        (
            deadlines.lifetime.map(|d| session.started + d),
            Reason::Lifetime,
        ),
        (deadlines.idle.map(|d| touched + d), Reason::Idle),
    ]
    .into_iter()
    .filter_map(|(due, reason)| due.map(|due| (due, reason)))
    .min_by_key(|(due, _)| *due)
    .map_or((None, None), |(due, reason)| (Some(due), Some(reason)))
}

/// Whether `reason`'s deadline has passed now (the session may have been used since).
fn still_due(session: &Session, deadlines: &Deadlines, reason: Reason) -> bool {
    let (due, why) = next_deadline(session, deadlines);
    why == Some(reason) && due.is_some_and(|due| due <= Instant::now())
}

async fn sleep_until(due: Option<Instant>) {
    match due {
        Some(due) => tokio::time::sleep_until(due.into()).await,
        None => std::future::pending().await,
    }
}
