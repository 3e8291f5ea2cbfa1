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
use dsh_tools_protocol::{CodeLanguage, HostConfig, McpServerState, PresentationMode};
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;

/// Runs the program in `path`; returns the process exit code (0 success, 1 failure or a
/// configured MCP server that failed to start, 143 when a termination signal aborted it).
/// Ingested MCP servers are reaped before returning; their elicitations are answered as
/// `elicit` says (see [`super::elicit::for_run`]).
pub async fn run_program(
    path: &Path,
    config: &HostConfig,
    elicit: Option<super::ElicitPolicy>,
    stop: tokio_util::sync::CancellationToken,
) -> anyhow::Result<i32> {
    let code = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the program {}", path.display()))?;
    let elicitor = Some(super::elicit::for_run(elicit));
    let host = Host::assemble_eliciting(config, PresentationMode::Code, elicitor, None).await?;
    let failed = failed_servers(&host);
    if !failed.is_empty() {
        // The program would run without those tools: say why instead, and fail.
        let mut text: String = failed
            .iter()
            .map(|line| format!("dsh-tools run: {line}\n"))
            .collect();
        text.push_str(&format!(
            "dsh-tools run: not running {}: fix the server or set `enabled = false` for it\n",
            path.display()
        ));
        std::io::stderr().write_all(text.as_bytes())?;
        host.shutdown().await;
        return Ok(1);
    }
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
    print_result(&result, elapsed, path)?;
    // After the output: the spill files go only once the terminal has read them.
    host.shutdown().await;
    drop(code_mode);
    Ok(match (stop.is_cancelled(), result.is_error()) {
        (true, _) => 143,
        (false, true) => 1,
        (false, false) => 0,
    })
}

/// One line per configured server whose first start failed: its name and why.
fn failed_servers(host: &Host) -> Vec<String> {
    host.mcp
        .status()
        .into_iter()
        .filter(|s| matches!(s.state, McpServerState::Failed | McpServerState::Restarting))
        .map(|s| {
            let cause = s.last_error.as_deref().unwrap_or("no cause was reported");
            format!("MCP server \"{}\" failed to start: {cause}", s.server)
        })
        .collect()
}

/// Prints how the run ended and what it produced.
fn print_result(
    result: &ToolExecutionResult,
    elapsed: std::time::Duration,
    path: &Path,
) -> std::io::Result<()> {
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
        (None, Some(error)) => writeln!(out, "Error: {}", relabeled(&error.message, path))?,
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

/// A failure's first line with its program position (` at program.ts:2:7`,
/// ` at program.py:2`) naming the file that was run: the program is that file's text, so
/// its lines and columns are the file's. The captured output after it is left as written.
fn relabeled(message: &str, path: &Path) -> String {
    let (head, rest) = match message.split_once('\n') {
        Some((head, rest)) => (head, Some(rest)),
        None => (message, None),
    };
    let file = path.display().to_string();
    let mut head = head.to_owned();
    for label in ["program.ts", "program.py"] {
        if let Some(at) = head.rfind(&format!(" at {label}:")) {
            head.replace_range(at + 4..at + 4 + label.len(), &file);
            break;
        }
    }
    match rest {
        Some(rest) => format!("{head}\n{rest}"),
        None => head,
    }
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

#[cfg(test)]
mod tests {
    use super::relabeled;
    use std::path::Path;

    #[test]
    fn positions_name_the_file_that_was_run_and_logs_stay_as_written() {
        let path = Path::new("jobs/x.ts");
        assert_eq!(
            relabeled(
                "code run failed (exception): Error: boom at program.ts:2:7\nCaptured output:\nat program.ts:9:9",
                path
            ),
            "code run failed (exception): Error: boom at jobs/x.ts:2:7\nCaptured output:\nat program.ts:9:9"
        );
        assert_eq!(
            relabeled(
                "code run failed (exception): RuntimeError: boom at program.py:2",
                Path::new("y.py")
            ),
            "code run failed (exception): RuntimeError: boom at y.py:2"
        );
        assert_eq!(relabeled("code run timed out", path), "code run timed out");
    }
}
