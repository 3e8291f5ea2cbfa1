//! Cgroup leaves: where the hierarchies are (v2 with the `cpu`, `memory` and `pids`
//! controllers, else the v1 `cpu`, `cpuacct`, `memory` and `pids` mounts), this host's
//! parent directory `dsh-tools-<pid>` in the host's own cgroup of each, and one leaf per
//! process tree under it, with its limits written before any process joins it.

use super::Limits;
use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// What each host's parent directory is called, before its pid.
pub(super) const PREFIX: &str = "dsh-tools-";
/// The CFS period written with a CPU quota (100 ms, the kernel's default).
const CPU_PERIOD_US: u64 = 100_000;
/// The v1 controllers a leaf needs, each possibly co-mounted with others.
const V1_CONTROLLERS: [&str; 4] = ["cpu", "cpuacct", "memory", "pids"];
/// The v2 controllers a leaf needs.
const V2_CONTROLLERS: [&str; 3] = ["cpu", "memory", "pids"];

/// The cgroup version in use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Version {
    V1,
    V2,
}

/// This host's parent directories, one per hierarchy (one for v2).
#[derive(Debug)]
pub(super) struct Root {
    pub version: Version,
    /// `(controllers mounted there, this host's dir)`.
    dirs: Vec<(Vec<String>, PathBuf)>,
}

/// One leaf: a directory per hierarchy, and the files the child and the meter use.
#[derive(Debug)]
pub(super) struct Leaf {
    pub version: Version,
    /// Leaf directories, removed when the tree is gone.
    pub dirs: Vec<PathBuf>,
    /// `cgroup.procs` of each, for the child to join before it forks anything.
    pub procs: Vec<CString>,
    /// `cpuacct.usage` (v1, ns) or `cpu.stat` (v2, `usage_usec`).
    cpu: PathBuf,
    /// `memory.oom_control` (v1) or `memory.events` (v2): both count `oom_kill`.
    oom: PathBuf,
    /// The thread ids in the leaf: `tasks` (v1) or `cgroup.threads` (v2).
    threads: PathBuf,
}

impl Root {
    /// The host's parent directories, created (stale ones of dead hosts swept first);
    /// `None` when no usable hierarchy can be written.
    pub fn create() -> Option<Root> {
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
        let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        v2(&mounts, &own).or_else(|| v1(&mounts, &own))
    }

    /// A new leaf with `limits` written.
    pub fn leaf(&self, limits: &Limits) -> io::Result<Leaf> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = NEXT.fetch_add(1, Ordering::Relaxed).to_string();
        let mut leaf = Leaf {
            version: self.version,
            dirs: Vec::with_capacity(self.dirs.len()),
            procs: Vec::with_capacity(self.dirs.len()),
            cpu: PathBuf::new(),
            oom: PathBuf::new(),
            threads: PathBuf::new(),
        };
        // v1: only the hierarchies this leaf needs (each join costs the child a migration):
        // CPU and memory accounting always, the others for their limits.
        let needed = |controllers: &[String]| {
            self.version == Version::V2
                || controllers.iter().any(|c| match c.as_str() {
                    "cpuacct" | "memory" => true,
                    "pids" => limits.pids.is_some(),
                    "cpu" => limits.cpu_percent.is_some(),
                    _ => false,
                })
        };
        let made = self
            .dirs
            .iter()
            .filter(|(controllers, _)| needed(controllers))
            .try_for_each(|(controllers, parent)| {
                let dir = parent.join(&name);
                std::fs::create_dir(&dir)?;
                leaf.dirs.push(dir.clone());
                let has = |name: &str| controllers.iter().any(|c| c == name);
                let procs = dir.join("cgroup.procs");
                leaf.procs
                    .push(CString::new(procs.as_os_str().as_bytes()).map_err(io::Error::other)?);
                match self.version {
                    Version::V1 => leaf.limit_v1(&dir, &has, limits),
                    Version::V2 => leaf.limit_v2(&dir, limits),
                }
            });
        match made {
            Ok(()) => Ok(leaf),
            Err(error) => {
                leaf.remove();
                Err(error)
            }
        }
    }

    /// Removes the host's directories, killing what is left in their leaves first (calls
    /// still in flight at exit); a leaf the kernel is still emptying is retried a moment.
    pub fn remove(&self) {
        for (_, dir) in &self.dirs {
            let leaves: Vec<PathBuf> = std::fs::read_dir(dir)
                .map(|entries| {
                    entries
                        .filter_map(Result::ok)
                        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                        .map(|e| e.path())
                        .collect()
                })
                .unwrap_or_default();
            for leaf in leaves {
                for _ in 0..50 {
                    kill_all(&leaf);
                    if std::fs::remove_dir(&leaf).is_ok() {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
            }
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// SIGKILLs every process in the cgroup `dir`.
fn kill_all(dir: &Path) {
    let Ok(procs) = std::fs::read_to_string(dir.join("cgroup.procs")) else {
        return;
    };
    for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
        // SAFETY: kill with integers, on a pid of a leaf of ours.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

impl Leaf {
    fn limit_v1(
        &mut self,
        dir: &Path,
        has: &dyn Fn(&str) -> bool,
        limits: &Limits,
    ) -> io::Result<()> {
        if has("memory") {
            self.oom = dir.join("memory.oom_control");
            if let Some(bytes) = limits.memory_bytes {
                write(dir, "memory.limit_in_bytes", bytes)?;
                // Present only with swap accounting: then swap counts too.
                let memsw = dir.join("memory.memsw.limit_in_bytes");
                if memsw.exists() {
                    std::fs::write(memsw, bytes.to_string())?;
                }
            }
        }
        if has("pids")
            && let Some(pids) = limits.pids
        {
            write(dir, "pids.max", pids)?;
        }
        if has("cpuacct") {
            self.cpu = dir.join("cpuacct.usage");
            self.threads = dir.join("tasks");
        }
        if has("cpu")
            && let Some(percent) = limits.cpu_percent
        {
            write(dir, "cpu.cfs_period_us", CPU_PERIOD_US)?;
            write(dir, "cpu.cfs_quota_us", quota(percent))?;
        }
        Ok(())
    }

    fn limit_v2(&mut self, dir: &Path, limits: &Limits) -> io::Result<()> {
        self.cpu = dir.join("cpu.stat");
        self.oom = dir.join("memory.events");
        self.threads = dir.join("cgroup.threads");
        if let Some(bytes) = limits.memory_bytes {
            write(dir, "memory.max", bytes)?;
            let _ = std::fs::write(dir.join("memory.swap.max"), "0");
        }
        if let Some(pids) = limits.pids {
            write(dir, "pids.max", pids)?;
        }
        if let Some(percent) = limits.cpu_percent {
            std::fs::write(
                dir.join("cpu.max"),
                format!("{} {CPU_PERIOD_US}", quota(percent)),
            )?;
        }
        Ok(())
    }

    /// CPU time of every process the leaf has held, exited ones included.
    pub fn cpu_time(&self) -> Option<std::time::Duration> {
        let text = std::fs::read_to_string(&self.cpu).ok()?;
        match self.version {
            Version::V1 => text
                .trim()
                .parse()
                .ok()
                .map(std::time::Duration::from_nanos),
            Version::V2 => counter(&text, "usage_usec").map(std::time::Duration::from_micros),
        }
    }

    /// How long the leaf's live threads waited in a run queue (their `schedstat`).
    pub fn waiting(&self) -> std::time::Duration {
        let tids = std::fs::read_to_string(&self.threads).unwrap_or_default();
        let nanos = tids
            .lines()
            .filter_map(|tid| {
                std::fs::read_to_string(format!("/proc/{}/schedstat", tid.trim())).ok()
            })
            .map(|line| super::tree::schedstat(&line, false))
            .fold(0u64, u64::saturating_add);
        std::time::Duration::from_nanos(nanos)
    }

    /// How many processes the kernel's OOM killer ended in the leaf.
    pub fn oom_kills(&self) -> u64 {
        std::fs::read_to_string(&self.oom)
            .ok()
            .and_then(|text| counter(&text, "oom_kill"))
            .unwrap_or(0)
    }

    /// SIGKILLs every process in the leaf: at once through `cgroup.kill` (v2, Linux 5.14),
    /// else pid by pid.
    pub fn kill(&self) {
        let atomic = self.version == Version::V2
            && self
                .dirs
                .first()
                .is_some_and(|dir| std::fs::write(dir.join("cgroup.kill"), "1").is_ok());
        if !atomic && let Some(dir) = self.dirs.first() {
            kill_all(dir);
        }
    }

    /// Removes the leaf's directories; false while a process is still in one.
    pub fn remove(&self) -> bool {
        let mut gone = true;
        for dir in &self.dirs {
            match std::fs::remove_dir(dir) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(_) => gone = false,
            }
        }
        gone
    }
}

/// `cfs_quota_us` for `percent` of one CPU.
fn quota(percent: u32) -> u64 {
    (CPU_PERIOD_US * u64::from(percent) / 100).max(1000)
}

fn write(dir: &Path, file: &str, value: u64) -> io::Result<()> {
    std::fs::write(dir.join(file), value.to_string())
        .map_err(|e| io::Error::new(e.kind(), format!("{file}: {e}")))
}

/// The value of `key` in a `key value` per line file.
fn counter(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (name, value) = line.split_once(' ')?;
        (name == key).then(|| value.trim().parse().ok())?
    })
}

/// `(mount point, root inside the hierarchy, super options)` of each mount of `fstype`.
fn mounts_of<'a>(
    mountinfo: &'a str,
    fstype: &'a str,
) -> impl Iterator<Item = (&'a str, &'a str, &'a str)> {
    mountinfo.lines().filter_map(move |line| {
        let (left, right) = line.split_once(" - ")?;
        let mut left = left.split(' ');
        let root = left.nth(3)?;
        let point = left.next()?;
        let mut right = right.split(' ');
        (right.next()? == fstype).then_some(())?;
        let options = right.nth(1)?;
        Some((point, root, options))
    })
}

/// `<mount point>/<own path relative to the mount's root>`.
fn own_dir(point: &str, root: &str, own: &str) -> PathBuf {
    let relative = own
        .strip_prefix(root)
        .unwrap_or(own)
        .trim_start_matches('/');
    Path::new(point).join(relative)
}

/// The v1 hierarchies holding the four controllers, with this host's dir made in each.
fn v1(mountinfo: &str, own: &str) -> Option<Root> {
    let mut dirs: Vec<(Vec<String>, PathBuf)> = Vec::new();
    for (point, root, options) in mounts_of(mountinfo, "cgroup") {
        let controllers: Vec<String> = options
            .split(',')
            .filter(|o| V1_CONTROLLERS.contains(o))
            .map(str::to_owned)
            .collect();
        if controllers.is_empty() || dirs.iter().any(|(c, _)| c == &controllers) {
            continue;
        }
        let path = own.lines().find_map(|line| {
            let mut fields = line.splitn(3, ':');
            let (_, names, path) = (fields.next()?, fields.next()?, fields.next()?);
            let names: Vec<&str> = names.split(',').collect();
            controllers
                .iter()
                .all(|c| names.contains(&c.as_str()))
                .then_some(path)
        })?;
        dirs.push((controllers, own_dir(point, root, path)));
    }
    let covered = |c: &str| dirs.iter().any(|(cs, _)| cs.iter().any(|x| x == c));
    if !V1_CONTROLLERS.iter().all(|c| covered(c)) {
        return None;
    }
    let dirs = dirs
        .into_iter()
        .map(|(controllers, own)| Some((controllers, host_dir(&own)?)))
        .collect::<Option<Vec<_>>>()?;
    Some(Root {
        version: Version::V1,
        dirs,
    })
}

/// The v2 hierarchy when it offers the three controllers below the host's cgroup: the host
/// moves itself into a leaf of its own there when its cgroup must have no processes for
/// its children to get controllers (a delegated subtree holding only this host).
fn v2(mountinfo: &str, own: &str) -> Option<Root> {
    let (point, root, _) = mounts_of(mountinfo, "cgroup2").next()?;
    let path = own.lines().find_map(|line| line.strip_prefix("0::"))?;
    let own = own_dir(point, root, path);
    let available = std::fs::read_to_string(own.join("cgroup.controllers")).ok()?;
    if !V2_CONTROLLERS
        .iter()
        .all(|c| available.split_ascii_whitespace().any(|a| a == *c))
    {
        return None;
    }
    let enable = "+cpu +memory +pids";
    if std::fs::write(own.join("cgroup.subtree_control"), enable).is_err() {
        // Processes in `own`: only this host may be there, and it moves to a leaf.
        let me = std::process::id().to_string();
        let procs = std::fs::read_to_string(own.join("cgroup.procs")).ok()?;
        if procs.lines().any(|pid| pid.trim() != me) {
            return None;
        }
        let home = own.join(format!("{PREFIX}{me}-host"));
        let _ = std::fs::create_dir(&home);
        std::fs::write(home.join("cgroup.procs"), &me).ok()?;
        std::fs::write(own.join("cgroup.subtree_control"), enable).ok()?;
    }
    let dir = host_dir(&own)?;
    std::fs::write(dir.join("cgroup.subtree_control"), enable).ok()?;
    Some(Root {
        version: Version::V2,
        dirs: vec![(
            V2_CONTROLLERS.iter().map(|c| (*c).to_owned()).collect(),
            dir,
        )],
    })
}

/// Sweeps `own` of dead hosts' dirs, then makes this host's.
fn host_dir(own: &Path) -> Option<PathBuf> {
    sweep(own);
    let dir = own.join(format!("{PREFIX}{}", std::process::id()));
    match std::fs::create_dir(&dir) {
        Ok(()) => Some(dir),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Some(dir),
        Err(_) => None,
    }
}

/// Removes the dirs (and their empty leaves) of hosts that are no longer running.
fn sweep(own: &Path) {
    let Ok(entries) = std::fs::read_dir(own) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .map(|rest| rest.trim_end_matches("-host"))
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        if let Ok(leaves) = std::fs::read_dir(entry.path()) {
            for leaf in leaves.filter_map(Result::ok) {
                if leaf.file_type().is_ok_and(|t| t.is_dir()) {
                    let _ = std::fs::remove_dir(leaf.path());
                }
            }
        }
        let _ = std::fs::remove_dir(entry.path());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mounts_and_own_paths_are_read_from_proc() {
        let info = "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n\
                    35 31 0:32 /outer /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n\
                    41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw";
        let v1: Vec<_> = mounts_of(info, "cgroup").collect();
        assert_eq!(v1[0], ("/sys/fs/cgroup/cpu", "/", "rw,cpu"));
        assert_eq!(v1[1].1, "/outer");
        assert_eq!(mounts_of(info, "cgroup2").count(), 1);
        assert_eq!(
            own_dir("/sys/fs/cgroup/memory", "/outer", "/outer/a/b"),
            PathBuf::from("/sys/fs/cgroup/memory/a/b")
        );
        assert_eq!(
            own_dir("/sys/fs/cgroup/cpu", "/", "/"),
            PathBuf::from("/sys/fs/cgroup/cpu")
        );
        assert_eq!(
            counter("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n", "oom_kill"),
            Some(3)
        );
        assert_eq!(
            counter("usage_usec 1500\nuser_usec 1000", "usage_usec"),
            Some(1500)
        );
        assert_eq!(quota(150), 150_000);
        assert_eq!(quota(0), 1000);
    }
}
