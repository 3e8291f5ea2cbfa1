//! `dsh-tools run FILE.ts`: run one Code Mode program against the configured tools and show
//! its output and each dispatch with timings: on a terminal, a live line per dispatch in
//! flight ([`super::live`]); otherwise plain lines as each settles.

use super::live::LiveLines;
use anyhow::Context;
use dsh_tools::ToolExecutionResult;
use dsh_tools::code_mode::{CodeEvents, CodeMode, DispatchEnd, DispatchStart, render_run};
use dsh_tools::host::Host;
use dsh_tools::runtime::LogStream;
use dsh_tools::tool::ContentBlock;
use dsh_tools_protocol::{CodeLanguage, HostConfig, PresentationMode};
use std::io::{IsTerminal, Write};
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
    let host = Host::assemble(config, PresentationMode::Code).await?;
    let (runtime, code_mode) = (host.runtime.clone(), host.code.clone());
    let live = std::io::stdout().is_terminal().then(LiveLines::new);
    if let Some(live) = &live
        && runtime.set_progress_sink(live.clone()).is_err()
    {
        tracing::debug!("the runtime already had a progress sink");
    }
    code_mode.set_events(Arc::new(Printer { live }));
    let description = format!("run {}", path.display());
    let arguments = serde_json::json!({ "code": code, "description": description });
    let started = std::time::Instant::now();
    let call = CodeMode::entry_call("cli", arguments)
        .with_signal(dsh_tools::tool::Signal::new(stop.clone()));
    let result = runtime.execute(call).await;
    let elapsed = started.elapsed();
    print_result(&result, elapsed)?;
    // After the output: the spill files go only once the terminal has read them.
    host.shutdown().await;
    drop(code_mode);
    Ok(match (stop.is_cancelled(), result.is_error()) {
        (true, _) => 143,
        (false, true) => 1,
        (false, false) => 0,
    })
}

/// Prints how the run ended and what it produced.
fn print_result(result: &ToolExecutionResult, elapsed: std::time::Duration) -> std::io::Result<()> {
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
    Ok(())
}

fn ms(duration: std::time::Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// Prints each settled dispatch with its duration; with `live`, shows it while it runs.
struct Printer {
    live: Option<Arc<LiveLines>>,
}

impl CodeEvents for Printer {
    fn dispatch_start(&self, event: DispatchStart) {
        if let Some(live) = &self.live {
            let arguments = dsh_tools::json::render_compact(&event.arguments);
            live.start(
                &event.id,
                format!("{} {} {arguments}", event.id, event.name),
            );
        }
    }

    fn dispatch_end(&self, event: DispatchEnd) {
        let status = if event.is_error { "✗" } else { "✓" };
        let arguments = dsh_tools::json::render_compact(&event.arguments);
        let line = format!(
            "{status} {} {} {arguments} ({:.1} ms)",
            event.id,
            event.name,
            event.time.1 - event.time.0
        );
        match &self.live {
            Some(live) => live.end(&event.id, line),
            None => {
                let _ = writeln!(std::io::stdout().lock(), "{line}");
            }
        }
    }

    fn log(&self, _: &str, _: LogStream, _: &str) {}
}

/// The SDK text for the configured tools (ingested MCP servers included), in `language`.
pub async fn sdk_text(config: &HostConfig, language: CodeLanguage) -> anyhow::Result<String> {
    let host = Host::assemble(config, PresentationMode::Code).await?;
    let sdk = CodeMode::sdk_in(&host.runtime, None, language);
    host.shutdown().await;
    Ok(sdk)
}
