//! One command that may outlive its call: its output (a [`SessionLog`], and the call's
//! spools until the call lets go of it), its input, its state, and the requests its
//! [supervisor](super::supervisor) acts on. Waiting is a `watch` on a change counter:
//! every read of output and the end bump it, so a waiter wakes exactly when there is
//! something to look at.

use super::log::{SessionLog, Unread};
use super::terminal::Terminal;
use crate::builtins::bash::spool::Spool;
use crate::process::budget::Exceeded;
use crate::tool::{AgentId, Signal};
use nix::sys::signal::Signal as UnixSignal;
use parking_lot::Mutex;
use regex::bytes::Regex;
use std::process::ExitStatus;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::sync::{mpsc, watch};

/// The longest a write may wait for the command to take its input.
const WRITE_PATIENCE: Duration = Duration::from_secs(5);

/// Why the host ended a session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// `bash_kill`.
    Killed,
    /// Its call was cancelled before it became a session.
    Aborted,
    /// Its `timeout` passed.
    TimedOut,
    /// Nothing happened for `exec.idleTimeoutMs`.
    Idle,
    /// `exec.maxLifetimeMs` passed.
    Lifetime,
    /// The Code Mode run that started it ended.
    RunEnded,
    /// Its agent scope was closed.
    ScopeClosed,
    /// The host is shutting down.
    Shutdown,
    /// It went past a budget of `builtins.bash.limits`.
    Exceeded(Exceeded),
}

impl Reason {
    /// How `bash/exited` and the session tools name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Killed => "killed",
            Reason::Aborted => "aborted",
            Reason::TimedOut => "timeout",
            Reason::Idle => "idle",
            Reason::Lifetime => "lifetime",
            Reason::RunEnded => "run ended",
            Reason::ScopeClosed => "scope closed",
            Reason::Shutdown => "host shutdown",
            Reason::Exceeded(Exceeded::Memory) => "memory limit",
            Reason::Exceeded(Exceeded::Pids) => "process limit",
        }
    }
}

/// How a session ended.
#[derive(Clone, Debug)]
pub struct Ended {
    /// The shell's status, when it was reaped.
    pub status: Option<ExitStatus>,
    /// Why the host ended it, if it did.
    pub reason: Option<Reason>,
    /// How long it ran.
    pub runtime: Duration,
}

impl Ended {
    /// The exit code, when the shell exited.
    pub fn exit_code(&self) -> Option<i64> {
        self.status.and_then(|s| s.code()).map(i64::from)
    }

    /// The signal that ended it (`SIGKILL` when the host killed a shell it could not reap).
    pub fn signal(&self) -> Option<String> {
        use std::os::unix::process::ExitStatusExt;
        match self.status {
            Some(status) => status.signal().map(crate::builtins::bash::run::signal_name),
            None => Some("SIGKILL".to_owned()),
        }
    }
}

/// Where `bash_write` goes.
pub enum Input {
    Pipe(tokio::process::ChildStdin),
    Terminal(Terminal),
}

/// A request to the supervisor.
pub enum Request {
    /// Send this signal (`SIGKILL`: the whole tree at once), ending it for `reason`.
    Signal(UnixSignal, Reason),
}

/// The mutable part.
pub struct Inner {
    pub log: SessionLog,
    /// The call's spools (stdout, stderr), until the call answers or lets go.
    pub spools: Option<(Spool, Spool)>,
    /// The call let go: the session is the model's now (listed, notified at its end).
    pub adopted: bool,
    /// Set once, when the supervisor has reaped it and its output reached its end.
    pub ended: Option<Ended>,
    /// The reason of the first stop request, reported if the stop is what ended it.
    pub stopping: Option<Reason>,
    /// When the model last read, wrote or listed it, or it printed.
    pub touched: Instant,
}

/// One session.
pub struct Session {
    /// `bash-<n>`.
    pub id: String,
    /// The agent scope that started it.
    pub scope: Option<AgentId>,
    /// The command.
    pub command: String,
    /// On a terminal.
    pub tty: bool,
    /// When it started.
    pub started: Instant,
    inner: Mutex<Inner>,
    changed: watch::Sender<u64>,
    input: tokio::sync::Mutex<Option<Input>>,
    requests: mpsc::UnboundedSender<Request>,
}

/// What a wait looks for besides its deadline.
pub struct Until<'a> {
    /// New text matching this (any new text when `None`).
    pub pattern: Option<&'a Regex>,
    /// Only the end.
    pub exit: bool,
}

impl Session {
    /// A running session; the supervisor gets the requests.
    pub fn new(
        id: String,
        scope: Option<AgentId>,
        command: String,
        tty: bool,
        log: SessionLog,
        spools: (Spool, Spool),
        input: Option<Input>,
    ) -> (Session, mpsc::UnboundedReceiver<Request>) {
        let (requests, received) = mpsc::unbounded_channel();
        let now = Instant::now();
        let session = Session {
            id,
            scope,
            command,
            tty,
            started: now,
            inner: Mutex::new(Inner {
                log,
                spools: Some(spools),
                adopted: false,
                ended: None,
                stopping: None,
                touched: now,
            }),
            changed: watch::channel(0).0,
            input: tokio::sync::Mutex::new(input),
            requests,
        };
        (session, received)
    }

    /// The state, locked.
    pub fn lock(&self) -> parking_lot::MutexGuard<'_, Inner> {
        self.inner.lock()
    }

    /// Wakes every waiter (output arrived, or the end).
    pub fn changed(&self) {
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Takes bytes one of its streams printed (`stderr` false: stdout or the terminal);
    /// `false` once the call let go (live reporting stops).
    pub fn output(&self, stderr: bool, raw: &[u8]) -> bool {
        let mut inner = self.inner.lock();
        let text = inner.log.push(raw);
        let text = text.as_deref().unwrap_or(raw);
        let live = !inner.adopted;
        if let Some((stdout, err)) = inner.spools.as_mut() {
            match stderr {
                true => err.push(text),
                false => stdout.push(text),
            }
        }
        inner.touched = Instant::now();
        drop(inner);
        self.changed();
        live
    }

    /// Asks the supervisor to send `signal` (the first reason is the one reported).
    pub fn stop(&self, signal: UnixSignal, reason: Reason) {
        {
            let mut inner = self.inner.lock();
            if inner.ended.is_some() {
                return;
            }
            inner.stopping.get_or_insert(reason);
        }
        let _ = self.requests.send(Request::Signal(signal, reason));
    }

    /// How it ended, once it has.
    pub fn ended(&self) -> Option<Ended> {
        self.inner.lock().ended.clone()
    }

    /// Notes the model's use (the idle lifetime counts from here).
    pub fn touch(&self) {
        self.inner.lock().touched = Instant::now();
    }

    /// Waits until `until` is met, the session ends, `wait` passes or `signal` fires.
    pub async fn wait(&self, wait: Duration, until: Until<'_>, signal: &Signal) {
        let mut changes = self.changed.subscribe();
        // A wait of "forever" is a year (an `Instant` cannot hold more).
        let wait = wait.min(Duration::from_secs(365 * 24 * 3600));
        let deadline = tokio::time::Instant::now() + wait;
        let mut scan = 0;
        loop {
            changes.borrow_and_update();
            {
                let mut inner = self.inner.lock();
                if inner.ended.is_some() {
                    return;
                }
                let met = match (until.exit, until.pattern) {
                    (true, _) => false,
                    (false, None) => inner.log.has_unread(),
                    (false, Some(pattern)) => inner.log.unread_matches(pattern, &mut scan),
                };
                if met {
                    return;
                }
            }
            tokio::select! {
                changed = changes.changed() => if changed.is_err() { return },
                () = tokio::time::sleep_until(deadline) => return,
                () = signal.aborted() => return,
            }
        }
    }

    /// Waits for the end (at most `wait`); whether it ended.
    pub async fn wait_for_end(&self, wait: Duration) -> bool {
        let until = Until {
            pattern: None,
            exit: true,
        };
        self.wait(wait, until, &Signal::never()).await;
        self.ended().is_some()
    }

    /// The text since the last read (its tail past `limit` bytes).
    pub fn read(&self, limit: usize) -> Unread {
        let mut inner = self.inner.lock();
        inner.touched = Instant::now();
        inner.log.take_unread(limit)
    }

    /// Writes `input` to the command (stdin, or typed into its terminal); with `eof`,
    /// closes stdin afterwards (a terminal takes `\u0004` instead).
    pub async fn write(&self, input: &[u8], eof: bool) -> Result<(), String> {
        self.touch();
        let mut slot = self.input.lock().await;
        let Some(target) = slot.as_mut() else {
            return Err("its input is closed".to_owned());
        };
        let written = tokio::time::timeout(WRITE_PATIENCE, async {
            match target {
                Input::Pipe(pipe) => {
                    pipe.write_all(input).await?;
                    pipe.flush().await
                }
                Input::Terminal(terminal) => terminal.write_all(input).await,
            }
        })
        .await;
        match written {
            Err(_) => Err(format!(
                "the command did not take its input within {} s",
                WRITE_PATIENCE.as_secs()
            )),
            Ok(Err(e)) => {
                *slot = None;
                Err(format!("its input is closed ({e})"))
            }
            Ok(Ok(())) => {
                if eof && matches!(target, Input::Pipe(_)) {
                    *slot = None;
                }
                Ok(())
            }
        }
    }
}
