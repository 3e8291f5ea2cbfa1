//! What the Code Mode benches share: the echo tool every binding call reaches through the
//! complete pipeline, and the timing of `run_code` runs.

use dsh_tools::ToolExecutionInput;
use dsh_tools::ToolRuntime;
use dsh_tools::code_mode::CodeMode;
use dsh_tools::tool::{BodyOutput, Concurrency, ToolDefinition, ToolRunContext};
use dsh_tools_protocol::CodeLanguage;
use serde_json::json;
use std::time::{Duration, Instant};

/// Binding calls per call-heavy scenario.
pub const CALLS: usize = 1000;

/// A parallel-safe native tool answering with its arguments.
pub fn echo_tool() -> ToolDefinition {
    ToolDefinition::builder("echo")
        .description("Echo the arguments.")
        .input_schema(json!({ "type": "object" }))
        .output(json!({ "type": "json" }))
        .concurrency(Concurrency::Parallel)
        .body(|ctx: ToolRunContext| async move { Ok(BodyOutput::from(ctx.arguments().clone())) })
        .unwrap()
}

/// (median, min, max) of `samples`.
pub fn median(mut samples: Vec<f64>) -> (f64, f64, f64) {
    samples.sort_by(|a, b| a.total_cmp(b));
    (
        samples[samples.len() / 2],
        samples[0],
        samples[samples.len() - 1],
    )
}

/// Waits until the pools of `languages` are full again, so each run measures a run and not
/// the start of an isolate or interpreter (an agent's runs are seconds apart; starting
/// happens off the request path).
async fn pools_refilled(code: &CodeMode, languages: &[CodeLanguage]) {
    let full = |language: &CodeLanguage| {
        let ready = match language {
            CodeLanguage::Typescript => code.ready_isolates(),
            CodeLanguage::Python => code.ready_interpreters(),
        };
        ready >= code.pool_size()
    };
    while !languages.iter().all(full) {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// Median, min and max milliseconds of `runs` runs of `program` (after one warm-up run),
/// each through `ToolRuntime::execute` of `run_code` with the pools of `languages` full.
pub async fn measure(
    runtime: &ToolRuntime,
    code: &CodeMode,
    languages: &[CodeLanguage],
    program: &str,
    runs: usize,
) -> (f64, f64, f64) {
    let arguments = json!({ "code": program, "description": "bench" });
    let mut samples = Vec::new();
    for i in 0..=runs {
        pools_refilled(code, languages).await;
        let started = Instant::now();
        let result = runtime
            .execute(ToolExecutionInput::new(
                "bench",
                "run_code",
                arguments.clone(),
            ))
            .await;
        let elapsed = started.elapsed().as_secs_f64() * 1000.0;
        assert!(!result.is_error(), "{program}: {}", result.text());
        if i > 0 {
            samples.push(elapsed);
        }
    }
    median(samples)
}
