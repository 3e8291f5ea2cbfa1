//! Python Code Mode beside TypeScript Code Mode, measured in the same run on the same
//! machine: a trivial run, 1,000 sequential binding calls and 1,000 calls overlapped
//! (`asyncio.gather` / `Promise.all`), each through `ToolRuntime::execute` of `run_code` and
//! every binding call through the complete pipeline to a native echo tool.
//!
//! `cargo bench --bench python_mode` prints one JSON line per scenario on stderr and a
//! Markdown table on stdout. `BENCH_RUNS` sets the samples per scenario (default 30).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

mod code_support;

use code_support::{CALLS, echo_tool, measure};
use dsh_tools::ToolRuntime;
use dsh_tools::code_mode::CodeMode;
use dsh_tools_protocol::{CodeLanguage, HostConfig, PresentationMode};
use serde_json::json;
use std::sync::Arc;

/// Both runtimes are loaded; every run waits until both pools are full.
const BOTH: [CodeLanguage; 2] = [CodeLanguage::Typescript, CodeLanguage::Python];

/// The binary's allocator, so the numbers are the shipped ones.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

struct Scenario {
    name: String,
    typescript: String,
    python: String,
    runs: usize,
}

fn scenarios(runs: usize) -> Vec<Scenario> {
    let few = (runs / 3).max(5);
    vec![
        Scenario {
            name: "trivial_run".into(),
            typescript: "return 1".into(),
            python: "return 1".into(),
            runs,
        },
        Scenario {
            name: format!("sequential_{CALLS}_calls"),
            typescript: format!(
                "let n = 0; for (let i = 0; i < {CALLS}; i++) {{ n += (await tools.echo({{ i }})).i }} return n"
            ),
            python: format!(
                "n = 0\nfor i in range({CALLS}):\n    n += (await tools.echo({{'i': i}}))['i']\nreturn n"
            ),
            runs: few,
        },
        Scenario {
            name: format!("parallel_{CALLS}_calls"),
            typescript: format!(
                "const r = await Promise.all(Array.from({{ length: {CALLS} }}, (_, i) => tools.echo({{ i }}))); return r.length"
            ),
            python: format!(
                "import asyncio\nr = await asyncio.gather(*(tools.echo({{'i': i}}) for i in range({CALLS})))\nreturn len(r)"
            ),
            runs: few,
        },
    ]
}

/// A runtime whose default scope speaks `language`, both runtimes loaded.
async fn runtime(language: CodeLanguage) -> (Arc<ToolRuntime>, Arc<CodeMode>) {
    let mut config = HostConfig::default();
    config.tools.mode = PresentationMode::Code;
    config.code_runtime.language = language;
    config.code_runtime.languages = vec![CodeLanguage::Typescript, CodeLanguage::Python];
    let runtime = ToolRuntime::new(&config);
    let code = CodeMode::install(&runtime, config.code_runtime.clone()).unwrap();
    runtime.register(echo_tool(), None).unwrap();
    code.prewarm().await.unwrap();
    (runtime, code)
}

fn main() {
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let scenarios = scenarios(runs);
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(32 << 20)
        .build()
        .unwrap();
    let rows = tokio.block_on(async {
        let (typescript, typescript_code) = runtime(CodeLanguage::Typescript).await;
        let (python, python_code) = runtime(CodeLanguage::Python).await;
        let mut rows = Vec::new();
        for scenario in &scenarios {
            let ts = measure(
                &typescript,
                &typescript_code,
                &BOTH,
                &scenario.typescript,
                scenario.runs,
            )
            .await;
            let py = measure(
                &python,
                &python_code,
                &BOTH,
                &scenario.python,
                scenario.runs,
            )
            .await;
            rows.push((scenario.name.clone(), ts, py));
        }
        rows
    });
    println!("| scenario | TypeScript median ms (min–max) | Python median ms (min–max) |");
    println!("|---|---|---|");
    for (name, (ts, ts_min, ts_max), (py, py_min, py_max)) in &rows {
        eprintln!(
            "{}",
            json!({ "scenario": name, "typescript_median_ms": ts, "python_median_ms": py,
                "python_min_ms": py_min, "python_max_ms": py_max })
        );
        println!(
            "| {name} | {ts:.3} ({ts_min:.3}–{ts_max:.3}) | {py:.3} ({py_min:.3}–{py_max:.3}) |"
        );
    }
}
