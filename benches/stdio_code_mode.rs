//! Code Mode as a front end sees it: the release binary driven over stdio (ndjson) by a
//! buffered client, beside the same programs in-process, in one run.
//!
//! Scenarios, each reported as median, p90 and max in ms:
//! - a trivial run (`return 1`) spaced 100 ms apart (an agent's pace) and back to back;
//! - the first run after `initialize` (a new host each sample, `initialize` and `run_code`
//!   written together) and a whole `dsh-tools run` process of `return 1`;
//! - 1,000 sequential and 1,000 parallel binding calls to the built-in `read` (host-side:
//!   no client round trip), over stdio with `codeDispatchEvents` `full` and `summary`, and
//!   in-process through `ToolRuntime::execute` with the same built-ins;
//! - the Node worker anchor (`../shared/anchors/node-worker-run.mjs`) for the trivial run;
//! - the reference library itself, when `DSH_REFERENCE_ANCHOR` names a script that drives it
//!   (kept outside this tree: README "Performance" gives how it is built and what it runs),
//!   with the node binary `DSH_REFERENCE_NODE` (default `node`): its trivial run and 1,000
//!   sequential / parallel echo calls, in its own process, in the same run as ours.
//!
//! `cargo bench --bench stdio_code_mode` (cargo builds `dsh-tools` with the bench profile);
//! `BENCH_RUNS=<n>` sets the samples of the spaced trivial scenario (default 60; back to back
//! takes ten times as many),
//! `BENCH_CALL_RUNS=<n>` those of the 1,000-call scenarios (default 30, taken in turn in-process
//! and over stdio with each event level),
//! `DSH_BENCH_HOST=<executable>` measures another build of the host.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

mod stdio_support;

use anyhow::{Context, bail};
use dsh_tools::ToolExecutionInput;
use dsh_tools_protocol::HostConfig;
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use stdio_support::{Host, host_binary, ms, spread};

/// The binary's allocator, so the in-process numbers are the shipped ones.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const CALLS: usize = 1000;
/// Pause between spaced runs: an agent's runs are seconds apart, 100 ms is a brisk one.
const SPACING: Duration = Duration::from_millis(100);

/// `initialize` with the built-ins over `workspace` and the given event level.
fn initialize_message(workspace: &Path, events: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": "1",
        "capabilities": { "codeDispatchEvents": events },
        "config": {
            "tools": { "mode": "code" },
            "builtins": { "fs": { "root": workspace } }
        }
    } })
}

/// A host past `initialize`, its pool warm.
fn ready(workspace: &Path, events: &str) -> anyhow::Result<Host> {
    let mut host = Host::spawn(workspace)?;
    host.write(&initialize_message(workspace, events))?;
    host.answer(&json!("init"))?;
    host.run("return 1")?;
    Ok(host)
}

fn sequential_reads() -> String {
    format!(
        "let n = 0; for (let i = 0; i < {CALLS}; i++) {{ n += (await tools.read({{ file_path: 'notes.txt', limit: 1 }})).totalLines }} return n"
    )
}

fn parallel_reads() -> String {
    format!(
        "const r = await Promise.all(Array.from({{ length: {CALLS} }}, () => tools.read({{ file_path: 'notes.txt', limit: 1 }}))); return r.length"
    )
}

struct Row {
    scenario: String,
    place: &'static str,
    samples: Vec<f64>,
}

fn trivial_over_stdio(workspace: &Path, runs: usize, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let mut host = ready(workspace, "full")?;
    trivial("over stdio", runs, || host.run("return 1").map(drop), rows)?;
    host.close();
    Ok(())
}

/// The trivial run's rows at `place`: spaced, then back to back.
fn trivial(
    place: &'static str,
    runs: usize,
    mut run: impl FnMut() -> anyhow::Result<()>,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    let mut samples = Vec::new();
    for _ in 0..runs {
        samples.push(spaced(&mut run)?);
    }
    rows.push(Row {
        scenario: "trivial run, spaced 100 ms".into(),
        place,
        samples,
    });
    rows.push(Row {
        scenario: "trivial run, back to back".into(),
        place,
        samples: back_to_back(runs, run)?,
    });
    Ok(())
}

fn starts(workspace: &Path, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let samples = 10;
    let mut first = Vec::new();
    for _ in 0..samples {
        let started = Instant::now();
        let mut host = Host::spawn(workspace)?;
        host.write(&initialize_message(workspace, "full"))?;
        let id = host.send_run("return 1")?;
        host.answer(&json!("init"))?;
        host.answer(&id)?;
        first.push(ms(started));
        host.close();
    }
    rows.push(Row {
        scenario: "spawn + initialize → first run answered".into(),
        place: "over stdio",
        samples: first,
    });
    let program = workspace.join("one.ts");
    std::fs::write(&program, "return 1")?;
    let mut whole = Vec::new();
    for _ in 0..samples {
        let started = Instant::now();
        let status = Command::new(host_binary())
            .arg("run")
            .arg(&program)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()?;
        whole.push(ms(started));
        if !status.success() {
            bail!("dsh-tools run failed: {status}");
        }
    }
    rows.push(Row {
        scenario: "`dsh-tools run` of `return 1`, whole process".into(),
        place: "process",
        samples: whole,
    });
    Ok(())
}

/// Code Mode in this process, through `ToolRuntime::execute` with the same built-ins.
struct InProcess {
    tokio: tokio::runtime::Runtime,
    tools: std::sync::Arc<dsh_tools::ToolRuntime>,
}

impl InProcess {
    fn ready(workspace: &Path) -> anyhow::Result<InProcess> {
        let config: HostConfig = serde_json::from_value(json!({
            "tools": { "mode": "code" },
            "builtins": { "fs": { "root": workspace } }
        }))?;
        let tokio = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_stack_size(32 << 20)
            .build()?;
        let _inside = tokio.enter();
        let tools = dsh_tools::ToolRuntime::new(&config);
        let code = dsh_tools::code_mode::CodeMode::install(&tools, config.code_runtime.clone())?;
        let sessions = dsh_tools::builtins::bash::session::ExecSessions::new();
        dsh_tools::builtins::register_builtins(
            &tools,
            &config.builtins,
            &config.sandbox,
            &sessions,
        )?;
        tokio.block_on(code.prewarm())?;
        Ok(InProcess { tokio, tools })
    }

    /// Runs `program` and checks it succeeded.
    fn run(&self, program: &str) -> anyhow::Result<()> {
        let arguments = json!({ "code": program, "description": "bench" });
        let result = self.tokio.block_on(
            self.tools
                .execute(ToolExecutionInput::new("bench", "run_code", arguments)),
        );
        if result.is_error() {
            bail!("{program}: {}", result.text());
        }
        Ok(())
    }
}

/// Back-to-back samples per spaced one. Back to back, a run either finds an isolate ready
/// (about 0.2 ms) or waits for one being built (2–4 ms): the median of so two-humped a
/// distribution moves a lot between runs of the bench unless it rests on many samples.
const BACK_TO_BACK_PER_SPACED: usize = 10;

/// Times `runs` × [`BACK_TO_BACK_PER_SPACED`] calls of `run`, each right after the last.
fn back_to_back(
    runs: usize,
    mut run: impl FnMut() -> anyhow::Result<()>,
) -> anyhow::Result<Vec<f64>> {
    let mut samples = Vec::new();
    for _ in 0..runs * BACK_TO_BACK_PER_SPACED {
        let started = Instant::now();
        run()?;
        samples.push(ms(started));
    }
    Ok(samples)
}

/// Times `run` after a pause, as an agent spaces its runs.
fn spaced(run: impl FnOnce() -> anyhow::Result<()>) -> anyhow::Result<f64> {
    std::thread::sleep(SPACING);
    let started = Instant::now();
    run()?;
    Ok(ms(started))
}

/// 1,000 binding calls in one program, in-process and over stdio with events `full` and
/// `summary`, one sample of each in turn: the three places see the same machine, so their
/// ratio does not carry the drift of a 2-core VM between phases of the run.
fn calls(
    workspace: &Path,
    code: &InProcess,
    samples: usize,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    let mut full = ready(workspace, "full")?;
    let mut summary = ready(workspace, "summary")?;
    for (name, program) in [
        ("sequential", sequential_reads()),
        ("parallel", parallel_reads()),
    ] {
        code.run(&program)?;
        full.run(&program)?;
        summary.run(&program)?;
        let mut times: [Vec<f64>; 3] = Default::default();
        for _ in 0..samples {
            times[0].push(spaced(|| code.run(&program))?);
            times[1].push(spaced(|| full.run(&program).map(drop))?);
            times[2].push(spaced(|| summary.run(&program).map(drop))?);
        }
        let places = [
            "in-process",
            "over stdio, events full",
            "over stdio, events summary",
        ];
        for (place, samples) in places.into_iter().zip(times) {
            rows.push(Row {
                scenario: format!("{CALLS} {name} `read` calls"),
                place,
                samples,
            });
        }
    }
    full.close();
    summary.close();
    Ok(())
}

/// The anchor's trivial run (one fresh Node worker per run), if node is here.
fn anchor(runs: usize) -> Option<f64> {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/anchors/node-worker-run.mjs"
    );
    let output = Command::new("node")
        .args([script, &runs.to_string(), &CALLS.to_string()])
        .output()
        .ok()?;
    String::from_utf8(output.stdout)
        .ok()?
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|line| line["scenario"] == "trivial_run")
        .and_then(|line| line["median_ms"].as_f64())
}

/// The reference library's rows, if `DSH_REFERENCE_ANCHOR` names its driver script. The
/// script prints one JSON object per scenario (`scenario`, `median_ms`, `p90_ms`, `max_ms`).
fn reference(runs: usize) -> anyhow::Result<Vec<(String, f64, f64, f64)>> {
    let Some(script) = std::env::var_os("DSH_REFERENCE_ANCHOR") else {
        return Ok(Vec::new());
    };
    let node = std::env::var_os("DSH_REFERENCE_NODE").unwrap_or_else(|| "node".into());
    let output = Command::new(node)
        .arg("--no-warnings")
        .arg(&script)
        .arg(runs.to_string())
        .output()
        .context("running the reference anchor")?;
    if !output.status.success() {
        bail!(
            "the reference anchor failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let rows = String::from_utf8(output.stdout)?
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|line| {
            let number = |key: &str| line[key].as_f64();
            Some((
                line["scenario"].as_str()?.to_owned(),
                number("median_ms")?,
                number("p90_ms")?,
                number("max_ms")?,
            ))
        })
        .collect();
    Ok(rows)
}

/// Each over-stdio median ÷ the in-process median of the same scenario.
fn print_ratios(medians: &[(String, &str, f64)]) {
    for (scenario, place, median) in medians {
        let in_process = medians
            .iter()
            .find(|(other, at, _)| other == scenario && *at == "in-process");
        if let Some((_, _, base)) = in_process.filter(|_| place.starts_with("over stdio")) {
            println!("{scenario}, {place} ÷ in-process: {:.2}×", median / base);
        }
    }
}

/// A sample count from the environment, or `default`.
fn samples_from(variable: &str, default: usize) -> usize {
    std::env::var(variable)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(default)
}

fn main() -> anyhow::Result<()> {
    let runs = samples_from("BENCH_RUNS", 60);
    let call_runs = samples_from("BENCH_CALL_RUNS", 30);
    let workspace = tempfile::tempdir()?;
    std::fs::write(workspace.path().join("notes.txt"), "one\ntwo\nthree\n")?;
    let mut rows = Vec::new();
    let code = InProcess::ready(workspace.path())?;
    trivial("in-process", runs, || code.run("return 1"), &mut rows)?;
    trivial_over_stdio(workspace.path(), runs, &mut rows)?;
    starts(workspace.path(), &mut rows)?;
    calls(workspace.path(), &code, call_runs, &mut rows)?;
    drop(code);
    let anchor = anchor(runs.min(30));
    let reference = reference(runs.min(30))?;
    println!("| scenario | where | median ms | p90 ms | max ms |");
    println!("|---|---|---|---|---|");
    let mut medians = Vec::new();
    for row in rows {
        let samples = row.samples.len();
        let (median, p90, max) = spread(row.samples);
        medians.push((row.scenario.clone(), row.place, median));
        eprintln!(
            "{}",
            json!({ "scenario": row.scenario, "where": row.place, "samples": samples,
                "median_ms": median, "p90_ms": p90, "max_ms": max })
        );
        println!(
            "| {} | {} | {median:.3} | {p90:.3} | {max:.3} |",
            row.scenario, row.place
        );
    }
    print_ratios(&medians);
    if let Some(anchor) = anchor {
        println!("| trivial run | Node worker anchor | {anchor:.3} | – | – |");
    }
    for (scenario, median, p90, max) in reference {
        println!(
            "| {scenario} | reference library, in-process (Node) | {median:.3} | {p90:.3} | {max:.3} |"
        );
    }
    Ok(())
}
