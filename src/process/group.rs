//! One spawned process group: spawn as leader, signal the group, reap the leader.

use super::budget::{Budget, Exceeded, Tree};
use super::sandbox::Confinement;
use super::tether::Tether;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use std::io;
use std::process::ExitStatus;
use std::time::Duration;
use tokio::process::{Child, Command};

/// A child that leads a new process group of its own.
///
/// The group id is forgotten as soon as the group has been killed after its leader exited,
/// so a later signal can never reach a group id the kernel has since handed to a stranger.
#[derive(Debug)]
pub struct ProcessGroup {
    child: Child,
    /// The group (the leader's pid) while it may still hold processes.
    group: Option<Pid>,
    /// Forks between the leader and the program (the tether's keepers).
    depth: usize,
    /// The tree's budget (its leaf removed after the kill, as fields drop after `drop`).
    budget: Option<Budget>,
    /// The program leads a session of its own on a terminal (polite signals go to it).
    terminal: bool,
}

impl ProcessGroup {
    /// Spawns `command` as the leader of a new process group (killed if dropped), tied to
    /// the host by its [tether](super::tether) and confined by `confinement` after fork and
    /// before exec (both after the caller's own `pre_exec`). The one way the host starts a
    /// child: every family passes its confinement here.
    pub fn spawn(command: &mut Command, confinement: &Confinement) -> io::Result<Self> {
        Self::spawn_budgeted(command, confinement, None)
    }

    /// [`spawn`](Self::spawn) with the whole tree in `budget`: the child joins its cgroup
    /// leaf first after fork (after the caller's own `pre_exec`, before the tether forks
    /// the keepers and the program), so every process it ever starts is in it.
    pub fn spawn_budgeted(
        command: &mut Command,
        confinement: &Confinement,
        budget: Option<Budget>,
    ) -> io::Result<Self> {
        Self::spawn_with(command, confinement, budget, false)
    }

    /// [`spawn_budgeted`](Self::spawn_budgeted); with `terminal`, the program (below the
    /// tether's keepers, before its confinement) starts a session of its own and makes its
    /// stdin, a terminal the caller opened, its controlling terminal: keys like `^C` then
    /// reach its foreground job. Where the tether has no keepers the program leads the
    /// host's group and cannot start a session: it still sees a terminal, without job control.
    pub fn spawn_with(
        command: &mut Command,
        confinement: &Confinement,
        budget: Option<Budget>,
        terminal: bool,
    ) -> io::Result<Self> {
        if let Some(join) = budget.as_ref().and_then(Budget::joiner) {
            // SAFETY: the joiner makes raw open, write and close calls on paths made
            // before fork, allocating nothing.
            unsafe {
                command.pre_exec(join);
            }
        }
        // Joining a scope's loopback needs the host's user namespace: before the tether.
        confinement.install_before_tether(command);
        let tether = Tether::get();
        // SAFETY: the tether's child half makes async-signal-safe system calls only (prctl,
        // unshare, fork, mount, waitpid, close, read, write, _exit) on values it borrows
        // from a static, allocating nothing.
        unsafe {
            command.pre_exec(|| tether.apply());
        }
        if terminal {
            // SAFETY: setsid and ioctl are async-signal-safe and touch no memory of ours.
            unsafe {
                command.pre_exec(|| {
                    if libc::setsid() >= 0 {
                        libc::ioctl(0, libc::TIOCSCTTY, 0);
                    }
                    Ok(())
                });
            }
        }
        confinement.install(command);
        command.process_group(0).kill_on_drop(true);
        let child = super::spawner::spawn(command)?;
        let group = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw);
        Ok(Self {
            child,
            group,
            depth: tether.depth(),
            budget,
            terminal,
        })
    }

    /// CPU time of the whole tree so far (its leaf's, or polled from `/proc`).
    pub fn tree_cpu_time(&self) -> Option<Duration> {
        self.budget.as_ref()?.cpu_time(self.tree())
    }

    /// Busy time of the whole tree so far (CPU time plus run-queue waits).
    pub fn tree_busy_time(&self) -> Option<Duration> {
        self.budget.as_ref()?.busy_time(self.tree())
    }

    /// Which budget the tree went past, if any (polled trees are read from `/proc`).
    pub fn exceeded(&self) -> Option<Exceeded> {
        self.budget.as_ref()?.exceeded(self.tree())
    }

    /// Where a polled budget reads the tree, while the group may hold processes.
    fn tree(&self) -> Option<Tree> {
        Some(Tree {
            anchor: self.pid()?,
            keepers: self.depth,
        })
    }

    /// Whether [`exceeded`](Self::exceeded) must be asked while the tree runs.
    pub fn needs_polling(&self) -> bool {
        self.budget.as_ref().is_some_and(Budget::needs_polling)
    }

    /// The leader, for its pipes.
    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// The leader's pid, while it is not reaped.
    pub fn pid(&self) -> Option<i32> {
        self.group.map(Pid::as_raw)
    }

    /// The program's own pid (below the tether's keepers), while the group runs: what
    /// `/proc` readings of its CPU time or memory must look at. Found through
    /// `/proc/<pid>/task/<pid>/children`; the leader's pid where that file is missing.
    pub fn program_pid(&self) -> Option<i32> {
        let mut pid = self.pid()?;
        for _ in 0..self.depth {
            let children =
                std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).ok()?;
            pid = children.split_ascii_whitespace().next()?.parse().ok()?;
        }
        Some(pid)
    }

    /// Sends `signal` to every process of the group (nothing once the group was killed);
    /// on a terminal, a polite one to the program's own session group.
    pub fn signal(&self, signal: Signal) {
        if self.terminal
            && signal != Signal::SIGKILL
            && self.depth > 0
            && let Some(program) = self.program_pid()
        {
            // The program left the group for its terminal's session; the keepers ignore
            // polite signals anyway.
            let _ = killpg(Pid::from_raw(program), signal);
            return;
        }
        if let Some(group) = self.group {
            // ESRCH (the group is already empty) is the expected outcome of a clean exit.
            let _ = killpg(group, signal);
        }
    }

    /// SIGKILLs the whole group (and every process of its leaf) and forgets it.
    pub fn kill(&mut self) {
        self.signal(Signal::SIGKILL);
        self.group = None;
        if let Some(budget) = &self.budget {
            budget.kill();
        }
    }

    /// Waits for the leader to exit, then kills what is left of its group: nothing a
    /// process started outlives it.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        let status = self.child.wait().await;
        self.kill();
        status
    }

    /// [`wait`](Self::wait), unless the tree goes past a budget first (read every
    /// `every`): then `Err` with which, the group left running for the caller to kill.
    pub async fn wait_within_budget(
        &mut self,
        every: Duration,
    ) -> Result<io::Result<ExitStatus>, Exceeded> {
        let (budget, tree) = (self.budget.as_ref(), self.tree());
        let over = async {
            match budget.filter(|b| b.needs_polling()) {
                None => std::future::pending().await,
                Some(budget) => loop {
                    tokio::time::sleep(every).await;
                    if let Some(exceeded) = budget.exceeded(tree) {
                        return exceeded;
                    }
                },
            }
        };
        let status = tokio::select! {
            status = self.child.wait() => status,
            exceeded = over => return Err(exceeded),
        };
        // An OOM kill of one of its processes fails the tree even when the leader went
        // on to exit (a leaf's count; a polled tree is not read past its reaped anchor,
        // whose pid the kernel may have handed on).
        if let Some(exceeded) = self.budget.as_ref().and_then(|b| b.exceeded(None)) {
            return Err(exceeded);
        }
        self.kill();
        Ok(status)
    }

    /// [`wait`](Self::wait), for at most `grace`; `None` if the leader is still running.
    pub async fn wait_within(&mut self, grace: Duration) -> Option<io::Result<ExitStatus>> {
        tokio::time::timeout(grace, self.wait()).await.ok()
    }

    /// Kills the group and reaps the leader (which SIGKILL ends at once, unless it sits in
    /// an uninterruptible kernel call: then reaping is left to drop after `grace`).
    pub async fn kill_and_reap(&mut self, grace: Duration) -> Option<ExitStatus> {
        self.kill();
        match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(Ok(status)) => Some(status),
            _ => None,
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn alive(pid: i32) -> bool {
        nix::sys::signal::kill(Pid::from_raw(pid), None).is_ok()
            && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|stat| stat.split(") ").nth(1).is_some_and(|s| s.starts_with('Z')))
    }

    /// The shell prints the pid of a background `sleep`, then waits on it (`wait`) or ends
    /// as soon as its stdin closes (the test first finds the `sleep`).
    fn shell_with_a_background_child(wait: bool) -> Command {
        let script = if wait {
            "sleep 30 & echo $!; wait"
        } else {
            "sleep 30 & echo $!; read _; exit 0"
        };
        let mut command = Command::new("sh");
        command
            .args(["-c", script])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        command
    }

    /// The host-side pid of the shell's background `sleep` (the `$!` it prints is its pid
    /// inside the tether's namespace): the program's child, once it has said it forked.
    async fn background_pid(group: &mut ProcessGroup) -> i32 {
        use tokio::io::AsyncBufReadExt;
        let stdout = group.child().stdout.take().unwrap();
        let mut line = String::new();
        tokio::io::BufReader::new(stdout)
            .read_line(&mut line)
            .await
            .unwrap();
        let shell = group.program_pid().unwrap();
        let children =
            std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children")).unwrap();
        children
            .split_ascii_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap()
    }

    #[tokio::test]
    async fn a_leader_that_exits_takes_its_background_jobs_with_it() {
        let mut group = ProcessGroup::spawn(
            &mut shell_with_a_background_child(false),
            &Confinement::none(),
        )
        .unwrap();
        let straggler = background_pid(&mut group).await;
        drop(group.child().stdin.take());
        assert!(group.wait().await.unwrap().success());
        assert_eq!(group.pid(), None, "the group is forgotten once killed");
        // SIGKILL is delivered before killpg returns; the init process reaps the orphan.
        for _ in 0..200 {
            if !alive(straggler) {
                return;
            }
            tokio::task::yield_now().await;
            std::thread::sleep(Duration::from_millis(5));
        }
        panic!("background job {straggler} survived its group");
    }

    #[tokio::test]
    async fn kill_and_reap_ends_a_running_group_and_drop_kills_an_abandoned_one() {
        let mut group = ProcessGroup::spawn(
            &mut shell_with_a_background_child(true),
            &Confinement::none(),
        )
        .unwrap();
        let straggler = background_pid(&mut group).await;
        let status = group.kill_and_reap(Duration::from_secs(5)).await.unwrap();
        assert!(!status.success());

        let mut abandoned = ProcessGroup::spawn(
            &mut shell_with_a_background_child(true),
            &Confinement::none(),
        )
        .unwrap();
        let other = background_pid(&mut abandoned).await;
        drop(abandoned);
        for pid in [straggler, other] {
            let mut gone = false;
            for _ in 0..200 {
                if !alive(pid) {
                    gone = true;
                    break;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            assert!(gone, "{pid} survived");
        }
    }
}
