//! What a long session costs the host: the release binary over ndjson stdio starts a
//! session that prints one line a second for ten minutes (`DSH_BENCH_SCALE=0.1`: one
//! minute), and the client waits for its end with blocking `bash_output` calls, as an agent
//! would. Reported: the host's CPU time over the session (utime + stime from
//! `/proc/<pid>/stat`) as a percentage of one core, beside an idle host's over the same
//! span, and the lines that arrived (README target: under 1 % of a core).
//!
//! `cargo bench --bench sessions`; `DSH_BENCH_HOST=<executable>` measures another build.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// Seconds the session prints for, at scale 1.
const SECONDS: f64 = 600.0;
/// README target: host CPU while a session runs, in percent of one core.
const TARGET_PERCENT: f64 = 1.0;

struct Host {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next: u64,
}

impl Host {
    fn start(workspace: &std::path::Path) -> Host {
        let executable = std::env::var_os("DSH_BENCH_HOST")
            .unwrap_or_else(|| env!("CARGO_BIN_EXE_dsh-tools").into());
        let mut child = Command::new(executable)
            .args(["serve", "--framing", "ndjson"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawning dsh-tools");
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        let mut host = Host {
            child,
            input,
            output,
            next: 0,
        };
        let config = json!({ "builtins": { "bash": { "cwd": workspace.display().to_string() } } });
        host.request(
            "initialize",
            json!({ "protocolVersion": "1", "config": config }),
        );
        host
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        let message = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        writeln!(self.input, "{message}").unwrap();
        self.input.flush().unwrap();
        let mut line = String::new();
        loop {
            line.clear();
            assert!(self.output.read_line(&mut line).unwrap() > 0, "host closed");
            let reply: Value = serde_json::from_str(&line).unwrap();
            if reply.get("method").is_none() && reply["id"] == id {
                return reply["result"].clone();
            }
        }
    }

    fn tool(&mut self, name: &str, arguments: Value) -> Value {
        let result = self.request(
            "tools/execute",
            json!({ "callId": "s", "name": name, "arguments": arguments }),
        );
        assert_eq!(result["isError"], false, "{result}");
        result["value"].clone()
    }

    /// The host's CPU time so far (utime + stime).
    fn cpu(&self) -> Duration {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap();
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .unwrap()
            .1
            .split_whitespace()
            .collect();
        let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
        // SAFETY: sysconf reads a constant.
        let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
        Duration::from_secs_f64(ticks as f64 / per_second)
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn main() {
    let scale: f64 = std::env::var("DSH_BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let lines = (SECONDS * scale).round().max(5.0) as u64;
    let workspace = tempfile::tempdir().unwrap();
    let mut host = Host::start(workspace.path());
    let mut idle = Host::start(workspace.path());
    // One call first: the host has forked once, like any host that runs commands.
    host.tool("bash", json!({ "command": "true" }));
    idle.tool("bash", json!({ "command": "true" }));
    let command = format!("for i in $(seq {lines}); do echo line $i; sleep 1; done");
    let (cpu_before, idle_before, started) = (host.cpu(), idle.cpu(), Instant::now());
    let session = host.tool("bash", json!({ "command": command, "background": true }));
    let id = session["sessionId"].as_str().unwrap().to_owned();
    let mut received = session["stdout"].as_str().unwrap().lines().count();
    let mut waits = 0;
    loop {
        let read = host.tool(
            "bash_output",
            json!({ "sessionId": id, "untilExit": true, "waitMs": 600000 }),
        );
        waits += 1;
        received += read["output"].as_str().unwrap().lines().count();
        if read["running"] == false {
            break;
        }
    }
    let span = started.elapsed();
    let busy = host.cpu() - cpu_before;
    let idle_busy = idle.cpu() - idle_before;
    let percent = |busy: Duration| busy.as_secs_f64() / span.as_secs_f64() * 100.0;
    println!(
        "session of {lines} lines over {:.0} s, read with {waits} blocking bash_output call(s): \
         {received} lines arrived",
        span.as_secs_f64()
    );
    println!(
        "host CPU {:.3} s = {:.3} % of a core (idle host beside it: {:.3} s = {:.3} %); \
         target < {TARGET_PERCENT} %",
        busy.as_secs_f64(),
        percent(busy),
        idle_busy.as_secs_f64(),
        percent(idle_busy)
    );
    assert_eq!(received as u64, lines, "every line arrived");
}
