//! Policy benchmarks: the Claude Code permission matcher with 1,000 rules (ns per decision,
//! target ≤ 5 µs; a parsed 20-command pipeline ≤ 50 µs) and the latency one client
//! pre-execute hook adds to a call over stdio.
//! Run with `cargo bench --bench policy`; numbers are medians of batches.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use dsh_tools::policy::Permissions;
use dsh_tools_protocol::{PermissionDefault, PermissionsConfig};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::hint::black_box;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The binary's allocator, so the numbers are the shipped ones.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Batches per measurement; the median batch is reported.
const BATCHES: usize = 31;

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// One rule set of 1,000 rules and the calls it is asked about.
struct RuleSet {
    name: &'static str,
    /// The target, ns per decision.
    target: f64,
    config: PermissionsConfig,
    calls: Vec<(&'static str, Value)>,
}

/// Spreads `rules` over allow (60%), ask (20%) and deny (20%).
fn spread(rules: Vec<String>) -> PermissionsConfig {
    let mut config = PermissionsConfig {
        default: Some(PermissionDefault::Ask),
        ..PermissionsConfig::default()
    };
    for (i, rule) in rules.into_iter().enumerate() {
        match i % 5 {
            0..=2 => config.allow.push(rule),
            3 => config.ask.push(rule),
            _ => config.deny.push(rule),
        }
    }
    config
}

/// 20 commands, ~200 bytes, quoted arguments and one substitution: the parser's path.
const PIPELINE: &str = "cat a.txt | grep -v 'b c' | sort | uniq -c | sort -rn | head -50 | \
    tr a-z A-Z | cut -d' ' -f2 | sed s/x/y/ | awk '{print $1}' | tee out/t | wc -l | \
    xargs echo | grep \"$(date +%Y)\" | sort -u | tail -3 | rev | nl | fold -w 80 | cat -n";

fn rule_sets() -> Vec<RuleSet> {
    let bash = |command: &str| ("bash", json!({ "command": command }));
    let read = |path: &str| ("read", json!({ "file_path": path }));
    vec![
        RuleSet {
            name: "20-command pipeline, 1,000 Bash rules",
            target: 50_000.0,
            config: spread((0..1000).map(|i| format!("Bash(tool{i} run:*)")).collect()),
            calls: vec![bash(PIPELINE)],
        },
        RuleSet {
            name: "1,000 Bash(prefix:*) rules on one tool",
            target: 5_000.0,
            config: spread((0..1000).map(|i| format!("Bash(tool{i} run:*)")).collect()),
            calls: vec![
                bash("tool500 run --fast"),
                bash("git status"),
                bash("tool1 run && tool999 run x; echo done"),
            ],
        },
        RuleSet {
            name: "1,000 Read(glob) rules on one tool",
            target: 5_000.0,
            config: spread((0..1000).map(|i| format!("Read(dir{i}/**)")).collect()),
            calls: vec![read("dir500/src/lib.rs"), read("elsewhere/a.txt")],
        },
        RuleSet {
            name: "1,000 mcp__server rules (server-wide)",
            target: 5_000.0,
            config: spread((0..1000).map(|i| format!("mcp__server{i}")).collect()),
            calls: vec![
                ("mcp__server500__search", json!({})),
                ("bash", json!({ "command": "ls" })),
            ],
        },
        RuleSet {
            name: "1,000 mixed rules over 500 tools",
            target: 5_000.0,
            config: spread(
                (0..1000)
                    .map(|i| match i % 4 {
                        0 => format!("Bash(tool{i} run:*)"),
                        1 => format!("Read(dir{i}/**)"),
                        2 => format!("mcp__s{i}__t{i}"),
                        _ => format!("WebFetch(domain:site{i}.example.com)"),
                    })
                    .collect(),
            ),
            calls: vec![
                bash("tool4 run"),
                read("dir5/a"),
                ("mcp__s6__t6", json!({})),
                (
                    "web_fetch",
                    json!({ "url": "https://docs.site7.example.com/x" }),
                ),
                ("other", json!({})),
            ],
        },
    ]
}

fn bench_matcher() {
    println!("permission matcher (ns per decide, median of {BATCHES} batches):");
    for set in rule_sets() {
        let permissions = Permissions::compile(&set.config).expect("rules compile");
        let per_batch = 20_000;
        let mut samples = Vec::with_capacity(BATCHES);
        for _ in 0..BATCHES {
            let started = Instant::now();
            for i in 0..per_batch {
                let (name, arguments) = &set.calls[i % set.calls.len()];
                black_box(permissions.decide(black_box(name), black_box(arguments)));
            }
            samples.push(started.elapsed().as_nanos() as f64 / per_batch as f64);
        }
        let ns = median(samples);
        let verdict = if ns <= set.target {
            "ok"
        } else {
            "OVER TARGET"
        };
        println!(
            "  {:<42} {ns:>9.0} ns  ({verdict}: target {} ns)",
            set.name, set.target
        );
    }
}

/// A pipelining client over ndjson: a reader thread answers every host request at once
/// (`client/executeTool` echoes, hooks allow) and forwards responses to the caller.
struct Client {
    child: Child,
    stdin: Arc<Mutex<ChildStdin>>,
    responses: Receiver<Value>,
    next_id: u64,
}

impl Client {
    fn spawn(hooked: bool) -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
            .args(["serve", "--framing", "ndjson"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn dsh-tools");
        let stdin = Arc::new(Mutex::new(child.stdin.take().unwrap()));
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (sender, responses) = channel();
        let answers = stdin.clone();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { return };
                let message: Value = serde_json::from_str(&line).unwrap();
                let result = match message["method"].as_str() {
                    None => {
                        if sender.send(message).is_err() {
                            return;
                        }
                        continue;
                    }
                    Some("client/executeTool") => {
                        json!({ "value": message["params"]["arguments"]["text"] })
                    }
                    Some("hooks/preExecute") => json!({ "kind": "allow" }),
                    Some(_) => continue,
                };
                let answer = json!({ "jsonrpc": "2.0", "id": message["id"], "result": result });
                let mut stdin = answers.lock().unwrap();
                writeln!(stdin, "{answer}").unwrap();
                stdin.flush().unwrap();
            }
        });
        let mut client = Client {
            child,
            stdin,
            responses,
            next_id: 0,
        };
        let capabilities = json!({ "executeTools": true, "hooks": hooked });
        client.call(
            "initialize",
            json!({ "protocolVersion": "1", "capabilities": capabilities }),
        );
        let tool = json!({ "name": "echo", "description": "Echo.",
            "parameters": { "text": { "type": "string", "required": true } },
            "output": { "schema": { "type": "string" } }, "concurrencySafe": true });
        client.call("tools/register", json!({ "tool": tool }));
        if hooked {
            client.call("hooks/subscribe", json!({ "event": "tools/pre-execute" }));
        }
        client
    }

    fn send(&mut self, method: &str, params: Value) {
        self.next_id += 1;
        let request =
            json!({ "jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params });
        let mut stdin = self.stdin.lock().unwrap();
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
    }

    fn receive(&mut self) -> Value {
        let response = self
            .responses
            .recv_timeout(Duration::from_secs(60))
            .expect("the host answers");
        assert!(response.get("error").is_none(), "{response}");
        response
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        self.send(method, params);
        self.receive()
    }

    fn execute(&mut self) {
        self.send(
            "tools/execute",
            json!({ "callId": "c", "name": "echo", "arguments": { "text": "hi" } }),
        );
    }

    /// µs per call, one call at a time.
    fn sequential(&mut self, calls: usize) -> f64 {
        let started = Instant::now();
        for _ in 0..calls {
            self.execute();
            let response = self.receive();
            assert_eq!(response["result"]["value"], "hi", "{response}");
        }
        started.elapsed().as_secs_f64() * 1e6 / calls as f64
    }

    /// µs per call with `window` calls in flight.
    fn pipelined(&mut self, calls: usize, window: usize) -> f64 {
        let started = Instant::now();
        let mut in_flight = HashMap::new();
        let (mut sent, mut done) = (0, 0);
        while done < calls {
            while sent < calls && in_flight.len() < window {
                self.execute();
                in_flight.insert(self.next_id, ());
                sent += 1;
            }
            let response = self.receive();
            assert_eq!(response["result"]["value"], "hi", "{response}");
            in_flight.remove(&response["id"].as_u64().unwrap());
            done += 1;
        }
        started.elapsed().as_secs_f64() * 1e6 / calls as f64
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Medians of the plain batches, the hooked batches, and of their paired differences.
fn paired(mut plain: impl FnMut() -> f64, mut hooked: impl FnMut() -> f64) -> (f64, f64, f64) {
    let (mut a, mut b, mut added) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..BATCHES {
        // Interleaved, so both see the same machine load.
        let (x, y) = (plain(), hooked());
        a.push(x);
        b.push(y);
        added.push(y - x);
    }
    (median(a), median(b), median(added))
}

fn bench_hook_latency() {
    println!(
        "one client pre-execute hook over stdio (µs per call; medians of {BATCHES} interleaved batches):"
    );
    let mut plain = Client::spawn(false);
    let mut hooked = Client::spawn(true);
    for client in [&mut plain, &mut hooked] {
        client.sequential(200);
        client.pipelined(500, 32);
    }
    let sequential = paired(|| plain.sequential(100), || hooked.sequential(100));
    let pipelined = paired(|| plain.pipelined(500, 32), || hooked.pipelined(500, 32));
    println!(
        "  {:<34} {:>12} {:>12} {:>12}",
        "", "no hook", "one hook", "added"
    );
    for (label, (a, b, added)) in [
        ("sequential (1 in flight)", sequential),
        ("pipelined (32 in flight)", pipelined),
    ] {
        println!("  {label:<34} {a:>12.1} {b:>12.1} {added:>12.1}");
    }
}

fn main() {
    bench_matcher();
    bench_hook_latency();
}
