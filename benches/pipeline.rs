//! Library-level cost of the pipeline: `ToolRuntime::execute` of a native echo tool (DSL
//! parameters, output validation, default rendering, the built-in timeout wrapper) on a
//! current-thread and a multi-thread tokio runtime, and `execute_batch` of 100 parallel calls.
//!
//! `cargo bench --bench pipeline`; `DSH_BENCH_SCALE=0.1` shortens every sample (profiling).

#![allow(clippy::print_stdout)]

mod support;

use dsh_tools::tool::{BodyOutput, Concurrency, Outcome, ToolError, ToolRunContext};
use dsh_tools::{ToolDefinition, ToolExecutionInput, ToolExecutionResult, ToolRuntime};
use dsh_tools_protocol::HostConfig;
use serde_json::{Value, json};
use std::sync::Arc;
use support::{Measured, Unit, print_table};

/// Calls per sample of the sequential scenarios.
const CALLS: u64 = 100_000;
/// Batches per sample of the batch scenarios.
const BATCHES: u64 = 1_000;
const BATCH_SIZE: usize = 100;
const SAMPLES: usize = 7;
/// README target: at most 2 µs per sequential call.
const TARGET_NS_PER_CALL: f64 = 2_000.0;

fn main() -> anyhow::Result<()> {
    let scale = std::env::var("DSH_BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(1.0);
    let calls = ((CALLS as f64 * scale) as u64).max(1);
    let batches = ((BATCHES as f64 * scale) as u64).max(1);
    let runtime = echo_runtime()?;
    let current = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let multi = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let mut results = Vec::new();
    for (flavor, tokio_runtime) in [("current_thread", &current), ("multi_thread", &multi)] {
        results.push(Measured::run(
            &format!("execute/{flavor}"),
            Unit::NanosPerCall,
            calls,
            SAMPLES,
            Some(TARGET_NS_PER_CALL),
            || on_worker(tokio_runtime, sequential_calls(runtime.clone(), calls)),
        )?);
    }
    for (flavor, tokio_runtime) in [("current_thread", &current), ("multi_thread", &multi)] {
        results.push(Measured::run(
            &format!("execute_batch_{BATCH_SIZE}_parallel/{flavor}"),
            Unit::NanosPerCall,
            batches * BATCH_SIZE as u64,
            SAMPLES,
            None,
            || on_worker(tokio_runtime, batches_of_calls(runtime.clone(), batches)),
        )?);
    }
    print_table(&results);
    Ok(())
}

/// A runtime with the default configuration and one global native echo tool.
fn echo_runtime() -> anyhow::Result<Arc<ToolRuntime>> {
    let runtime = ToolRuntime::new(&HostConfig::default());
    let echo = ToolDefinition::builder("echo")
        .description("Echo the text back.")
        .parameters(json!({ "text": { "type": "string", "required": true } }))
        .output(json!({ "type": "string" }))
        .concurrency(Concurrency::Parallel)
        .body(|ctx: ToolRunContext| async move {
            let text = ctx.arguments().get("text").cloned().unwrap_or(Value::Null);
            Ok::<_, ToolError>(BodyOutput::from(text))
        })?;
    runtime.register(echo, None)?;
    Ok(runtime)
}

/// Runs `work` as a spawned task, so a multi-thread runtime executes it on a worker thread
/// (`block_on` alone would poll it on the calling thread).
fn on_worker(
    tokio_runtime: &tokio::runtime::Runtime,
    work: impl Future<Output = anyhow::Result<()>> + Send + 'static,
) -> anyhow::Result<()> {
    tokio_runtime.block_on(async { tokio_runtime.spawn(work).await? })
}

async fn sequential_calls(runtime: Arc<ToolRuntime>, calls: u64) -> anyhow::Result<()> {
    let input = ToolExecutionInput::new("c", "echo", json!({ "text": "hello" }));
    for _ in 0..calls {
        let result = runtime.execute(input.clone()).await;
        check_echo(&result)?;
    }
    Ok(())
}

async fn batches_of_calls(runtime: Arc<ToolRuntime>, batches: u64) -> anyhow::Result<()> {
    let input = ToolExecutionInput::new("c", "echo", json!({ "text": "hello" }));
    for _ in 0..batches {
        let calls = vec![input.clone(); BATCH_SIZE];
        let results = runtime.execute_batch(calls, Some(BATCH_SIZE)).await;
        anyhow::ensure!(results.len() == BATCH_SIZE, "{} results", results.len());
        for result in &results {
            check_echo(result)?;
        }
    }
    Ok(())
}

/// A bench that silently measured an error path would be worthless.
fn check_echo(result: &ToolExecutionResult) -> anyhow::Result<()> {
    match &result.outcome {
        Outcome::Success(value) if value.as_str() == Some("hello") => Ok(()),
        other => anyhow::bail!("unexpected outcome {other:?}"),
    }
}
