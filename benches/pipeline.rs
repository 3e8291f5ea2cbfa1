//! Library-level cost of the pipeline: `ToolRuntime::execute` of a native echo tool (DSL
//! parameters, output validation, default rendering, the built-in timeout wrapper) on a
//! current-thread and a multi-thread tokio runtime, and `execute_batch` of 100 parallel calls.
//!
//! `cargo bench --bench pipeline [-- <scenario filter>]`; `DSH_BENCH_SCALE=0.1` shortens every
//! sample (profiling).

#![allow(clippy::print_stdout)]

mod support;

use dsh_tools::tool::{BodyOutput, Concurrency, Outcome, ToolError, ToolRunContext};
use dsh_tools::{ToolDefinition, ToolExecutionInput, ToolExecutionResult, ToolRuntime};
use dsh_tools_protocol::HostConfig;
use mimalloc::MiMalloc;
use serde_json::{Value, json};
use std::alloc::{GlobalAlloc, Layout};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use support::{Measured, Scenario, Unit, report};

/// Calls per sample of the sequential scenarios.
const CALLS: u64 = 100_000;
/// Batches per sample of the batch scenarios.
const BATCHES: u64 = 1_000;
const BATCH_SIZE: usize = 100;
const SAMPLES: usize = 7;
/// README target: at most 2 µs per sequential call.
const TARGET_NS_PER_CALL: f64 = 2_000.0;

/// The binary's allocator (mimalloc), counting allocations while `COUNTING` is on (only in
/// a separate, untimed pass, so timed samples pay one relaxed load per allocation).
struct CountingAllocator;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is forwarded unchanged to `MiMalloc` (the binary's allocator); counting touches only atomics.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { MiMalloc.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller upholds `GlobalAlloc::dealloc`'s contract.
        unsafe { MiMalloc.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller upholds `GlobalAlloc::realloc`'s contract.
        unsafe { MiMalloc.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

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
    let flavors = [("current_thread", &current), ("multi_thread", &multi)];
    let mut results = Vec::new();
    for (flavor, tokio_runtime) in flavors {
        let sample = || on_worker(tokio_runtime, sequential_calls(runtime.clone(), calls));
        let scenario = Scenario {
            name: format!("execute/{flavor}"),
            unit: Unit::NanosPerCall,
            calls,
            samples: SAMPLES,
            target: Some(TARGET_NS_PER_CALL),
            cpu_of: vec![("bench", None)],
        };
        results.extend(with_allocations(scenario.measure(sample)?, sample)?);
    }
    for (flavor, tokio_runtime) in flavors {
        let sample = || on_worker(tokio_runtime, batches_of_calls(runtime.clone(), batches));
        let scenario = Scenario {
            name: format!("execute_batch_{BATCH_SIZE}_parallel/{flavor}"),
            unit: Unit::NanosPerCall,
            calls: batches * BATCH_SIZE as u64,
            samples: SAMPLES,
            target: None,
            cpu_of: vec![("bench", None)],
        };
        results.extend(with_allocations(scenario.measure(sample)?, sample)?);
    }
    report(&results);
    Ok(())
}

/// Adds the allocations per call of one more (untimed) sample.
fn with_allocations(
    measured: Option<Measured>,
    mut sample: impl FnMut() -> anyhow::Result<()>,
) -> anyhow::Result<Option<Measured>> {
    let Some(mut measured) = measured else {
        return Ok(None);
    };
    ALLOCATIONS.store(0, Ordering::Relaxed);
    COUNTING.store(true, Ordering::Relaxed);
    let outcome = sample();
    COUNTING.store(false, Ordering::Relaxed);
    outcome?;
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) as f64;
    measured.allocations_per_call = Some(allocations / measured.calls_per_sample as f64);
    Ok(Some(measured))
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
