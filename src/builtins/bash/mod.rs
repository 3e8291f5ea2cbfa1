//! `bash`: runs a command with `bash -c` in `builtins.bash.cwd`, with a scrubbed environment,
//! captured (bounded) stdout and stderr, its exit code or signal, and its whole process group
//! killed on timeout or cancellation; sandboxed (`builtins.bash.sandbox` over `sandbox`)
//! unless a call's `dangerouslyDisableSandbox` was approved. With spilling on, a stream past
//! its in-memory window is streamed whole to a spill file and the value names the file.

mod capture;
mod cards;
mod denial;
pub mod escalation;
mod live;
mod render;
mod run;
pub mod session;
mod spool;

use crate::builtins::typed::{self, TextRenderer};
use crate::egress::{Blocked, Egress};
use crate::process::budget::Exceeded;
use crate::process::{Sandbox, SharedNetwork};
use crate::spill::SpillStore;
use crate::tool::{
    Concurrency, DefinitionError, Render, ToolDefinition, ToolError, ToolRunContext,
};
use dsh_tools_protocol::{BashLimits, SandboxMode};
use run::{Ending, Keep, Run};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::json;
use session::{ExecSessions, SessionCall};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Deadline of a call that sets no `timeout` (ms).
pub const DEFAULT_TIMEOUT_MS: i64 = 120_000;
/// Largest `timeout` a call may set (ms).
pub const MAX_TIMEOUT_MS: i64 = 600_000;
/// Bytes kept per stream by default (head and tail halves).
pub const DEFAULT_OUTPUT_BYTES: usize = 30_000;

/// Where and how commands run.
#[derive(Clone, Debug)]
pub struct BashSettings {
    /// Canonical working directory.
    pub cwd: PathBuf,
    /// Bytes kept per stream when spilling is off.
    pub max_output_bytes: usize,
    /// Spill files (`spill.thresholdBytes` 0: off, the middle of a long stream is dropped).
    pub spill: Arc<SpillStore>,
    /// The sandbox of every call (unless one's escalation was approved).
    pub sandbox: Sandbox,
    /// What one command's whole process tree may use (`builtins.bash.limits`; escalated
    /// calls too: budgets are not the sandbox).
    pub limits: BashLimits,
    /// The host's exec sessions (commands that outlive their call).
    pub sessions: Arc<ExecSessions>,
    /// The proxy of a `sandbox.network = { allow, deny }` policy (one per family, serving
    /// each scope's listener).
    pub egress: Option<Arc<Egress>>,
}

impl BashSettings {
    /// How this call keeps its output: with spilling on, each stream holds up to the
    /// threshold in memory (so output the model could read whole is never spilled) and
    /// streams the rest to a file.
    fn keep(&self) -> Keep {
        let preview = self.spill.preview_bytes();
        match self.spill.threshold() {
            Some(threshold) => Keep {
                budget: threshold.max(preview.saturating_mul(2)),
                spill: Some(self.spill.clone()),
                preview,
            },
            None => Keep {
                budget: self.max_output_bytes,
                spill: None,
                preview,
            },
        }
    }
}

/// A stream saved whole to a spill file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpilledStream {
    /// Absolute path (`read` and `grep` accept it).
    pub path: String,
    /// The stream's size.
    pub bytes: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BashArgs {
    command: String,
    timeout: Option<i64>,
    #[serde(default)]
    dangerously_disable_sandbox: bool,
    yield_ms: Option<i64>,
    #[serde(default)]
    background: bool,
    #[serde(default)]
    tty: bool,
    #[serde(default)]
    detach: bool,
}

impl BashArgs {
    /// Whether the command may outlive the call (or needs a session's terminal).
    fn may_become_session(&self) -> bool {
        self.yield_ms.is_some() || self.background || self.tty
    }
}

/// The canonical value of a command that ran to its end.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BashOutput {
    /// Captured stdout.
    pub stdout: String,
    /// Captured stderr.
    pub stderr: String,
    /// Exit code, when the shell exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// The signal that killed the shell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    /// Whether either stream was cut in the middle.
    pub truncated: bool,
    /// Where the whole stdout is, when it was too long to keep in the value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdout_spill: Option<SpilledStream>,
    /// Where the whole stderr is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr_spill: Option<SpilledStream>,
    /// Set when the sandbox refused what the command tried: what it allows and how to ask
    /// for escalation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// The session the command runs on as, when it outlived the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// `true` when it runs on as a session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<bool>,
    /// The session's file: everything the command prints, from its start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_file: Option<SpilledStream>,
    /// `host:port` of each connection the sandbox's proxy refused while the call ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked_hosts: Option<Vec<String>>,
}

impl BashOutput {
    /// stdout then stderr, as a terminal would interleave them at the end.
    pub fn combined(&self) -> String {
        let mut text = self.stdout.clone();
        if !self.stderr.is_empty() {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&self.stderr);
        }
        text
    }
}

/// The `bash` definition, then its session tools.
pub fn definitions(settings: BashSettings) -> Result<Vec<ToolDefinition>, DefinitionError> {
    let cwd = settings.cwd.display().to_string();
    let keep = settings.keep();
    let kept = match keep.spill {
        Some(_) => format!(
            "A stream longer than {} bytes is saved whole to a file; the result shows its first \
             and last {} bytes and the file's path.",
            keep.budget, keep.preview
        ),
        None => format!(
            "Each stream keeps its first and last {} bytes.",
            keep.budget / 2
        ),
    };
    let description = format!(
        "Run a bash command in {cwd} and return its stdout, stderr and exit code. {sandbox} It \
         has a minimal environment. `timeout` is in ms (default {DEFAULT_TIMEOUT_MS}, at most \
         {MAX_TIMEOUT_MS}); on timeout the command and everything it started are killed. {kept}          For a dev server, a watcher, a long build or an interactive program, set yieldMs (or          background: true): if the command is still running then, the call returns what it          printed so far and a sessionId; bash_output reads more (waiting for a line with          `until`), bash_write types into it, bash_kill stops it. tty: true gives it a terminal          (REPLs, prompts).",
        sandbox = sandbox_sentence(&settings.sandbox),
    );
    let session_tools = session::tools::definitions(&settings.sessions, keep.budget)?;
    let settings = Arc::new(settings);
    let bash = ToolDefinition::builder("bash")
        .description(description)
        .parameters(json!({
            "command": { "type": "string", "required": true, "description": "The command to run." },
            "timeout": { "type": "integer", "description": "Timeout in milliseconds." },
            "description": { "type": "string", "description": "What the command does, in a few words (shown to the user)." },
            "dangerouslyDisableSandbox": { "type": "boolean", "description": "Run this one command outside the sandbox; the user is asked to approve it." },
            "yieldMs": { "type": "integer", "description": "Answer after this long (ms) even if the command is still running; it then runs on as a session." },
            "background": { "type": "boolean", "description": "Answer at once; the command runs on as a session (same as yieldMs: 0)." },
            "tty": { "type": "boolean", "description": "Run the command on a terminal (isatty is true; escape sequences are removed from what you read)." },
            "detach": { "type": "boolean", "description": "In a run_code program: keep the session after the program ends (otherwise it is killed then)." }
        }))
        .output(json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "stdout": { "type": "string", "required": true },
                "stderr": { "type": "string", "required": true },
                "exitCode": { "type": "integer" },
                "signal": { "type": "string" },
                "truncated": { "type": "boolean", "required": true },
                "stdoutSpill": spilled_stream_schema(),
                "stderrSpill": spilled_stream_schema(),
                "sandbox": { "type": "string" },
                "sessionId": { "type": "string" },
                "running": { "type": "boolean" },
                "outputFile": spilled_stream_schema(),
                "blockedHosts": { "type": "array", "items": { "type": "string" } }
            }
        }))
        .render(Render::Custom(Arc::new(TextRenderer(render::render))))
        .concurrency(Concurrency::Exclusive)
        .cards(Arc::new(cards::BashCards { cwd }))
        .card_meta(cards::card_meta())
        .body(move |ctx: ToolRunContext| {
            let settings = settings.clone();
            async move {
                let args: BashArgs = typed::arguments(ctx.arguments())?;
                let output = bash(&settings, &args, &ctx).await?;
                typed::output(&output)
            }
        })?;
    Ok(std::iter::once(bash).chain(session_tools).collect())
}

async fn bash(
    settings: &BashSettings,
    args: &BashArgs,
    ctx: &ToolRunContext,
) -> Result<BashOutput, ToolError> {
    let timeout_ms = match args.timeout {
        None => DEFAULT_TIMEOUT_MS,
        Some(ms) if (1..=MAX_TIMEOUT_MS).contains(&ms) => ms,
        Some(_) => {
            return Err(ToolError::new(format!(
                "timeout must be between 1 and {MAX_TIMEOUT_MS} ms"
            )));
        }
    };
    let timeout = Duration::from_millis(timeout_ms.unsigned_abs());
    if let Some(message) = settings.sandbox.unavailable() {
        return Err(ToolError::new(message));
    }
    // The pipeline asked the user before an escalated call got here (`escalation`).
    let unsandboxed = Sandbox::off();
    let sandbox = match args.dangerously_disable_sandbox {
        true => &unsandboxed,
        false => &settings.sandbox,
    };
    // A scope's sandboxed commands share one loopback (a server one starts, the next reaches).
    let network = match sandbox.joins_shared_network() {
        true => Some(
            settings
                .sessions
                .loopbacks
                .get(ctx.execution.agent.as_deref())
                .map_err(|e| ToolError::new(format!("cannot make the scope's network: {e}")))?,
        ),
        false => None,
    };
    let egress = settings
        .egress
        .as_ref()
        .filter(|_| sandbox.egress_policy().is_some());
    if let (Some(network), Some(egress)) = (&network, egress) {
        serve_proxy(network, egress)?;
    }
    let mark = egress.map(|egress| egress.refusals());
    let blocked = || match (egress, mark) {
        (Some(egress), Some(mark)) => egress.blocked_since(mark),
        _ => Vec::new(),
    };
    if args.may_become_session() {
        let output = in_session(settings, args, ctx, sandbox, timeout, network).await?;
        return Ok(with_blocked(output, blocked()));
    }
    let run = run::run(
        &args.command,
        &settings.cwd,
        run::Bounds {
            timeout,
            limits: &settings.limits,
        },
        &ctx.signal,
        &ctx.progress,
        &settings.keep(),
        run::Confined {
            sandbox,
            network: network.as_ref(),
        },
    )
    .await?;
    Ok(with_blocked(
        answer(settings, sandbox, run, timeout)?,
        blocked(),
    ))
}

/// Serves the policy's proxy on `network`'s listener, once per scope network (until the
/// network is dropped with its scope).
fn serve_proxy(network: &Arc<SharedNetwork>, egress: &Arc<Egress>) -> Result<(), ToolError> {
    let failed =
        |e: std::io::Error| ToolError::new(format!("cannot start the sandbox's proxy: {e}"));
    network.open_proxy().map_err(failed)?;
    if let Some(listener) = network.proxy_listener() {
        let listener = tokio::net::TcpListener::from_std(listener).map_err(failed)?;
        tokio::spawn(egress.clone().serve(listener, network.dropped()));
    }
    Ok(())
}

/// `output` with the connections the proxy refused while it ran: their hosts in
/// `blockedHosts`, and one line each (at most five) in `sandbox`.
fn with_blocked(mut output: BashOutput, blocked: Vec<Blocked>) -> BashOutput {
    if blocked.is_empty() {
        return output;
    }
    let mut hosts: Vec<String> = Vec::new();
    let mut lines: Vec<String> = Vec::new();
    for refusal in &blocked {
        let host = refusal.authority();
        if !hosts.contains(&host) {
            hosts.push(host);
            if lines.len() < 5 {
                lines.push(refusal.message());
            }
        }
    }
    output.sandbox = Some(lines.join("\n"));
    output.blocked_hosts = Some(hosts);
    output
}

/// A call that may leave its command running as a session (`yieldMs`, `background`, `tty`).
async fn in_session(
    settings: &BashSettings,
    args: &BashArgs,
    ctx: &ToolRunContext,
    sandbox: &Sandbox,
    timeout: Duration,
    network: Option<Arc<SharedNetwork>>,
) -> Result<BashOutput, ToolError> {
    let yield_after = match (args.background, args.yield_ms) {
        (true, _) => Some(Duration::ZERO),
        (false, Some(ms)) if (0..=MAX_TIMEOUT_MS).contains(&ms) => {
            Some(Duration::from_millis(ms.unsigned_abs()))
        }
        (false, Some(_)) => {
            return Err(ToolError::new(format!(
                "yieldMs must be between 0 and {MAX_TIMEOUT_MS}"
            )));
        }
        (false, None) => None,
    };
    // A command that may run on is bounded by its timeout only when the call sets one.
    let timeout = match yield_after {
        None => Some(timeout),
        Some(_) => args.timeout.map(|_| timeout),
    };
    // A Code Mode program's session ends with its run unless it is detached.
    let owner =
        (ctx.execution.parent.is_some() && !args.detach).then(|| ctx.signal.caller_token().clone());
    let keep = settings.keep();
    let call = SessionCall {
        command: &args.command,
        cwd: &settings.cwd,
        limits: &settings.limits,
        sandbox,
        keep: &keep,
        tty: args.tty,
        yield_after,
        timeout,
        owner,
        network,
    };
    match session::start(&settings.sessions, call, ctx).await? {
        session::Outcome::Finished(run) => {
            answer(settings, sandbox, run, timeout.unwrap_or(Duration::ZERO))
        }
        session::Outcome::Running {
            session,
            stdout,
            stderr,
        } => {
            let output_file = session.lock().log.saved().map(|saved| SpilledStream {
                path: saved.path.display().to_string(),
                bytes: saved.bytes,
            });
            let spilled = |stream: &spool::Spooled| {
                stream.spilled.as_ref().map(|saved| SpilledStream {
                    path: saved.path.display().to_string(),
                    bytes: saved.bytes,
                })
            };
            Ok(BashOutput {
                truncated: stdout.truncated || stderr.truncated,
                stdout_spill: spilled(&stdout),
                stderr_spill: spilled(&stderr),
                stdout: stdout.text,
                stderr: stderr.text,
                exit_code: None,
                signal: None,
                sandbox: None,
                session_id: Some(session.id.clone()),
                running: Some(true),
                output_file,
                blocked_hosts: None,
            })
        }
    }
}

/// The value of a command that ended within its call.
fn answer(
    settings: &BashSettings,
    sandbox: &Sandbox,
    run: Run,
    timeout: Duration,
) -> Result<BashOutput, ToolError> {
    let timeout_ms = timeout.as_millis();
    let spilled = |stream: &spool::Spooled| {
        stream.spilled.as_ref().map(|saved| SpilledStream {
            path: saved.path.display().to_string(),
            bytes: saved.bytes,
        })
    };
    let output = BashOutput {
        exit_code: None,
        signal: None,
        truncated: run.stdout.truncated || run.stderr.truncated,
        stdout_spill: spilled(&run.stdout),
        stderr_spill: spilled(&run.stderr),
        stdout: run.stdout.text,
        stderr: run.stderr.text,
        sandbox: None,
        session_id: None,
        running: None,
        output_file: None,
        blocked_hosts: None,
    };
    match run.ending {
        Ending::Exited(status) => {
            let exit_code = status.code().map(i64::from);
            let line = denial::sandbox_line(
                sandbox,
                run.scratch.as_deref(),
                &settings.cwd,
                exit_code,
                &output.combined(),
            );
            Ok(BashOutput {
                exit_code,
                signal: status.signal().map(run::signal_name),
                sandbox: line,
                ..output
            })
        }
        Ending::TimedOut => {
            let captured = output.combined();
            let mut message = format!(
                "command timed out after {timeout_ms} ms; it and every process it started were killed"
            );
            if !captured.is_empty() {
                message.push_str("\nOutput before the timeout:\n");
                message.push_str(&captured);
            }
            Err(ToolError::new(message))
        }
        Ending::Aborted => Err(typed::aborted()),
        Ending::Exceeded(exceeded) => {
            let captured = output.combined();
            let mut message = match exceeded {
                Exceeded::Memory => format!(
                    "command killed: it and the processes it started went past the memory \
                     limit of {} MiB (builtins.bash.limits.memoryMb)",
                    settings.limits.memory_mb
                ),
                Exceeded::Pids => format!(
                    "command killed: it started more than {} processes at once \
                     (builtins.bash.limits.pids)",
                    settings.limits.pids
                ),
            };
            if !captured.is_empty() {
                message.push_str("\nOutput before it was killed:\n");
                message.push_str(&captured);
            }
            Err(ToolError::new(message))
        }
    }
}

/// The value schema of a spilled stream.
pub(crate) fn spilled_stream_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "path": { "type": "string", "required": true },
            "bytes": { "type": "integer", "required": true }
        }
    })
}

/// What the description says of the sandbox.
fn sandbox_sentence(sandbox: &Sandbox) -> String {
    let network = match (sandbox.network(), sandbox.egress_policy()) {
        (true, _) => "with network access".to_owned(),
        (false, Some(policy)) => format!(
            "reaching the network only through the sandbox's proxy (HTTP_PROXY, HTTPS_PROXY \
             and ALL_PROXY are set), to {} and nothing else",
            policy.allow.join(", ")
        ),
        (false, None) => "without network access".to_owned(),
    };
    let escalate = "a command that must go beyond it can set dangerouslyDisableSandbox: true, \
                    which the user is asked to approve";
    match sandbox.report().mode {
        SandboxMode::Off => "It runs with the host user's permissions (not sandboxed).".to_owned(),
        SandboxMode::WorkspaceWrite => format!(
            "It runs sandboxed: it can read everything but write only under {} and $TMPDIR, \
             {network}; {escalate}.",
            sandbox
                .writable()
                .iter()
                .map(|root| root.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        SandboxMode::ReadOnly => format!(
            "It runs sandboxed: it can read everything but write only in $TMPDIR, {network}; \
             {escalate}."
        ),
    }
}
