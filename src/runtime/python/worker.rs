//! One child of a fork server as the host sees it: its pid here (from its pidfd), its own
//! process group and budget leaf (adopted before it runs anything), its scratch dir, and
//! its exit status, which the server reports and keeps valid (the child stays unreaped)
//! until the worker is released, so a signal to its group can never reach a stranger.

use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use super::control::{Control, Forked, kill_by_pidfd};
use crate::process::Scratch;
use crate::process::budget::{Budget, Exceeded, Tree};

/// A forked run child.
pub(super) struct Worker {
    /// Its pid in the host's namespace (also its process group: it called `setpgid`).
    pid: i32,
    forked: Forked,
    budget: Budget,
    control: Arc<Control>,
    /// Known once the server reported it.
    status: Option<ExitStatus>,
    released: bool,
    /// Removed after the kill (fields drop after `drop` runs).
    _scratch: Scratch,
}

impl Worker {
    /// Takes over `forked` (whose pid here is `pid`): moves it into `budget`'s leaf.
    pub(super) fn adopt(
        pid: i32,
        forked: Forked,
        budget: Budget,
        control: Arc<Control>,
        scratch: Scratch,
    ) -> io::Result<Worker> {
        let worker = Worker {
            pid,
            forked,
            budget,
            control,
            status: None,
            released: false,
            _scratch: scratch,
        };
        worker.budget.adopt(pid)?;
        Ok(worker)
    }

    pub(super) fn pid(&self) -> i32 {
        self.pid
    }

    /// Whether it may still serve a run: its server lives (when the server dies, its
    /// children die with it) and it has not ended.
    pub(super) fn is_alive(&self) -> bool {
        self.status.is_none() && self.control.is_alive()
    }

    fn tree(&self) -> Option<Tree> {
        Some(Tree {
            anchor: self.pid,
            keepers: 0,
        })
    }

    /// Busy time of its whole tree so far.
    pub(super) fn tree_busy_time(&self) -> Option<Duration> {
        self.budget.busy_time(self.tree())
    }

    /// Which budget its tree went past, if any.
    pub(super) fn exceeded(&self) -> Option<Exceeded> {
        self.budget.exceeded(self.tree())
    }

    /// SIGKILLs it, its group and its leaf.
    pub(super) fn kill(&mut self) {
        kill_by_pidfd(&self.forked.pidfd);
        // Unreaped until released, so its group id is still its own. Once its server is
        // gone, someone else reaps it: then only the pidfd (above) and the leaf are safe.
        if !self.released && self.control.is_alive() {
            let _ = killpg(Pid::from_raw(self.pid), Signal::SIGKILL);
        }
        self.budget.kill();
    }

    /// Kills it and waits up to `grace` for its exit status (`None` without one: its
    /// server died, or it did not end in time), then releases it.
    pub(super) async fn kill_and_reap(&mut self, grace: Duration) -> Option<ExitStatus> {
        self.kill();
        if self.status.is_none() {
            let exit = &mut self.forked.exit;
            if let Ok(Ok(status)) = tokio::time::timeout(grace, exit).await {
                self.status = Some(ExitStatus::from_raw(status));
            }
        }
        self.release();
        self.status
    }

    fn release(&mut self) {
        if !self.released {
            self.released = true;
            self.control.release(self.forked.server_pid);
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
        self.release();
    }
}
