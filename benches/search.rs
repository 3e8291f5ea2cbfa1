//! `grep` and `glob` through the real binary over stdio against `rg` on the same tree, in the
//! same run: a generated tree of ≥ 300 MB in ≥ 20,000 files (cached under
//! `target/search-bench-tree-v1`, made once), plus the directory in `DSH_SEARCH_BENCH_DIR`
//! when set. Each call is timed from the request to its response (`tools/execute` on a host
//! with `builtins.fs`), each `rg` run from spawn to exit, 5 samples each after a warm-up,
//! ours and rg's interleaved; medians and their ratio are printed as a table, and each
//! result is checked against rg's (same files, same counts, same lines, same paths).
//!
//! `cargo bench --bench search`; `DSH_SEARCH_BENCH_SAMPLES=N` changes the sample count.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

#[path = "search_support/tree.rs"]
mod tree;

use anyhow::{Context, bail, ensure};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

const SPEC: tree::Spec = tree::Spec {
    files: 21_000,
    bytes_per_file: 15_000,
    seed: 7,
};

/// One comparison: our call and the rg command that does the same work.
struct Case {
    name: &'static str,
    tool: &'static str,
    arguments: Value,
    rg: &'static [&'static str],
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: r"grep files_with_matches `fn\s+parse_\w+`",
            tool: "grep",
            arguments: json!({ "pattern": r"fn\s+parse_\w+", "head_limit": 0 }),
            rg: &["-l", r"fn\s+parse_\w+"],
        },
        Case {
            name: "grep content `unsafe impl Send for`",
            tool: "grep",
            arguments: json!({ "pattern": "unsafe impl Send for", "output_mode": "content", "head_limit": 0 }),
            rg: &["-n", "unsafe impl Send for"],
        },
        Case {
            name: "grep count `TODO`",
            tool: "grep",
            arguments: json!({ "pattern": "TODO", "output_mode": "count", "head_limit": 0 }),
            rg: &["-c", "TODO"],
        },
        Case {
            name: "glob `**/*.rs`",
            tool: "glob",
            arguments: json!({ "pattern": "**/*.rs" }),
            rg: &["--files", "-g", "**/*.rs"],
        },
    ]
}

/// The host over NDJSON stdio.
struct Host {
    child: Child,
    input: BufWriter<ChildStdin>,
    output: BufReader<ChildStdout>,
    next_id: u64,
}

impl Host {
    fn start(root: &Path) -> anyhow::Result<Host> {
        let binary = std::env::var_os("DSH_BENCH_HOST")
            .unwrap_or_else(|| env!("CARGO_BIN_EXE_dsh-tools").into());
        let mut child = Command::new(binary)
            .args(["serve", "--framing", "ndjson"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("spawning dsh-tools")?;
        let input = BufWriter::new(child.stdin.take().context("stdin")?);
        let output = BufReader::with_capacity(1 << 20, child.stdout.take().context("stdout")?);
        let mut host = Host {
            child,
            input,
            output,
            next_id: 0,
        };
        let config = json!({ "builtins": { "fs": { "root": root.display().to_string() } } });
        let init = host.request(
            "initialize",
            json!({ "protocolVersion": "1", "capabilities": {}, "config": config }),
        )?;
        ensure!(init.get("result").is_some(), "initialize failed: {init}");
        Ok(host)
    }

    fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        Ok(self.exchange(method, params)?.1)
    }

    /// Sends a request and reads until its response: the time the response took to arrive
    /// (its last byte read, before this client parses it) and the response. Notifications
    /// (`tools/result` first of all) are read but not parsed: their cost to the host, written
    /// and sent, is in the time; a client's own JSON parsing is not, as rg's is not.
    fn exchange(&mut self, method: &str, params: Value) -> anyhow::Result<(Duration, Value)> {
        self.next_id += 1;
        let id = self.next_id;
        let request = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let started = Instant::now();
        writeln!(self.input, "{request}")?;
        self.input.flush()?;
        let mut line = String::new();
        loop {
            line.clear();
            if self.output.read_line(&mut line)? == 0 {
                bail!("the host closed its output");
            }
            let elapsed = started.elapsed();
            if line.starts_with(r#"{"jsonrpc":"2.0","method":"#) {
                continue;
            }
            let message: Value = serde_json::from_str(&line)?;
            if message.get("method").is_none() && message["id"] == id {
                return Ok((elapsed, message));
            }
        }
    }

    /// One call, timed; its value (the host answers with the whole value: `head_limit` 0).
    fn call(&mut self, tool: &str, arguments: &Value) -> anyhow::Result<(Duration, Value)> {
        let params = json!({ "callId": "bench", "name": tool, "arguments": arguments });
        let (elapsed, response) = self.exchange("tools/execute", params)?;
        let result = &response["result"];
        ensure!(result["isError"] == false, "{tool} failed: {response}");
        Ok((elapsed, result["value"].clone()))
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn rg(root: &Path, args: &[&str]) -> anyhow::Result<(Duration, String)> {
    let started = Instant::now();
    let output = Command::new("rg")
        .args(args)
        .current_dir(root)
        .stderr(Stdio::null())
        .output()?;
    let elapsed = started.elapsed();
    ensure!(
        output.status.code().is_some_and(|c| c <= 1),
        "rg {args:?} failed"
    );
    Ok((elapsed, String::from_utf8(output.stdout)?))
}

/// Whether our value holds what rg printed, and a short account of both.
fn same(tool: &str, value: &Value, rg_out: &str, rg_args: &[&str]) -> (bool, String) {
    // rg -n also prints a warning line for each file it stopped searching at a NUL byte
    // after a match; that file's lines before it are in both.
    let mut theirs: Vec<String> = rg_out
        .lines()
        .filter(|line| !line.contains(": WARNING: stopped searching binary file"))
        .map(str::to_owned)
        .collect();
    theirs.sort();
    let mut ours: Vec<String> = match (tool, rg_args[0]) {
        ("glob", _) => strings(&value["paths"]),
        (_, "-l") => strings(&value["paths"]),
        (_, "-c") => value["counts"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| format!("{}:{}", c["path"].as_str().unwrap_or(""), c["count"]))
            .collect(),
        _ => value["files"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|file| {
                let path = file["path"].as_str().unwrap_or("").to_owned();
                file["matches"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(move |m| {
                        format!(
                            "{path}:{}:{}",
                            m["lineNumber"],
                            m["line"].as_str().unwrap_or("")
                        )
                    })
            })
            .collect(),
    };
    ours.sort();
    let total = value["total"].as_u64().unwrap_or(0);
    // glob returns the newest 100 paths; its total and those paths are what compare.
    let equal = if tool == "glob" {
        total == theirs.len() as u64 && ours.iter().all(|p| theirs.binary_search(p).is_ok())
    } else {
        ours == theirs
    };
    (equal, format!("{total} ours / {} rg's", theirs.len()))
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_owned))
        .collect()
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.0}", d.as_secs_f64() * 1000.0)
}

fn generated_tree() -> anyhow::Result<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/search-bench-tree-v1");
    let done = dir.join(".generated");
    if !done.exists() {
        println!("generating the bench tree in {} ...", dir.display());
        let _ = std::fs::remove_dir_all(&dir);
        tree::generate(&dir, SPEC)?;
        std::fs::write(&done, "")?;
    }
    Ok(dir)
}

fn bench(root: &Path, samples: usize, have_rg: bool) -> anyhow::Result<()> {
    let (bytes, files) = tree::size(root)?;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "\n{}: {:.0} MB in {files} files; {cpus} CPUs; load {}",
        root.display(),
        bytes as f64 / 1e6,
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    let mut host = Host::start(root)?;
    println!("| call | ours (ms) | rg (ms) | ratio | results |");
    println!("|---|---:|---:|---:|---|");
    for case in cases() {
        // Warm-up: page cache, the host's first call.
        let (_, value) = host.call(case.tool, &case.arguments)?;
        let rg_out = if have_rg {
            Some(rg(root, case.rg)?.1)
        } else {
            None
        };
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for _ in 0..samples {
            ours.push(host.call(case.tool, &case.arguments)?.0);
            if have_rg {
                theirs.push(rg(root, case.rg)?.0);
            }
        }
        let ours = median(ours);
        match rg_out {
            Some(rg_out) => {
                let theirs = median(theirs);
                let (equal, account) = same(case.tool, &value, &rg_out, case.rg);
                println!(
                    "| `{}` vs `rg {}` | {} | {} | {:.2}× | {} ({account}) |",
                    case.name,
                    case.rg.join(" "),
                    ms(ours),
                    ms(theirs),
                    ours.as_secs_f64() / theirs.as_secs_f64(),
                    if equal { "equal" } else { "DIFFERENT" },
                );
            }
            None => println!(
                "| `{}` | {} | - | - | rg not installed |",
                case.name,
                ms(ours)
            ),
        }
    }
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let samples = std::env::var("DSH_SEARCH_BENCH_SAMPLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let have_rg = Command::new("rg").arg("--version").output().is_ok();
    let generated = generated_tree()?;
    bench(&generated, samples, have_rg)?;
    if let Some(dir) = std::env::var_os("DSH_SEARCH_BENCH_DIR") {
        bench(&PathBuf::from(dir).canonicalize()?, samples, have_rg)?;
    }
    Ok(())
}
