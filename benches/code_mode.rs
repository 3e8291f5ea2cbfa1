//! Code Mode against the seed's runtime design (`../shared/anchors/node-worker-run.mjs`,
//! one fresh Node worker per run), measured in the same run on the same machine.
//!
//! `cargo bench --bench code_mode` prints one JSON line per scenario and a table with the
//! ratio anchor/ours. Every run goes through `ToolRuntime::execute` of `run_code`, and every
//! binding call through the complete pipeline to a native echo tool.
//!
//! `BENCH_RUNS=<n>` sets the runs per scenario, `BENCH_ONLY=<substring>` keeps the matching
//! scenarios and `BENCH_PROGRAM=<TypeScript>` measures one program alone (for profiling, e.g.
//! under `valgrind --tool=callgrind --toggle-collect='*RunControl*busy*'`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

mod code_support;

use code_support::{CALLS, echo_tool, measure};
use dsh_tools::code_mode::CodeMode;
use dsh_tools::{ToolExecutionInput, ToolRuntime};
use dsh_tools_protocol::{CodeLanguage, HostConfig, PresentationMode};
use serde_json::{Value, json};
use std::process::Command;
use std::time::Instant;

/// The binary's allocator, so the numbers are the shipped ones.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

struct Scenario {
    name: String,
    code: String,
    runs: usize,
}

fn scenarios(runs: usize) -> Vec<Scenario> {
    let few = (runs / 3).max(5);
    vec![
        Scenario {
            name: "trivial_run".into(),
            code: "return 1".into(),
            runs,
        },
        Scenario {
            name: "one_call".into(),
            code: "return await tools.echo({ a: 1 })".into(),
            runs,
        },
        Scenario {
            name: format!("sequential_{CALLS}_calls"),
            code: format!(
                "let n = 0; for (let i = 0; i < {CALLS}; i++) {{ n += (await tools.echo({{ i }})).i }} return n"
            ),
            runs: few,
        },
        Scenario {
            name: format!("parallel_{CALLS}_calls"),
            code: format!(
                "const r = await Promise.all(Array.from({{ length: {CALLS} }}, (_, i) => tools.echo({{ i }}))); return r.length"
            ),
            runs: few,
        },
        // The engine's own floor under the parallel scenario: the same program shape with no
        // tool at all (no binding, no snapshot, no pipeline).
        Scenario {
            name: format!("parallel_{CALLS}_promises_without_tools"),
            code: format!(
                "const r = await Promise.all(Array.from({{ length: {CALLS} }}, (_, i) => Promise.resolve({{ i }}))); return r.length"
            ),
            runs: few,
        },
    ]
}

async fn ours(scenarios: &[Scenario]) -> Vec<(String, f64, f64, f64)> {
    let mut config = HostConfig::default();
    config.tools.mode = PresentationMode::Code;
    let runtime = ToolRuntime::new(&config);
    let code = CodeMode::install(&runtime, config.code_runtime.clone()).unwrap();
    runtime.register(echo_tool(), None).unwrap();
    code.prewarm().await.unwrap();
    let mut rows = Vec::new();
    for scenario in scenarios {
        let (median, min, max) = measure(
            &runtime,
            &code,
            &[CodeLanguage::Typescript],
            &scenario.code,
            scenario.runs,
        )
        .await;
        rows.push((scenario.name.clone(), median, min, max));
    }
    let sustained = {
        let arguments = json!({ "code": "return 1", "description": "sustained" });
        let started = Instant::now();
        let n = 50;
        for _ in 0..n {
            runtime
                .execute(ToolExecutionInput::new(
                    "bench",
                    "run_code",
                    arguments.clone(),
                ))
                .await;
        }
        started.elapsed().as_secs_f64() * 1000.0 / f64::from(n)
    };
    rows.push((
        "trivial_run_back_to_back".into(),
        sustained,
        sustained,
        sustained,
    ));
    rows
}

fn anchor(runs: usize) -> Option<Vec<Value>> {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/anchors/node-worker-run.mjs"
    );
    let output = Command::new("node")
        .args([script, &runs.to_string(), &CALLS.to_string()])
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    Some(
        text.lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect(),
    )
}

fn main() {
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    // BENCH_ONLY=<substring> keeps the matching scenarios (for profiling one of them).
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    // BENCH_PROGRAM=<TypeScript> measures that program alone, without the anchor.
    let program = std::env::var("BENCH_PROGRAM").ok();
    let scenarios: Vec<Scenario> = match &program {
        Some(code) => vec![Scenario {
            name: "program".into(),
            code: code.clone(),
            runs,
        }],
        None => scenarios(runs)
            .into_iter()
            .filter(|s| s.name.contains(&only))
            .collect(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(32 << 20)
        .build()
        .unwrap();
    let rows = runtime.block_on(ours(&scenarios));
    let anchors = match program {
        Some(_) => Vec::new(),
        None => anchor(runs).unwrap_or_default(),
    };
    println!(
        "| scenario | dsh-tools median ms (min–max) | node worker anchor median ms | anchor / ours |"
    );
    println!("|---|---|---|---|");
    for (name, median, min, max) in &rows {
        let anchor_ms = anchors
            .iter()
            .find(|a| a["scenario"] == *name.as_str())
            .and_then(|a| a["median_ms"].as_f64());
        let line = json!({ "scenario": name, "median_ms": median, "min_ms": min, "max_ms": max, "anchor_median_ms": anchor_ms });
        eprintln!("{line}");
        let (anchor_cell, ratio) = match anchor_ms {
            Some(a) => (format!("{a:.3}"), format!("{:.1}×", a / median)),
            None => ("—".into(), "—".into()),
        };
        println!("| {name} | {median:.3} ({min:.3}–{max:.3}) | {anchor_cell} | {ratio} |");
    }
}
