//! What the sandbox costs a `bash` call: two real hosts side by side, one with the default
//! sandbox (`workspace-write`, no network: Landlock, a user and network namespace, no new
//! privileges, a scratch dir) and one with `sandbox.mode = "off"`, each running `true`
//! over ndjson stdio, alternately, so both see the same machine. Reported: the median and
//! p95 round trip of each and the difference of the medians (README target: ≤ +3 ms).
//!
//! `cargo bench --bench sandbox`; `DSH_BENCH_SCALE=0.2` runs fewer calls;
//! `DSH_BENCH_HOST=<executable>` measures another build.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

/// Calls per host (after the warm-up).
const CALLS: usize = 400;
/// Untimed calls per host first (page cache, probe, first fork).
const WARM_UP: usize = 20;
/// README target for the difference of the medians, in ms.
const TARGET_MS: f64 = 3.0;

/// One `dsh-tools serve --framing ndjson` with `bash` in a temporary workspace.
struct Host {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next: u64,
}

impl Host {
    fn start(sandbox: Value, workspace: &std::path::Path) -> Host {
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
        let config = json!({
            "builtins": { "bash": { "cwd": workspace.display().to_string() } },
            "sandbox": sandbox
        });
        let result = host.request(
            "initialize",
            json!({ "protocolVersion": "1", "config": config }),
        );
        assert!(result.get("capabilities").is_some(), "{result}");
        host
    }

    /// Sends one request and returns its result (notifications are skipped).
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

    /// One `bash` call of `true`: its round trip in ms.
    fn call(&mut self) -> f64 {
        let started = Instant::now();
        let result = self.request(
            "tools/execute",
            json!({ "callId": "b", "name": "bash", "arguments": { "command": "true" } }),
        );
        let elapsed = started.elapsed().as_secs_f64() * 1e3;
        assert_eq!(result["isError"], false, "{result}");
        elapsed
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `q` quantile of sorted samples.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let index = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[index]
}

fn main() {
    let scale = std::env::var("DSH_BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(1.0);
    let calls = ((CALLS as f64 * scale) as usize).max(20);
    let workspace = tempfile::tempdir().unwrap();
    let mut sandboxed = Host::start(json!({}), workspace.path());
    let mut off = Host::start(json!({ "mode": "off" }), workspace.path());
    for _ in 0..WARM_UP {
        sandboxed.call();
        off.call();
    }
    let (mut with, mut without) = (Vec::with_capacity(calls), Vec::with_capacity(calls));
    for i in 0..calls {
        // Alternate which goes first, so neither always follows the other.
        if i % 2 == 0 {
            with.push(sandboxed.call());
            without.push(off.call());
        } else {
            without.push(off.call());
            with.push(sandboxed.call());
        }
    }
    with.sort_by(f64::total_cmp);
    without.sort_by(f64::total_cmp);
    let (median_with, median_without) = (quantile(&with, 0.5), quantile(&without, 0.5));
    let added = median_with - median_without;
    println!("bash `true` round trip over stdio, {calls} calls per host, alternating");
    println!("| host | median ms | p95 ms |");
    println!("|---|---|---|");
    println!(
        "| sandbox off | {median_without:.2} | {:.2} |",
        quantile(&without, 0.95)
    );
    println!(
        "| sandbox workspace-write, network off | {median_with:.2} | {:.2} |",
        quantile(&with, 0.95)
    );
    println!(
        "sandbox setup cost: {added:+.2} ms median, {:+.2} ms p95 (target ≤ +{TARGET_MS} ms median): {}",
        quantile(&with, 0.95) - quantile(&without, 0.95),
        if added <= TARGET_MS { "met" } else { "MISSED" }
    );
    println!(
        "{}",
        json!({ "bench": "sandbox/bash_true", "calls": calls,
                "offMedianMs": median_without, "offP95Ms": quantile(&without, 0.95),
                "sandboxMedianMs": median_with, "sandboxP95Ms": quantile(&with, 0.95),
                "addedMedianMs": added })
    );
}
