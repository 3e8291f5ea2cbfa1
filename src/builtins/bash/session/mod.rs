//! Exec sessions: `bash` commands that outlive their call. A call with `yieldMs` or
//! `background` (or `tty`) starts its command as a session; if the command is still running
//! when the call yields, the model gets it as `bash-<n>` and works with it through
//! `bash_output`, `bash_write`, `bash_kill` and `bash_sessions`. The host owns every
//! session: at most `exec.maxSessions` run at once, each belongs to the agent scope that
//! started it (and ends with it), a Code Mode run's end with that run unless detached, and
//! each is killed past its idle or absolute lifetime. When one ends, [`SessionEvents`]
//! tell the front end (`bash/exited`), so nobody has to poll.

mod log;
mod running;
mod start;
mod supervisor;
pub mod terminal;
pub mod tools;
mod view;

pub use running::{Reason, Session};
pub use start::{Outcome, SessionCall, start};
pub use view::{SessionOutput, session_output_schema};

use crate::process::Loopbacks;
use crate::tool::{AgentId, ToolError};
use dsh_tools_protocol::{BashExitedNotification, ExecConfig};
use nix::sys::signal::Signal as UnixSignal;
use parking_lot::{Mutex, RwLock};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Ended sessions kept for their last read, oldest forgotten first.
const ENDED_KEPT: usize = 64;

/// Whoever tells the client that a session ended.
pub trait SessionEvents: Send + Sync {
    /// A session the model was given ended.
    fn exited(&self, exited: &BashExitedNotification);
}

/// Every session of one host, and each agent scope's loopback network.
#[derive(Default)]
pub struct ExecSessions {
    /// The network each scope's sandboxed commands share (its loopback up).
    pub loopbacks: Loopbacks,
    /// The proxy of `bash`'s network policy, when it has one (for `tools/metrics`).
    pub egress: RwLock<Option<Arc<crate::egress::Egress>>>,
    /// `web_fetch`'s policy and refusal log, when it is registered (for `tools/metrics`).
    pub web_egress: RwLock<Option<Arc<crate::egress::Egress>>>,
    settings: RwLock<ExecConfig>,
    table: Mutex<Table>,
    next: AtomicU64,
    events: RwLock<Option<Arc<dyn SessionEvents>>>,
}

#[derive(Default)]
struct Table {
    /// Commands alive that may become sessions (each holds a [`Slot`]).
    alive: usize,
    /// By number, so listings keep the order they started in.
    sessions: BTreeMap<u64, Arc<Session>>,
}

/// A place under `exec.maxSessions`, held until the command ends.
pub struct Slot(Arc<ExecSessions>);

impl Drop for Slot {
    fn drop(&mut self) {
        let mut table = self.0.table.lock();
        table.alive = table.alive.saturating_sub(1);
    }
}

impl ExecSessions {
    pub fn new() -> Arc<Self> {
        Arc::new(ExecSessions::default())
    }

    /// Applies the `exec` section (to sessions started from now on).
    pub fn configure(&self, config: &ExecConfig) {
        *self.settings.write() = config.clone();
    }

    /// Connections the proxy of `bash`'s network policy refused so far.
    pub fn blocked_connections(&self) -> u64 {
        self.egress
            .read()
            .as_ref()
            .map_or(0, |egress| egress.refusals())
    }

    /// Connections `web_fetch`'s policy refused so far.
    pub fn blocked_fetches(&self) -> u64 {
        self.web_egress
            .read()
            .as_ref()
            .map_or(0, |egress| egress.refusals())
    }

    /// Sets who is told of ends (`None`: nobody).
    pub fn set_events(&self, events: Option<Arc<dyn SessionEvents>>) {
        *self.events.write() = events;
    }

    /// The idle and absolute lifetimes configured.
    fn lifetimes(&self) -> (Option<Duration>, Option<Duration>) {
        let settings = self.settings.read();
        let ms = |ms: u64| (ms > 0).then(|| Duration::from_millis(ms));
        (ms(settings.idle_timeout_ms), ms(settings.max_lifetime_ms))
    }

    /// A place for one more command that may become a session, unless
    /// `exec.maxSessions` are alive.
    fn reserve(self: &Arc<Self>) -> Result<(Slot, String), ToolError> {
        let max = self.settings.read().max_sessions.max(1) as usize;
        let mut table = self.table.lock();
        if table.alive >= max {
            return Err(ToolError::new(format!(
                "bash refused: {} sessions are already running, the most exec.maxSessions \
                 allows; end one with bash_kill (bash_sessions lists them) or wait for one to \
                 exit",
                table.alive
            )));
        }
        table.alive += 1;
        let number = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        Ok((Slot(self.clone()), format!("bash-{number}")))
    }

    fn insert(&self, session: Arc<Session>) {
        let number = number_of(&session.id);
        self.table.lock().sessions.insert(number, session);
    }

    fn remove(&self, session: &Session) {
        self.table.lock().sessions.remove(&number_of(&session.id));
    }

    /// The session `id` of `scope`, once the model was given it.
    pub fn find(&self, id: &str, scope: Option<&AgentId>) -> Result<Arc<Session>, ToolError> {
        let table = self.table.lock();
        table
            .sessions
            .get(&number_of(id))
            .filter(|s| s.id == id && s.scope.as_ref() == scope && s.lock().adopted)
            .cloned()
            .ok_or_else(|| {
                ToolError::new(format!(
                    "no session \"{id}\" in this scope (bash_sessions lists them; an ended \
                     session is forgotten once its last output was read)"
                ))
            })
    }

    /// The command of session `id` (any scope: for a card of this host's own UI).
    pub fn command_of(&self, id: &str) -> Option<String> {
        let table = self.table.lock();
        let session = table.sessions.get(&number_of(id))?;
        Some(session.command.clone())
    }

    /// The sessions of `scope` the model was given, in the order they started.
    pub fn list(&self, scope: Option<&AgentId>) -> Vec<Arc<Session>> {
        self.table
            .lock()
            .sessions
            .values()
            .filter(|s| s.scope.as_ref() == scope && s.lock().adopted)
            .cloned()
            .collect()
    }

    /// Forgets an ended session whose last output was read.
    pub fn forget_if_done(&self, session: &Session) {
        let done = {
            let inner = session.lock();
            inner.ended.is_some() && !inner.log.has_unread()
        };
        if done {
            self.remove(session);
        }
    }

    /// Kills and forgets every session of these scopes, and their networks.
    pub fn close_scopes(&self, scopes: &[AgentId]) {
        let names: Vec<&str> = scopes.iter().map(|s| &**s).collect();
        self.loopbacks.close(&names);
        let closing: Vec<Arc<Session>> = {
            let mut table = self.table.lock();
            let numbers: Vec<u64> = table
                .sessions
                .iter()
                .filter(|(_, s)| s.scope.as_ref().is_some_and(|a| scopes.contains(a)))
                .map(|(n, _)| *n)
                .collect();
            numbers
                .iter()
                .filter_map(|n| table.sessions.remove(n))
                .collect()
        };
        for session in closing {
            session.stop(UnixSignal::SIGKILL, Reason::ScopeClosed);
        }
    }

    /// Kills every session (the host is ending); returns once each has ended.
    pub async fn shutdown(&self) {
        let all: Vec<Arc<Session>> = self.table.lock().sessions.values().cloned().collect();
        for session in &all {
            session.stop(UnixSignal::SIGKILL, Reason::Shutdown);
        }
        for session in all {
            session.wait_for_end(Duration::from_secs(10)).await;
        }
    }

    /// The supervisor's report of an end: the client is told if the model had it, and a
    /// session the model never had is forgotten.
    fn ended(&self, session: &Arc<Session>) {
        let (adopted, notification) = {
            let inner = session.lock();
            let Some(ended) = inner.ended.clone() else {
                return;
            };
            let tail = inner.log.tail(log::TAIL_BYTES);
            let notification = BashExitedNotification {
                agent: session.scope.as_deref().map(str::to_owned),
                session_id: session.id.clone(),
                command: session.command.clone(),
                exit_code: ended.exit_code(),
                signal: ended
                    .exit_code()
                    .is_none()
                    .then(|| ended.signal())
                    .flatten(),
                reason: ended.reason.map(|r| r.as_str().to_owned()),
                runtime_ms: ended.runtime.as_millis() as u64,
                tail,
            };
            (inner.adopted, notification)
        };
        if !adopted {
            return;
        }
        self.trim_ended();
        let events = self.events.read().clone();
        if let Some(events) = events {
            events.exited(&notification);
        }
    }

    /// Keeps at most [`ENDED_KEPT`] ended sessions.
    fn trim_ended(&self) {
        let mut table = self.table.lock();
        let ended: Vec<u64> = table
            .sessions
            .iter()
            .filter(|(_, s)| s.ended().is_some())
            .map(|(n, _)| *n)
            .collect();
        for number in ended.iter().take(ended.len().saturating_sub(ENDED_KEPT)) {
            table.sessions.remove(number);
        }
    }
}

impl std::fmt::Debug for ExecSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecSessions")
            .field("alive", &self.table.lock().alive)
            .finish_non_exhaustive()
    }
}

/// The number in `bash-<n>` (0, which no session has, for anything else).
fn number_of(id: &str) -> u64 {
    id.strip_prefix("bash-")
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}
