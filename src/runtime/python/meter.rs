//! Busy time of an interpreter process: how long its threads ran or were ready to run,
//! from `/proc/<pid>/task/*/schedstat` (so a loaded machine does not stretch the compute
//! budget in wall time, as busy time of an isolate thread is not stretched either), or its
//! CPU time (user + system, `/proc/<pid>/stat`) where the kernel keeps no schedstat.

use std::time::Duration;

/// The clock ticks per second `/proc` counts in.
fn ticks_per_second() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(ticks).ok().filter(|t| *t > 0).unwrap_or(100)
}

/// Busy time of `pid` so far; `None` once it is gone.
pub(super) fn busy_time(pid: i32) -> Option<Duration> {
    runnable_time(pid).or_else(|| cpu_time(pid))
}

/// Time the threads of `pid` spent on a CPU or waiting in a run queue for one.
fn runnable_time(pid: i32) -> Option<Duration> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut total = 0u64;
    let mut any = false;
    for task in tasks.flatten() {
        let Ok(line) = std::fs::read_to_string(task.path().join("schedstat")) else {
            continue;
        };
        let mut fields = line.split_ascii_whitespace();
        let on_cpu: u64 = fields.next()?.parse().ok()?;
        let waiting: u64 = fields.next()?.parse().ok()?;
        total = total.saturating_add(on_cpu).saturating_add(waiting);
        any = true;
    }
    any.then(|| Duration::from_nanos(total))
}

/// CPU time `pid` has used so far; `None` once it is gone.
fn cpu_time(pid: i32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_cpu_ticks(&stat).map(|ticks| Duration::from_millis(ticks * 1000 / ticks_per_second()))
}

/// utime + stime (fields 14 and 15) of a stat line; the command name (field 2) may hold
/// spaces and parentheses, so fields are counted after its last `)`.
fn parse_cpu_ticks(stat: &str) -> Option<u64> {
    let (_, rest) = stat.rsplit_once(')')?;
    let mut fields = rest.split_ascii_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some(user + system)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_are_read_after_the_command_name() {
        let check = |line: &str, expected: Option<u64>| {
            assert_eq!(parse_cpu_ticks(line), expected, "{line}");
        };
        check(
            "42 (python3) S 1 42 42 0 -1 4194304 100 0 0 0 7 3 0 0 20 0 1 0",
            Some(10),
        );
        check(
            "42 (a) b) (c) R 1 42 42 0 -1 4194304 100 0 0 0 250 50 0 0",
            Some(300),
        );
        check("garbage", None);
        let me = i32::try_from(std::process::id()).unwrap();
        assert!(cpu_time(me).is_some());
        assert!(busy_time(me).is_some());
        assert_eq!(busy_time(-1), None);
    }
}
