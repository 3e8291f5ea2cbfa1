//! `dsh-tools run FILE.ts`: run one Code Mode program against the configured tools and show
//! its output and each dispatch with timings.

use anyhow::Context;
use dsh_tools::ToolExecutionInput;
use dsh_tools::code_mode::{CodeEvents, CodeMode, DispatchEnd, DispatchStart, render_run};
use dsh_tools::runtime::LogStream;
use dsh_tools::tool::ContentBlock;
use dsh_tools_protocol::{CodeLanguage, HostConfig, PresentationMode};
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

/// Runs the program in `path`; returns the process exit code (0 success, 1 failure, 143
/// when a termination signal aborted it). Ingested MCP servers are reaped before returning.
pub async fn run_program(
    path: &Path,
    config: &HostConfig,
    stop: tokio_util::sync::CancellationToken,
) -> anyhow::Result<i32> {
    let code = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the program {}", path.display()))?;
    let local = super::local_runtime(config, PresentationMode::Code).await?;
    let (runtime, code_mode) = (local.runtime.clone(), local.code.clone());
    code_mode.set_events(Arc::new(Printer));
    let description = format!("run {}", path.display());
    let arguments = serde_json::json!({ "code": code, "description": description });
    let started = std::time::Instant::now();
    let call = ToolExecutionInput::new("cli", "run_code", arguments)
        .with_signal(dsh_tools::tool::Signal::new(stop.clone()));
    let result = runtime.execute(call).await;
    local.mcp.shutdown().await;
    let elapsed = started.elapsed();
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "── run_code {} in {:.1} ms",
        if result.is_error() {
            "failed"
        } else {
            "completed"
        },
        ms(elapsed)
    )?;
    // A terminal reads the whole output: the value's rendering, not the spilled preview
    // (whose file goes when this command ends).
    match (result.value(), result.error()) {
        (Some(value), _) => writeln!(out, "{}", render_run(value))?,
        (None, Some(error)) => writeln!(out, "Error: {}", error.message)?,
        (None, None) => {
            for block in &result.content {
                if let ContentBlock::Text(text) = block {
                    writeln!(out, "{}", text.text)?;
                }
            }
        }
    }
    runtime.spill().cleanup();
    drop(code_mode);
    Ok(match (stop.is_cancelled(), result.is_error()) {
        (true, _) => 143,
        (false, true) => 1,
        (false, false) => 0,
    })
}

fn ms(duration: std::time::Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// Prints each settled dispatch with its duration (live output is shown by the result).
struct Printer;

impl CodeEvents for Printer {
    fn dispatch_start(&self, _: DispatchStart) {}

    fn dispatch_end(&self, event: DispatchEnd) {
        let status = if event.is_error { "✗" } else { "✓" };
        let arguments = dsh_tools::json::render_compact(&event.arguments);
        let line = format!(
            "{status} {} {} {arguments} ({:.1} ms)",
            event.id,
            event.name,
            event.time.1 - event.time.0
        );
        let _ = writeln!(std::io::stdout().lock(), "{line}");
    }

    fn log(&self, _: &str, _: LogStream, _: &str) {}
}

/// The SDK text for the configured tools (ingested MCP servers included), in `language`.
pub async fn sdk_text(config: &HostConfig, language: CodeLanguage) -> anyhow::Result<String> {
    let local = super::local_runtime(config, PresentationMode::Code).await?;
    let sdk = CodeMode::sdk_in(&local.runtime, None, language);
    local.mcp.shutdown().await;
    Ok(sdk)
}
