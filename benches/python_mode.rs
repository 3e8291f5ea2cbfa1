//! Python Code Mode beside TypeScript Code Mode as a front end sees both: the release
//! binary driven over stdio (ndjson), one host per language, in the same run on the same
//! machine. Rows:
//! - a trivial run (`return 1`) spaced 100 ms apart (an agent's pace) and back to back;
//! - 1,000 sequential and 1,000 parallel (`asyncio.gather` / `Promise.all`) binding calls to
//!   the built-in `read` (host side: no client round trip);
//! - the Python fork server's resident memory after 100 runs and after 10,000 (it must not
//!   grow with runs: each run is a child that is gone).
//!
//! Issue 44's targets, checked in the table: Python back to back ≤ 15 ms median, spaced
//! ≤ 4 ms median, the server's RSS within 5 MB.
//!
//! `cargo bench --bench python_mode` prints one JSON line per row on stderr and a Markdown
//! table on stdout. `BENCH_RUNS` sets the spaced samples (default 30; back to back takes ten
//! times as many), `BENCH_CALL_RUNS` those of the call scenarios (default 10),
//! `BENCH_RSS_RUNS` the runs before the second RSS reading (default 10,000);
//! `DSH_BENCH_HOST=<executable>` measures another build of the host.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

mod stdio_support;

use anyhow::{Context, bail};
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};
use stdio_support::{Host, ms, spread};

const CALLS: usize = 1000;
/// Pause between spaced runs: an agent's runs are seconds apart, 100 ms is a brisk one.
const SPACING: Duration = Duration::from_millis(100);
/// Back-to-back samples per spaced one (the distribution is two-humped: a run finds its
/// interpreter ready or waits for one).
const BACK_TO_BACK_PER_SPACED: usize = 10;
/// Runs before the first reading of the server's memory (its heap settled).
const RSS_BASELINE_RUNS: usize = 100;

#[derive(Clone, Copy, PartialEq)]
enum Language {
    TypeScript,
    Python,
}

impl Language {
    fn name(self) -> &'static str {
        match self {
            Language::TypeScript => "typescript",
            Language::Python => "python",
        }
    }
}

/// A host whose Code Mode speaks `language`, past `initialize` and one run.
fn ready(workspace: &Path, language: Language) -> anyhow::Result<Host> {
    let mut host = Host::spawn(workspace)?;
    host.write(
        &json!({ "jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": "1",
        "capabilities": { "codeDispatchEvents": "summary" },
        "config": {
            "tools": { "mode": "code" },
            "builtins": { "fs": { "root": workspace } },
            "codeRuntime": { "language": language.name() }
        }
    } }),
    )?;
    host.answer(&json!("init"))?;
    host.run("return 1")?;
    Ok(host)
}

struct Scenario {
    name: String,
    typescript: String,
    python: String,
}

fn call_scenarios() -> Vec<Scenario> {
    let read = "{ file_path: 'notes.txt', limit: 1 }";
    let py_read = "{'file_path': 'notes.txt', 'limit': 1}";
    vec![
        Scenario {
            name: format!("{CALLS} sequential `read` calls"),
            typescript: format!(
                "let n = 0; for (let i = 0; i < {CALLS}; i++) {{ n += (await tools.read({read})).totalLines }} return n"
            ),
            python: format!(
                "n = 0\nfor i in range({CALLS}):\n    n += (await tools.read({py_read}))['totalLines']\nreturn n"
            ),
        },
        Scenario {
            name: format!("{CALLS} parallel `read` calls"),
            typescript: format!(
                "const r = await Promise.all(Array.from({{ length: {CALLS} }}, () => tools.read({read}))); return r.length"
            ),
            python: format!(
                "import asyncio\nr = await asyncio.gather(*(tools.read({py_read}) for _ in range({CALLS})))\nreturn len(r)"
            ),
        },
    ]
}

/// One row: a scenario's samples in each language, and the Python target if any.
struct Row {
    scenario: String,
    typescript: Vec<f64>,
    python: Vec<f64>,
    target: Option<f64>,
}

fn timed(host: &mut Host, program: &str) -> anyhow::Result<f64> {
    let started = Instant::now();
    host.run(program)?;
    Ok(ms(started))
}

fn spaced(host: &mut Host, program: &str) -> anyhow::Result<f64> {
    std::thread::sleep(SPACING);
    timed(host, program)
}

/// The trivial run's rows, one sample of each language in turn (so both see the same
/// machine through the drift of a shared VM).
fn trivial(hosts: &mut [Host; 2], runs: usize, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let mut samples: [Vec<f64>; 2] = Default::default();
    for _ in 0..runs {
        for (host, samples) in hosts.iter_mut().zip(&mut samples) {
            samples.push(spaced(host, "return 1")?);
        }
    }
    let [typescript, python] = samples;
    rows.push(Row {
        scenario: "trivial run, spaced 100 ms".into(),
        typescript,
        python,
        target: Some(4.0),
    });
    let mut samples: [Vec<f64>; 2] = Default::default();
    for (host, samples) in hosts.iter_mut().zip(&mut samples) {
        for _ in 0..runs * BACK_TO_BACK_PER_SPACED {
            samples.push(timed(host, "return 1")?);
        }
    }
    let [typescript, python] = samples;
    rows.push(Row {
        scenario: "trivial run, back to back".into(),
        typescript,
        python,
        target: Some(15.0),
    });
    Ok(())
}

fn calls(hosts: &mut [Host; 2], runs: usize, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    for scenario in call_scenarios() {
        let programs = [&scenario.typescript, &scenario.python];
        for (host, program) in hosts.iter_mut().zip(programs) {
            host.run(program)?;
        }
        let mut samples: [Vec<f64>; 2] = Default::default();
        for _ in 0..runs {
            for ((host, program), samples) in hosts.iter_mut().zip(programs).zip(&mut samples) {
                samples.push(spaced(host, program)?);
            }
        }
        let [typescript, python] = samples;
        rows.push(Row {
            scenario: scenario.name,
            typescript,
            python,
            target: None,
        });
    }
    Ok(())
}

/// The fork server among `host`'s descendants: the process whose command line ends in
/// `serve` (`python3 -I -B -c <bootstrap> serve`).
fn fork_server(host: &Host) -> anyhow::Result<u32> {
    let mut family = vec![host.child.id()];
    let mut index = 0;
    while index < family.len() {
        let parent = family[index];
        for entry in std::fs::read_dir("/proc")?.flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_ascii_whitespace().nth(1))
                .and_then(|ppid| ppid.parse::<u32>().ok());
            if ppid != Some(parent) {
                continue;
            }
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            if cmdline.ends_with(b"\0serve\0") {
                return Ok(pid);
            }
            family.push(pid);
        }
        index += 1;
    }
    bail!("no fork server under the host (did Python fall back to fresh interpreters?)")
}

/// Resident memory of `pid` in MiB (`VmRSS`).
fn resident_mib(pid: u32) -> anyhow::Result<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let kib: f64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.split_ascii_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .context("no VmRSS")?;
    Ok(kib / 1024.0)
}

/// The server's RSS after [`RSS_BASELINE_RUNS`] runs and after `runs` (the same server:
/// its pid is checked).
fn server_memory(host: &mut Host, runs: usize) -> anyhow::Result<(f64, f64)> {
    let server = fork_server(host)?;
    for _ in 0..RSS_BASELINE_RUNS {
        host.run("return 1")?;
    }
    let baseline = resident_mib(server)?;
    for _ in RSS_BASELINE_RUNS..runs {
        host.run("return 1")?;
    }
    if fork_server(host)? != server {
        bail!("the fork server was replaced during the runs");
    }
    Ok((baseline, resident_mib(server)?))
}

fn samples_from(variable: &str, default: usize) -> usize {
    std::env::var(variable)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
        .max(1)
}

fn main() -> anyhow::Result<()> {
    let runs = samples_from("BENCH_RUNS", 30);
    let call_runs = samples_from("BENCH_CALL_RUNS", 10);
    let rss_runs = samples_from("BENCH_RSS_RUNS", 10_000).max(RSS_BASELINE_RUNS);
    let workspace = tempfile::tempdir()?;
    std::fs::write(workspace.path().join("notes.txt"), "one\ntwo\nthree\n")?;
    let mut hosts = [
        ready(workspace.path(), Language::TypeScript)?,
        ready(workspace.path(), Language::Python)?,
    ];
    let mut rows = Vec::new();
    trivial(&mut hosts, runs, &mut rows)?;
    calls(&mut hosts, call_runs, &mut rows)?;
    let [typescript, mut python] = hosts;
    typescript.close();
    let (before, after) = server_memory(&mut python, rss_runs)?;
    python.close();

    println!("| scenario | TypeScript median ms (p90) | Python median ms (p90) | Python target |");
    println!("|---|---|---|---|");
    for row in rows {
        let (ts, ts_p90, ts_max) = spread(row.typescript);
        let (py, py_p90, py_max) = spread(row.python);
        let verdict = row.target.map(|target| {
            let met = if py <= target { "met" } else { "MISSED" };
            format!("≤ {target} ms: {met}")
        });
        eprintln!(
            "{}",
            json!({ "scenario": row.scenario,
                "typescript_median_ms": ts, "typescript_p90_ms": ts_p90, "typescript_max_ms": ts_max,
                "python_median_ms": py, "python_p90_ms": py_p90, "python_max_ms": py_max,
                "python_target_ms": row.target })
        );
        println!(
            "| {} | {ts:.2} ({ts_p90:.2}) | {py:.2} ({py_p90:.2}) | {} |",
            row.scenario,
            verdict.as_deref().unwrap_or("–")
        );
    }
    let growth = after - before;
    let met = if growth.abs() <= 5.0 { "met" } else { "MISSED" };
    eprintln!(
        "{}",
        json!({ "scenario": "fork server RSS", "after_runs": [RSS_BASELINE_RUNS, rss_runs],
            "rss_mib": [before, after], "growth_mib": growth }) as Value
    );
    println!(
        "| Python fork server RSS after {RSS_BASELINE_RUNS} → {rss_runs} runs | – | {before:.2} → {after:.2} MiB ({growth:+.3}) | within 5 MB: {met} |"
    );
    Ok(())
}
