//! Budgets per process tree, not per process: every `bash` call, Python interpreter and
//! MCP server runs in a cgroup leaf of its own when the host can make one (cgroup v2 with
//! `cpu`, `memory` and `pids` below the host's cgroup, else the v1 controllers), joined by
//! the child before it forks anything, so all it starts is counted and limited together:
//! CPU time, memory with shared memory (memfd, SysV, tmpfs pages are charged to the leaf),
//! processes. Where no cgroup can be had (or `DSH_TOOLS_SANDBOX_SIMULATE=no-cgroup`), the
//! tree below the child's anchor is [polled](tree) from `/proc` by the code that waits on
//! it, which kills the tree past a budget.

mod cgroup;
mod tree;

use dsh_tools_protocol::BudgetIsolation;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The `DSH_TOOLS_SANDBOX_SIMULATE` feature that hides cgroups, to exercise the fallback.
pub const NO_CGROUP: &str = "no-cgroup";

/// How the trees of this host are budgeted, decided once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mechanism {
    CgroupV2,
    CgroupV1,
    Polled,
}

impl Mechanism {
    /// The report's name of it.
    pub fn isolation(self) -> BudgetIsolation {
        match self {
            Mechanism::CgroupV2 => BudgetIsolation::CgroupV2,
            Mechanism::CgroupV1 => BudgetIsolation::CgroupV1,
            Mechanism::Polled => BudgetIsolation::Polled,
        }
    }
}

/// Limits of one tree; `None` is unlimited.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// Resident memory with shared memory, in bytes.
    pub memory_bytes: Option<u64>,
    /// Processes and threads.
    pub pids: Option<u64>,
    /// CPU share, in percent of one CPU (cgroups only).
    pub cpu_percent: Option<u32>,
}

/// A polled tree: its first process (the tether's anchor, or the program itself) and how
/// many processes at its top are the tether's keepers: forks of the host that never exec,
/// whose resident pages are the host's (shared copy-on-write), not the tree's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tree {
    pub anchor: i32,
    pub keepers: usize,
}

/// Which budget a tree went past.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exceeded {
    /// Its memory limit (the kernel's OOM killer ended one of its processes, or the polled
    /// total passed the limit).
    Memory,
    /// Its process limit (polled only: a cgroup makes the fork fail instead).
    Pids,
}

/// This host's cgroup directories once made (`None` inside: polled).
static ROOT: OnceLock<Option<cgroup::Root>> = OnceLock::new();

/// This host's cgroup directories, made on first use (`None`: polled).
fn root() -> Option<&'static cgroup::Root> {
    ROOT.get_or_init(|| {
        let hidden = std::env::var(super::sandbox::probe::SIMULATE_VARIABLE)
            .unwrap_or_default()
            .split(',')
            .any(|feature| feature.trim() == NO_CGROUP);
        if hidden { None } else { cgroup::Root::create() }
    })
    .as_ref()
}

/// How trees are budgeted on this host.
pub fn mechanism() -> Mechanism {
    match root().map(|root| root.version) {
        Some(cgroup::Version::V2) => Mechanism::CgroupV2,
        Some(cgroup::Version::V1) => Mechanism::CgroupV1,
        None => Mechanism::Polled,
    }
}

/// Removes this host's cgroup directories (if it made any), killing what is left in
/// them; at exit.
pub fn remove_root() {
    if let Some(Some(root)) = ROOT.get() {
        root.remove();
    }
}

/// The budget of one process tree: its cgroup leaf (removed when dropped, once its last
/// process is gone), or its limits for polling.
#[derive(Debug)]
pub struct Budget {
    limits: Limits,
    leaf: Option<Arc<cgroup::Leaf>>,
}

impl Budget {
    /// A budget with `limits`: a fresh leaf with them written when cgroups are in use.
    pub fn new(limits: Limits) -> io::Result<Budget> {
        let leaf = match root() {
            Some(root) => Some(Arc::new(root.leaf(&limits).map_err(|e| {
                io::Error::new(e.kind(), format!("cannot create a cgroup leaf: {e}"))
            })?)),
            None => None,
        };
        Ok(Budget { limits, leaf })
    }

    /// The limits.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// What joins the leaf in a forked child (async-signal-safe: raw open, write, close
    /// on paths made here); `None` when polled.
    pub(super) fn joiner(&self) -> Option<impl Fn() -> io::Result<()> + Send + Sync + 'static> {
        let leaf = self.leaf.clone()?;
        Some(move || {
            for procs in &leaf.procs {
                // SAFETY: a NUL-terminated path made before fork; a 1-byte live buffer.
                unsafe {
                    let fd = libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                    if fd < 0 {
                        return Err(io::Error::last_os_error());
                    }
                    let written = libc::write(fd, b"0".as_ptr().cast(), 1);
                    let error = io::Error::last_os_error();
                    libc::close(fd);
                    if written != 1 {
                        return Err(error);
                    }
                }
            }
            Ok(())
        })
    }

    /// Moves the running process `pid` (and the threads it has) into the leaf: for a process
    /// the host did not fork itself (a Python fork server's child), adopted before it runs
    /// anything of its own, so all it starts is counted. Nothing to do when polled.
    pub fn adopt(&self, pid: i32) -> io::Result<()> {
        let Some(leaf) = &self.leaf else {
            return Ok(());
        };
        for procs in &leaf.procs {
            let path = std::path::Path::new(std::ffi::OsStr::from_bytes(procs.as_bytes()));
            std::fs::write(path, pid.to_string())
                .map_err(|e| io::Error::new(e.kind(), format!("cannot adopt {pid}: {e}")))?;
        }
        Ok(())
    }

    /// CPU time of the whole tree so far, exited processes included (`tree`: where to
    /// poll it).
    pub fn cpu_time(&self, tree: Option<Tree>) -> Option<Duration> {
        match &self.leaf {
            Some(leaf) => leaf.cpu_time(),
            None => Some(tree::usage(tree?, false).cpu),
        }
    }

    /// Busy time of the whole tree so far: its CPU time plus how long its live threads
    /// waited for a CPU, so a budget in busy time is not stretched in wall time by a
    /// loaded machine (the wait of exited processes is not kept anywhere).
    pub fn busy_time(&self, tree: Option<Tree>) -> Option<Duration> {
        match &self.leaf {
            Some(leaf) => Some(leaf.cpu_time()? + leaf.waiting()),
            None => Some(tree::busy(tree?.anchor)),
        }
    }

    /// Which budget the tree went past, if any.
    pub fn exceeded(&self, tree: Option<Tree>) -> Option<Exceeded> {
        if let Some(leaf) = &self.leaf {
            return (leaf.oom_kills() > 0).then_some(Exceeded::Memory);
        }
        let (memory, pids) = (self.limits.memory_bytes, self.limits.pids);
        if memory.is_none() && pids.is_none() {
            return None;
        }
        let used = tree::usage(tree?, memory.is_some());
        if memory.is_some_and(|limit| used.memory_bytes > limit) {
            return Some(Exceeded::Memory);
        }
        pids.is_some_and(|limit| used.processes > limit)
            .then_some(Exceeded::Pids)
    }

    /// Whether [`exceeded`](Self::exceeded) must be asked while the tree runs (a leaf
    /// enforces its limits itself, but a tree is ended whole once the OOM killer struck).
    pub fn needs_polling(&self) -> bool {
        self.leaf.is_some() || self.limits.memory_bytes.is_some() || self.limits.pids.is_some()
    }

    /// SIGKILLs every process in the leaf (nothing when polled: the caller kills the group,
    /// which empties the tether's namespace).
    pub fn kill(&self) {
        if let Some(leaf) = &self.leaf {
            leaf.kill();
        }
    }
}

impl Drop for Budget {
    fn drop(&mut self) {
        let Some(leaf) = self.leaf.take() else {
            return;
        };
        leaf.kill();
        if leaf.remove() {
            return;
        }
        // Killed processes leave the leaf as the kernel tears them down: remove it then,
        // off the caller's thread.
        let _ = std::thread::Builder::new()
            .name("dsh-leaf-reaper".into())
            .spawn(move || {
                for _ in 0..500 {
                    leaf.kill();
                    if leaf.remove() {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
            });
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_leaf_is_cheap_to_make_and_gone_when_dropped() {
        if mechanism() == Mechanism::Polled {
            return;
        }
        let limits = Limits {
            memory_bytes: Some(64 << 20),
            pids: Some(16),
            cpu_percent: Some(50),
        };
        let first = Budget::new(limits).unwrap();
        let started = std::time::Instant::now();
        let budgets: Vec<Budget> = (0..50).map(|_| Budget::new(limits).unwrap()).collect();
        let each = started.elapsed() / 50;
        // Measured here: about 0.1 ms in a debug build (mkdir in four v1 hierarchies and
        // four limit writes); generous for a loaded machine.
        assert!(each < Duration::from_millis(5), "a leaf took {each:?}");
        drop(first);
        let dirs: Vec<_> = budgets
            .iter()
            .flat_map(|b| b.leaf.as_ref().unwrap().dirs.clone())
            .collect();
        assert!(dirs.iter().all(|d| d.is_dir()));
        assert_eq!(budgets[0].cpu_time(None), Some(Duration::ZERO));
        assert_eq!(budgets[0].exceeded(None), None);
        drop(budgets);
        assert!(dirs.iter().all(|d| !d.exists()));
    }
}
