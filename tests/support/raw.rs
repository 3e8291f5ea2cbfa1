//! A host driven by hand over ndjson, for tests that must control the pipes themselves
//! (close only the read end, stop reading for a while), plus /proc readings of it.

use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// `dsh-tools serve --framing ndjson` with both pipes in the test's hands.
pub struct RawHost {
    pub child: Child,
    pub stdin: ChildStdin,
    pub stdout: BufReader<ChildStdout>,
}

impl RawHost {
    /// Spawns the host and completes `initialize` with `config`.
    pub fn initialized(config: Value) -> RawHost {
        RawHost::initialized_with(serde_json::json!({}), config)
    }

    /// Spawns the host and completes `initialize` with `capabilities` and `config`.
    pub fn initialized_with(capabilities: Value, config: Value) -> RawHost {
        let mut child = Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
            .args(["serve", "--framing", "ndjson"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut host = RawHost {
            child,
            stdin,
            stdout,
        };
        host.send(
            &serde_json::json!({ "jsonrpc": "2.0", "id": "init", "method": "initialize",
            "params": { "protocolVersion": "1", "capabilities": capabilities, "config": config } }),
        );
        loop {
            let message = host.next().expect("the host closed its stdout");
            if message["id"] == "init" {
                assert!(message.get("result").is_some(), "{message}");
                return host;
            }
        }
    }

    /// Writes one message.
    pub fn send(&mut self, message: &Value) {
        let mut bytes = serde_json::to_vec(message).unwrap();
        bytes.push(b'\n');
        self.stdin.write_all(&bytes).unwrap();
    }

    /// The next message, `None` at EOF.
    pub fn next(&mut self) -> Option<Value> {
        let mut line = String::new();
        (self.stdout.read_line(&mut line).unwrap() > 0)
            .then(|| serde_json::from_str(&line).unwrap())
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// `pid`'s peak resident memory (VmHWM), in bytes.
pub fn high_water_mark(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<u64>()
        .unwrap()
        * 1024
}

/// CPU ticks (utime + stime) of each of `pid`'s threads, by `tid:name`.
pub fn thread_ticks(pid: u32) -> Vec<(String, u64)> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .filter_map(Result::ok)
        .filter_map(|task| {
            let stat = std::fs::read_to_string(task.path().join("stat")).ok()?;
            let (name, ticks) = stat_ticks(&stat)?;
            Some((
                format!("{}:{name}", task.file_name().to_string_lossy()),
                ticks,
            ))
        })
        .collect()
}

/// Busy time (utime + stime, in clock ticks) and name from one `/proc/.../stat` text.
pub fn stat_ticks(stat: &str) -> Option<(&str, u64)> {
    let (name, rest) = stat.split_once(" (")?.1.rsplit_once(") ")?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some((name, ticks))
}

/// Busy time of process `pid` so far, in clock ticks.
pub fn busy_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    stat_ticks(&stat).unwrap().1
}

/// [`wait_until_quiet`] for `pid` and every process under it (the Python interpreters of
/// its runs work in processes of their own).
pub fn wait_until_tree_quiet(pid: u32, patience: std::time::Duration) {
    let tree_ticks = || {
        let under = crate::support::mcp::descendants(pid);
        // A process may end between the listing and the read: it counts nothing then.
        let ticks = |pid: u32| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| stat_ticks(&stat).map(|(_, ticks)| ticks))
                .unwrap_or(0)
        };
        ticks(pid) + under.iter().map(|(child, _)| ticks(*child)).sum::<u64>()
    };
    let deadline = std::time::Instant::now() + patience;
    let mut last = tree_ticks();
    loop {
        std::thread::sleep(std::time::Duration::from_millis(500));
        let now = tree_ticks();
        if now.saturating_sub(last) <= 2 || std::time::Instant::now() > deadline {
            return;
        }
        last = now;
    }
}

/// Waits until `pid` has done its work: its CPU time stops growing over half a second (or
/// `patience` passed). For tests whose client must not read until then.
pub fn wait_until_quiet(pid: u32, patience: std::time::Duration) {
    let deadline = std::time::Instant::now() + patience;
    let mut last = busy_ticks(pid);
    loop {
        std::thread::sleep(std::time::Duration::from_millis(500));
        let now = busy_ticks(pid);
        if now - last <= 2 || std::time::Instant::now() > deadline {
            return;
        }
        last = now;
    }
}
