//! The soak: mixed traffic against the real binary for a long time, then a check that the
//! host's resources came back. Not part of CI's default run (it takes 30 minutes):
//! `cargo bench --bench soak` (`DSH_SOAK_SECS=60` for a short one).
//!
//! One long-lived host takes, round after round: a native `read`, a Code Mode run with 20
//! binding calls to a client tool and one to `read`, a hostile program every fifth round
//! (a microtask flood or a built-in loop, stopped by its compute budget), and a `bash`
//! call cancelled mid-run every third. Every tenth round a second host is started, used
//! once and left the way clients leave: EOF, a closed stdout, or SIGKILL. Every 30 s the
//! long-lived host's RSS, open fds, threads and child processes are sampled; at the end,
//! after the traffic stops and the host is idle again, each must be back at its level after
//! warm-up (RSS within 32 MB), the short-lived hosts must all be gone with no process of
//! theirs left, nothing may be left in the hosts' `$TMPDIR`, and every answer must have
//! arrived. Each round also takes the third hostile round's cases (`soak/hostile.rs`).

#![allow(clippy::print_stdout, clippy::print_stderr)]

#[path = "soak/hostile.rs"]
mod hostile;

use anyhow::{Context, bail, ensure};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

/// Patience for one answer.
const PATIENCE: Duration = Duration::from_secs(120);
/// How far RSS may end above its level after warm-up.
const RSS_SLACK_KIB: u64 = 32 * 1024;

fn main() -> anyhow::Result<()> {
    let seconds = std::env::var("DSH_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1800u64);
    let (workspace, tmp) = (tempfile::tempdir()?, tempfile::tempdir()?);
    std::fs::write(workspace.path().join("notes.txt"), "one\ntwo\nthree\n")?;
    let dirs = Dirs {
        workspace: workspace.path(),
        tmp: tmp.path(),
    };
    let mut host = Host::spawn(&dirs)?;
    let mut memory = hostile::Memory::default();
    for round in 0..10 {
        host.round(round)?;
        host.hostile_round(round, &mut memory)?;
    }
    let baseline = host.sample()?;
    println!("after warm-up: {baseline}");
    let started = Instant::now();
    let mut next_sample = started + Duration::from_secs(30);
    let (mut rounds, mut short_lived) = (0u64, 0u64);
    while started.elapsed() < Duration::from_secs(seconds) {
        host.round(rounds)?;
        host.hostile_round(rounds, &mut memory)?;
        if rounds.is_multiple_of(10) {
            leave(&dirs, rounds / 10)?;
            short_lived += 1;
        }
        rounds += 1;
        if Instant::now() >= next_sample {
            println!(
                "{:>5} s, {rounds} rounds: {}",
                started.elapsed().as_secs(),
                host.sample()?
            );
            next_sample += Duration::from_secs(30);
        }
    }
    let end = host.settled(&baseline)?;
    println!("end (idle): {end}");
    host.finish()?;
    // A SIGKILLed host's scratch root stays until another host makes a scratch dir.
    leave(&dirs, 0)?;
    let left: Vec<_> = std::fs::read_dir(dirs.tmp)?
        .map(|entry| entry.map(|e| e.file_name()))
        .collect::<Result<_, _>>()?;
    ensure!(left.is_empty(), "left in the hosts' $TMPDIR: {left:?}");
    println!(
        "{rounds} rounds in {} s, {} short-lived hosts gone, nothing left: \
         RSS {} → {} KiB, fds {} → {}, threads {} → {}, children {} → {}",
        started.elapsed().as_secs(),
        short_lived,
        baseline.rss_kib,
        end.rss_kib,
        baseline.fds,
        end.fds,
        baseline.threads,
        end.threads,
        baseline.children,
        end.children
    );
    Ok(())
}

/// What a host holds at one moment.
#[derive(Clone, Copy, Debug)]
struct Resources {
    rss_kib: u64,
    fds: usize,
    threads: usize,
    children: usize,
}

impl std::fmt::Display for Resources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "RSS {} KiB, {} fds, {} threads, {} child processes",
            self.rss_kib, self.fds, self.threads, self.children
        )
    }
}

fn resources(pid: u32) -> anyhow::Result<Resources> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let rss_kib = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .context("no VmRSS")?;
    let count = |dir: String| std::fs::read_dir(dir).map(Iterator::count).unwrap_or(0);
    Ok(Resources {
        rss_kib,
        fds: count(format!("/proc/{pid}/fd")),
        threads: count(format!("/proc/{pid}/task")),
        children: descendants(pid).len(),
    })
}

/// Every live descendant of `root` (by parent pid, as `/proc` shows it).
fn descendants(root: u32) -> Vec<u32> {
    let mut parents = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some((_, after)) = stat.rsplit_once(')') else {
            continue;
        };
        let mut fields = after.split_ascii_whitespace();
        let state = fields.next().unwrap_or("");
        let parent: u32 = fields.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        if state != "Z" {
            parents.push((pid, parent));
        }
    }
    let (mut found, mut frontier) = (Vec::new(), vec![root]);
    while let Some(parent) = frontier.pop() {
        for (pid, ppid) in &parents {
            if *ppid == parent {
                found.push(*pid);
                frontier.push(*pid);
            }
        }
    }
    found
}

/// The host binary `cargo bench` built beside this bench.
fn binary() -> std::path::PathBuf {
    std::env::var_os("DSH_BENCH_HOST")
        .map(Into::into)
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_dsh-tools").into())
}

/// Where every host works, and its `$TMPDIR` (empty at the end).
struct Dirs<'a> {
    workspace: &'a std::path::Path,
    tmp: &'a std::path::Path,
}

/// The config of every host: the file built-ins and `bash` in the workspace, Code Mode
/// beside native tools, a warm pool smaller than the runs that meet at a rendezvous, and a
/// short compute budget for the hostile programs.
fn config(workspace: &std::path::Path) -> Value {
    let root = workspace.display().to_string();
    json!({
        "tools": { "mode": "both" },
        "builtins": { "fs": { "root": root }, "bash": { "cwd": root } },
        "codeRuntime": { "computeMs": 300, "maxWallMs": 10000, "poolSize": 2 }
    })
}

/// The long-lived host and an ndjson client that answers `client/executeTool` itself.
struct Host {
    child: Child,
    stdin: ChildStdin,
    inbox: Receiver<Value>,
    next_id: u64,
}

impl Host {
    fn spawn(dirs: &Dirs) -> anyhow::Result<Host> {
        let mut child = Command::new(binary())
            .args(["serve", "--framing", "ndjson"])
            .env("TMPDIR", dirs.tmp)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let stdin = child.stdin.take().context("stdin")?;
        let stdout = child.stdout.take().context("stdout")?;
        let (sender, inbox) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let Ok(message) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                if sender.send(message).is_err() {
                    break;
                }
            }
        });
        let mut host = Host {
            child,
            stdin,
            inbox,
            next_id: 0,
        };
        let initialized = host.request(
            "initialize",
            json!({ "protocolVersion": "1", "capabilities": { "executeTools": true },
                    "config": config(dirs.workspace) }),
        )?;
        ensure!(initialized.get("result").is_some(), "{initialized}");
        let registered = host.request(
            "tools/register",
            json!({ "tool": { "name": "echo", "description": "Echoes its input.",
                "parameters": { "i": { "type": "number", "required": true } },
                "output": { "schema": { "type": "number" } }, "concurrencySafe": true } }),
        )?;
        ensure!(registered.get("result").is_some(), "{registered}");
        Ok(host)
    }

    fn send(&mut self, message: &Value) -> anyhow::Result<()> {
        writeln!(self.stdin, "{message}")?;
        self.stdin.flush()?;
        Ok(())
    }

    /// Sends a request and returns its response, answering client requests meanwhile.
    fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))?;
        self.answer(id)
    }

    fn answer(&mut self, id: u64) -> anyhow::Result<Value> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let message = self.next_message(deadline)?;
            if message.get("method").and_then(Value::as_str) == Some("client/executeTool") {
                let reply = json!({ "jsonrpc": "2.0", "id": message["id"],
                    "result": { "value": message["params"]["arguments"]["i"] } });
                self.send(&reply)?;
                continue;
            }
            if message.get("method").is_none() && message["id"] == json!(id) {
                return Ok(message);
            }
        }
    }

    /// The host's next message, waiting until `deadline`.
    fn next_message(&mut self, deadline: Instant) -> anyhow::Result<Value> {
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.inbox.recv_timeout(wait) {
            Ok(message) => Ok(message),
            Err(RecvTimeoutError::Timeout) => bail!("no answer in time"),
            Err(RecvTimeoutError::Disconnected) => bail!("the host closed its stdout"),
        }
    }

    fn execute(&mut self, name: &str, arguments: Value) -> anyhow::Result<Value> {
        let response = self.request(
            "tools/execute",
            json!({ "callId": format!("c{}", self.next_id), "name": name, "arguments": arguments }),
        )?;
        response
            .get("result")
            .cloned()
            .context(response.to_string())
    }

    /// One round of the mix.
    fn round(&mut self, round: u64) -> anyhow::Result<()> {
        let read = self.execute("read", json!({ "file_path": "notes.txt" }))?;
        ensure!(read["isError"] == false, "read: {read}");
        let program = "const echoed = await Promise.all(Array.from({ length: 20 }, (_, i) => \
                       tools.echo({ i }))); const notes = await tools.read({ file_path: \
                       'notes.txt' }); return echoed.length + notes.lines.length;";
        let run = self.execute(
            "run_code",
            json!({ "code": program, "description": "soak" }),
        )?;
        ensure!(run["value"]["result"] == json!(23), "run: {run}");
        if round.is_multiple_of(5) {
            let hostile = if round.is_multiple_of(10) {
                "const f = () => Promise.resolve().then(f); f(); await new Promise(() => {});"
            } else {
                "for (;;) JSON.stringify(Array(1000).fill({ a: [1, 2, 3] }));"
            };
            let stopped = self.execute(
                "run_code",
                json!({ "code": hostile, "description": "hostile" }),
            )?;
            ensure!(stopped["isError"] == true, "hostile: {stopped}");
        }
        if round.is_multiple_of(3) {
            self.cancelled_bash()?;
        }
        Ok(())
    }

    /// A `bash` call cancelled once its command runs: it must answer as aborted.
    fn cancelled_bash(&mut self) -> anyhow::Result<()> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(
            &json!({ "jsonrpc": "2.0", "id": id, "method": "tools/execute",
            "params": { "callId": format!("b{id}"), "name": "bash",
                        "arguments": { "command": "echo started; sleep 30" } } }),
        )?;
        self.wait_for_a_child()?;
        self.send(
            &json!({ "jsonrpc": "2.0", "method": "$/cancelRequest", "params": { "id": id } }),
        )?;
        let response = self.answer(id)?;
        ensure!(
            response.get("error").is_some() || response["result"]["isError"] == true,
            "cancelled bash: {response}"
        );
        Ok(())
    }

    /// Waits until the host has a child process (the `bash` command it was asked to run).
    fn wait_for_a_child(&self) -> anyhow::Result<Vec<u32>> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let children = descendants(self.child.id());
            if !children.is_empty() {
                return Ok(children);
            }
            ensure!(Instant::now() < deadline, "the command never started");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn sample(&mut self) -> anyhow::Result<Resources> {
        resources(self.child.id())
    }

    /// The host's resources once idle: polled until fds, threads and children are back at
    /// `baseline` (pools refill and interpreters close in the background) or a minute passes.
    fn settled(&mut self, baseline: &Resources) -> anyhow::Result<Resources> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let now = self.sample()?;
            let back = now.fds <= baseline.fds
                && now.threads <= baseline.threads
                && now.children <= baseline.children
                && now.rss_kib <= baseline.rss_kib + RSS_SLACK_KIB;
            if back {
                return Ok(now);
            }
            if Instant::now() > deadline {
                bail!("not back to the level after warm-up: {now} (then: {baseline})");
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Ends the long-lived host with EOF and waits for it.
    fn finish(mut self) -> anyhow::Result<()> {
        drop(self.stdin);
        exited(&mut self.child)
    }
}

/// Waits (bounded) for `child` to exit.
fn exited(child: &mut Child) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while child.try_wait()?.is_none() {
        ensure!(
            Instant::now() < deadline,
            "host {} did not exit",
            child.id()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// Starts a host, runs one `read`, starts a `bash` command and, while it runs, leaves the
/// host by EOF, a closed stdout or SIGKILL (by `which`); then waits until the host and
/// every process it had are gone. Returns the host's pid.
fn leave(dirs: &Dirs, which: u64) -> anyhow::Result<u32> {
    let mut host = Host::spawn(dirs)?;
    let pid = host.child.id();
    let read = host.execute("read", json!({ "file_path": "notes.txt" }))?;
    ensure!(read["isError"] == false, "read: {read}");
    host.send(
        &json!({ "jsonrpc": "2.0", "id": "long", "method": "tools/execute",
        "params": { "callId": "long", "name": "bash", "arguments": { "command": "sleep 300" } } }),
    )?;
    let had = host.wait_for_a_child()?;
    let Host {
        mut child,
        mut stdin,
        inbox,
        ..
    } = host;
    match which % 3 {
        0 => drop(stdin),
        1 => {
            // The reader thread ends at its next line, closing the host's stdout; pings
            // make lines until a write of the host fails and it shuts down.
            drop(inbox);
            let deadline = Instant::now() + Duration::from_secs(10);
            while child.try_wait()?.is_none() && Instant::now() < deadline {
                let ping = json!({ "jsonrpc": "2.0", "id": "ping", "method": "tools/schemas" });
                if writeln!(stdin, "{ping}")
                    .and_then(|()| stdin.flush())
                    .is_err()
                {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        _ => child.kill()?,
    }
    exited(&mut child)?;
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let alive: Vec<u32> = had.iter().copied().filter(|pid| is_alive(*pid)).collect();
        if alive.is_empty() {
            return Ok(pid);
        }
        ensure!(
            Instant::now() < deadline,
            "host {pid} left {alive:?} running"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether `pid` exists and is not a zombie.
fn is_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let (_, after) = stat.rsplit_once(')')?;
            after
                .split_ascii_whitespace()
                .next()
                .map(|state| state != "Z")
        })
        .unwrap_or(false)
}
