//! The polled fallback where no cgroup can be had: the process tree below a child's anchor
//! (every process of its PID namespace, and what it forked), read from `/proc` — CPU time
//! of the live processes plus what each already reaped (the init reaps the orphans), and
//! memory as anonymous plus shared resident pages plus the size of every memfd a process
//! holds open (written pages of a memfd nobody maps are resident in no process).

use super::Tree;
use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::time::Duration;

/// What the tree uses now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct TreeUsage {
    pub cpu: Duration,
    pub memory_bytes: u64,
    pub processes: u64,
}

/// The anchor and every descendant of it (through each thread's `children`).
pub(super) fn members(anchor: i32) -> Vec<i32> {
    let mut found = vec![anchor];
    let mut next = 0;
    while next < found.len() {
        let pid = found[next];
        next += 1;
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for task in tasks.filter_map(Result::ok) {
            let Ok(children) = std::fs::read_to_string(task.path().join("children")) else {
                continue;
            };
            found.extend(
                children
                    .split_ascii_whitespace()
                    .filter_map(|c| c.parse::<i32>().ok()),
            );
        }
    }
    found
}

/// The tree's usage; `memory` false skips the memory reading (only CPU is wanted). The
/// keepers' memory is the host's, shared copy-on-write: not counted.
pub(super) fn usage(tree: Tree, memory: bool) -> TreeUsage {
    let ticks = ticks_per_second();
    let mut usage = TreeUsage::default();
    let mut memfds = HashSet::new();
    let mut cpu_ticks = 0u64;
    for (index, pid) in members(tree.anchor).into_iter().enumerate() {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        cpu_ticks = cpu_ticks.saturating_add(cpu_ticks_with_children(&stat).unwrap_or(0));
        usage.processes += 1;
        if memory && index >= tree.keepers {
            usage.memory_bytes = usage
                .memory_bytes
                .saturating_add(resident(pid))
                .saturating_add(memfd_bytes(pid, &mut memfds));
        }
    }
    usage.cpu = Duration::from_millis(cpu_ticks.saturating_mul(1000) / ticks);
    usage
}

/// Busy time of the tree: how long its live threads ran or waited in a run queue
/// (`schedstat`, so a loaded machine does not stretch a budget in wall time), plus the
/// CPU time of the processes its members already reaped.
pub(super) fn busy(anchor: i32) -> Duration {
    let mut nanos = 0u64;
    let mut reaped_ticks = 0u64;
    for pid in members(anchor) {
        if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            reaped_ticks = reaped_ticks.saturating_add(reaped_cpu_ticks(&stat).unwrap_or(0));
        }
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for task in tasks.filter_map(Result::ok) {
            let line = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
            nanos = nanos.saturating_add(schedstat(&line, true));
        }
    }
    Duration::from_nanos(nanos)
        + Duration::from_millis(reaped_ticks.saturating_mul(1000) / ticks_per_second())
}

/// Run time plus (with `running`) or only (without) run-queue wait of a `schedstat` line.
pub(super) fn schedstat(line: &str, running: bool) -> u64 {
    let mut fields = line
        .split_ascii_whitespace()
        .map(|f| f.parse::<u64>().unwrap_or(0));
    let (run, wait) = (fields.next().unwrap_or(0), fields.next().unwrap_or(0));
    if running {
        run.saturating_add(wait)
    } else {
        wait
    }
}

/// cutime + cstime (fields 16 and 17): the CPU time of reaped children.
fn reaped_cpu_ticks(stat: &str) -> Option<u64> {
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_ascii_whitespace()
        .skip(13)
        .take(2)
        .map(|field| field.parse::<u64>().ok())
        .sum()
}

fn ticks_per_second() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(ticks).ok().filter(|t| *t > 0).unwrap_or(100)
}

/// utime + stime + cutime + cstime (fields 14 to 17), counted after the name's last `)`.
fn cpu_ticks_with_children(stat: &str) -> Option<u64> {
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_ascii_whitespace()
        .skip(11)
        .take(4)
        .map(|field| field.parse::<u64>().ok())
        .sum()
}

/// `RssAnon + RssShmem` of `pid` in bytes (file pages are shared with the page cache and
/// every other process mapping them: counting them per process would count libc hundreds
/// of times).
fn resident(pid: i32) -> u64 {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return 0;
    };
    status
        .lines()
        .filter(|line| line.starts_with("RssAnon:") || line.starts_with("RssShmem:"))
        .filter_map(|line| line.split_ascii_whitespace().nth(1)?.parse::<u64>().ok())
        .sum::<u64>()
        .saturating_mul(1024)
}

/// Sizes of the memfds `pid` holds open that no earlier process of the walk held.
fn memfd_bytes(pid: i32, seen: &mut HashSet<u64>) -> u64 {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return 0;
    };
    let mut total = 0u64;
    for fd in fds.filter_map(Result::ok) {
        let is_memfd = std::fs::read_link(fd.path()).is_ok_and(|target| {
            target
                .as_os_str()
                .as_encoded_bytes()
                .starts_with(b"/memfd:")
        });
        if !is_memfd {
            continue;
        }
        if let Ok(meta) = std::fs::metadata(fd.path())
            && seen.insert(meta.ino())
        {
            total = total.saturating_add(meta.blocks().saturating_mul(512));
        }
    }
    total
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_give_own_and_reaped_children_time() {
        assert_eq!(
            cpu_ticks_with_children("42 (a) b) R 1 42 42 0 -1 4194304 100 0 0 0 7 3 20 5 20 0"),
            Some(35)
        );
        assert_eq!(cpu_ticks_with_children("garbage"), None);
        assert_eq!(
            reaped_cpu_ticks("42 (a) R 1 42 42 0 -1 4194304 100 0 0 0 7 3 20 5 20 0"),
            Some(25)
        );
        assert_eq!(schedstat("100 20 3\n", true), 120);
        assert_eq!(schedstat("100 20 3\n", false), 20);
    }

    #[test]
    fn a_tree_counts_its_children_and_their_memfds() {
        // A shell whose child holds a 4 MiB memfd written, not mapped.
        let script = "import os,sys,time\nfd=os.memfd_create('x')\nos.write(fd,b'x'*(4<<20))\n\
                      print('ready',flush=True)\nsys.stdin.read()";
        let mut child = std::process::Command::new("sh")
            .args(["-c", &format!("python3 -c \"{script}\"; true")])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.as_mut().unwrap()),
            &mut line,
        )
        .unwrap();
        let anchor = i32::try_from(child.id()).unwrap();
        let tree = Tree { anchor, keepers: 0 };
        let used = usage(tree, true);
        assert_eq!(members(anchor).len(), 2);
        assert_eq!(used.processes, 2);
        assert!(used.memory_bytes >= 4 << 20, "{used:?}");
        assert!(usage(tree, false).memory_bytes == 0);
        assert!(busy(anchor) > Duration::ZERO);
        drop(child.stdin.take());
        child.wait().unwrap();
    }

    #[test]
    fn a_keeper_forked_from_a_big_host_is_not_counted() {
        // This process, 64 MiB bigger, forks a child that never execs (as the tether's
        // keepers do): its resident pages are this process's.
        let big = vec![7u8; 64 << 20];
        // SAFETY: the child only calls pause and _exit.
        let keeper = unsafe { libc::fork() };
        if keeper == 0 {
            // SAFETY: async-signal-safe calls in a forked child.
            unsafe {
                libc::pause();
                libc::_exit(0);
            }
        }
        let counted = |keepers| {
            usage(
                Tree {
                    anchor: keeper,
                    keepers,
                },
                true,
            )
            .memory_bytes
        };
        assert!(counted(0) >= 64 << 20, "{}", counted(0));
        assert!(counted(1) == 0, "{}", counted(1));
        assert_eq!(big[big.len() - 1], 7);
        // SAFETY: our own child.
        unsafe {
            libc::kill(keeper, libc::SIGKILL);
            libc::waitpid(keeper, std::ptr::null_mut(), 0);
        }
    }
}
