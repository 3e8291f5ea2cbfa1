//! The tools of exec sessions, registered with `bash`: `bash_output` (read, waiting for new
//! output, a line, or the end: one blocking call instead of a polling loop), `bash_write`
//! (type into it), `bash_kill` and `bash_sessions`. Each sees only its agent scope's
//! sessions.

use super::ExecSessions;
use super::running::{Reason, Session, Until};
use super::view::{SessionOutput, render, session_output_schema};
use crate::builtins::cards::{parse, success_meta};
use crate::builtins::typed::{self, TextRenderer};
use crate::cards::{TerminalCallView, TerminalResultView, ToolCallView, ToolResultView};
use crate::tool::{
    CardMeta, Concurrency, DefinitionError, DurableResult, Render, ToolCards, ToolDefinition,
    ToolError, ToolRunContext,
};
use nix::sys::signal::Signal as UnixSignal;
use regex::bytes::{Regex, RegexBuilder};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// The longest one call may wait (ms), as long as a `bash` call may run.
pub const MAX_WAIT_MS: u64 = 600_000;
/// How long `bash_kill` gives a polite signal before it kills the whole tree.
const KILL_GRACE: Duration = Duration::from_secs(2);
/// Compiled size `until` may take (the regex engine is linear-time; this bounds memory).
const PATTERN_BYTES: usize = 1 << 20;

/// The session tools, reading at most `limit` bytes of output per call.
pub fn definitions(
    sessions: &Arc<ExecSessions>,
    limit: usize,
) -> Result<Vec<ToolDefinition>, DefinitionError> {
    Ok(vec![
        output_definition(sessions.clone(), limit)?,
        write_definition(sessions.clone(), limit)?,
        kill_definition(sessions.clone(), limit)?,
        list_definition(sessions.clone())?,
    ])
}

/// How long to wait, and for what.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WaitArgs {
    wait_ms: Option<i64>,
    until: Option<String>,
    #[serde(default)]
    until_exit: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReadArgs {
    session_id: String,
    #[serde(flatten)]
    wait: WaitArgs,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WriteArgs {
    session_id: String,
    input: String,
    #[serde(default)]
    eof: bool,
    #[serde(flatten)]
    wait: WaitArgs,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct KillArgs {
    session_id: String,
    signal: Option<String>,
}

fn wait_parameters() -> [(&'static str, Value); 2] {
    [
        (
            "waitMs",
            json!({ "type": "integer", "description": format!("Wait up to this long (ms, default 0, at most {MAX_WAIT_MS}) for new output; returns as soon as it arrives (or `until` matches), or the session ends.") }),
        ),
        (
            "until",
            json!({ "type": "string", "description": "A regular expression: keep waiting until new output matches it (e.g. \"Listening on|error\")." }),
        ),
    ]
}

fn with_wait(mut parameters: Value) -> Value {
    for (name, spec) in wait_parameters() {
        parameters[name] = spec;
    }
    parameters
}

fn output_definition(
    sessions: Arc<ExecSessions>,
    limit: usize,
) -> Result<ToolDefinition, DefinitionError> {
    session_tool("bash_output", &sessions)
        .description(
            "Read what a bash session (a command started with yieldMs or background) printed \
             since the last read. With waitMs, wait for new output first: the call returns as \
             soon as output arrives (or output matching `until`, or the session ends) — one \
             call instead of polling. untilExit: true waits for the end.",
        )
        .parameters(with_wait(json!({
            "sessionId": { "type": "string", "required": true, "description": "The session, as bash answered it (bash-1)." },
            "untilExit": { "type": "boolean", "description": "Wait for the session to end (within waitMs)." }
        })))
        .concurrency(Concurrency::Parallel)
        .body(move |ctx: ToolRunContext| {
            let sessions = sessions.clone();
            async move {
                let args: ReadArgs = typed::arguments(ctx.arguments())?;
                let session = sessions.find(&args.session_id, ctx.execution.agent.as_ref())?;
                wait_then_read(&sessions, &session, &args.wait, &ctx, limit).await
            }
        })
}

fn write_definition(
    sessions: Arc<ExecSessions>,
    limit: usize,
) -> Result<ToolDefinition, DefinitionError> {
    session_tool("bash_write", &sessions)
        .description(
            "Write to a bash session's stdin (on a tty session: type it; control characters \
             such as \\u0003 for Ctrl-C or \\u0004 for Ctrl-D act as keys). Include \\n to end \
             a line. Then, like bash_output, wait up to waitMs for its answer and return what \
             it printed.",
        )
        .parameters(with_wait(json!({
            "sessionId": { "type": "string", "required": true, "description": "The session." },
            "input": { "type": "string", "required": true, "description": "The text to write." },
            "eof": { "type": "boolean", "description": "Close stdin after writing (not on a tty: send \\u0004 there)." }
        })))
        .body(move |ctx: ToolRunContext| {
            let sessions = sessions.clone();
            async move {
                let args: WriteArgs = typed::arguments(ctx.arguments())?;
                let session = sessions.find(&args.session_id, ctx.execution.agent.as_ref())?;
                if session.ended().is_some() {
                    return Err(ToolError::new(format!(
                        "session {} has ended; its input is closed",
                        session.id
                    )));
                }
                session
                    .write(args.input.as_bytes(), args.eof)
                    .await
                    .map_err(|why| ToolError::new(format!("cannot write to {}: {why}", session.id)))?;
                wait_then_read(&sessions, &session, &args.wait, &ctx, limit).await
            }
        })
}

/// What every tool answering a [`SessionOutput`] shares.
fn session_tool(name: &str, sessions: &Arc<ExecSessions>) -> crate::tool::ToolDefinitionBuilder {
    ToolDefinition::builder(name)
        .output(session_output_schema())
        .render(Render::Custom(Arc::new(TextRenderer(render))))
        .cards(Arc::new(SessionCards(sessions.clone())))
        .card_meta(session_meta())
}

/// Waits as `wait` says, then reads.
async fn wait_then_read(
    sessions: &ExecSessions,
    session: &Arc<Session>,
    wait: &WaitArgs,
    ctx: &ToolRunContext,
    limit: usize,
) -> Result<crate::tool::BodyOutput, ToolError> {
    let until = pattern(wait.until.as_deref())?;
    let condition = Until {
        pattern: until.as_ref(),
        exit: wait.until_exit,
    };
    session
        .wait(wait_of(wait.wait_ms)?, condition, &ctx.signal)
        .await;
    typed::output(&read(sessions, session, limit))
}

fn kill_definition(
    sessions: Arc<ExecSessions>,
    limit: usize,
) -> Result<ToolDefinition, DefinitionError> {
    session_tool("bash_kill", &sessions)
        .description(format!(
            "Stop a bash session: without `signal`, SIGTERM, then SIGKILL for it and \
             everything it started if it is still running after {} s. With `signal` (SIGINT, \
             SIGTERM, SIGHUP, SIGKILL, ...), only that signal is sent. Returns its last output \
             and state.",
            KILL_GRACE.as_secs()
        ))
        .parameters(json!({
            "sessionId": { "type": "string", "required": true, "description": "The session." },
            "signal": { "type": "string", "description": "The signal to send (default: SIGTERM, then SIGKILL)." }
        }))
        .body(move |ctx: ToolRunContext| {
            let sessions = sessions.clone();
            async move {
                let args: KillArgs = typed::arguments(ctx.arguments())?;
                let session = sessions.find(&args.session_id, ctx.execution.agent.as_ref())?;
                match args.signal.as_deref().map(signal_named).transpose()? {
                    None => {
                        session.stop(UnixSignal::SIGTERM, Reason::Killed);
                        if !session.wait_for_end(KILL_GRACE).await {
                            session.stop(UnixSignal::SIGKILL, Reason::Killed);
                            session.wait_for_end(KILL_GRACE * 5).await;
                        }
                    }
                    Some(signal) => {
                        session.stop(signal, Reason::Killed);
                        session.wait_for_end(KILL_GRACE).await;
                    }
                }
                typed::output(&read(&sessions, &session, limit))
            }
        })
}

/// One session in `bash_sessions`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Listed {
    session_id: String,
    command: String,
    running: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    exit_code: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    signal: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    runtime_ms: u64,
    tty: bool,
    unread_bytes: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Listing {
    sessions: Vec<Listed>,
}

fn list_definition(sessions: Arc<ExecSessions>) -> Result<ToolDefinition, DefinitionError> {
    ToolDefinition::builder("bash_sessions")
        .description(
            "List this agent's bash sessions (commands started with yieldMs or background): \
             command, state, runtime, exit code and how much output is unread.",
        )
        .parameters(json!({}))
        .output(json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "sessions": { "type": "array", "required": true, "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "properties": {
                        "sessionId": { "type": "string", "required": true },
                        "command": { "type": "string", "required": true },
                        "running": { "type": "boolean", "required": true },
                        "exitCode": { "type": "integer" },
                        "signal": { "type": "string" },
                        "reason": { "type": "string" },
                        "runtimeMs": { "type": "integer", "required": true },
                        "tty": { "type": "boolean", "required": true },
                        "unreadBytes": { "type": "integer", "required": true }
                    }
                } }
            }
        }))
        .render(Render::Custom(Arc::new(TextRenderer(render_listing))))
        .concurrency(Concurrency::Parallel)
        .body(move |ctx: ToolRunContext| {
            let sessions = sessions.clone();
            async move {
                let listed = sessions
                    .list(ctx.execution.agent.as_ref())
                    .iter()
                    .map(|session| listed(session))
                    .collect();
                typed::output(&Listing { sessions: listed })
            }
        })
}

fn listed(session: &Session) -> Listed {
    session.touch();
    let state = SessionOutput::of(session, Default::default());
    Listed {
        session_id: state.session_id,
        command: session.command.clone(),
        running: state.running,
        exit_code: state.exit_code,
        signal: state.signal,
        reason: state.reason,
        runtime_ms: state.runtime_ms,
        tty: session.tty,
        unread_bytes: session.lock().log.unread_bytes(),
    }
}

fn render_listing(listing: &Listing) -> String {
    if listing.sessions.is_empty() {
        return "No sessions.".to_owned();
    }
    listing
        .sessions
        .iter()
        .map(|s| {
            let state = match (s.running, s.exit_code, &s.signal) {
                (true, _, _) => "running".to_owned(),
                (false, Some(code), _) => format!("exited {code}"),
                (false, None, Some(signal)) => format!("killed by {signal}"),
                (false, None, None) => "ended".to_owned(),
            };
            format!(
                "{}\t{state}\t{:.1} s\t{} bytes unread\t{}",
                s.session_id,
                s.runtime_ms as f64 / 1000.0,
                s.unread_bytes,
                s.command
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Reads `session`'s new output; an ended session whose output is all read is forgotten.
fn read(sessions: &ExecSessions, session: &Arc<Session>, limit: usize) -> SessionOutput {
    let unread = session.read(limit);
    let output = SessionOutput::of(session, unread);
    sessions.forget_if_done(session);
    output
}

fn wait_of(ms: Option<i64>) -> Result<Duration, ToolError> {
    match ms {
        None => Ok(Duration::ZERO),
        Some(ms) if (0..=MAX_WAIT_MS as i64).contains(&ms) => Ok(Duration::from_millis(ms as u64)),
        Some(_) => Err(ToolError::new(format!(
            "waitMs must be between 0 and {MAX_WAIT_MS}"
        ))),
    }
}

fn pattern(until: Option<&str>) -> Result<Option<Regex>, ToolError> {
    until
        .map(|until| {
            RegexBuilder::new(until)
                .multi_line(true)
                .size_limit(PATTERN_BYTES)
                .build()
                .map_err(|e| {
                    ToolError::new(format!("until is not a valid regular expression: {e}"))
                })
        })
        .transpose()
}

/// `SIGINT`, `INT` or `2`.
fn signal_named(name: &str) -> Result<UnixSignal, ToolError> {
    let upper = name.trim().to_ascii_uppercase();
    let full = match upper.starts_with("SIG") {
        true => upper,
        false => format!("SIG{upper}"),
    };
    full.parse::<UnixSignal>()
        .ok()
        .or_else(|| {
            name.trim()
                .parse::<i32>()
                .ok()
                .and_then(|n| UnixSignal::try_from(n).ok())
        })
        .ok_or_else(|| {
            ToolError::new(format!(
                "unknown signal \"{name}\" (try SIGINT, SIGTERM or SIGKILL)"
            ))
        })
}

/// What the session tools persist for their cards.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SessionMeta {
    session_id: String,
    running: bool,
    output: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    exit_code: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    signal: Option<String>,
}

fn session_meta() -> CardMeta {
    Arc::new(|_arguments, value| {
        let output = SessionOutput::deserialize(value).ok()?;
        serde_json::to_value(SessionMeta {
            session_id: output.session_id,
            running: output.running,
            output: output.output,
            exit_code: output.exit_code,
            signal: output.signal,
        })
        .ok()
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SessionCall {
    session_id: String,
}

/// A terminal card titled with the session's command.
struct SessionCards(Arc<ExecSessions>);

impl SessionCards {
    fn command(&self, id: &str) -> String {
        self.0
            .command_of(id)
            .unwrap_or_else(|| format!("session {id}"))
    }
}

impl ToolCards for SessionCards {
    fn call_card(&self, arguments: &Value) -> Option<Value> {
        let call: SessionCall = parse(arguments)?;
        ToolCallView::Terminal(TerminalCallView {
            title: self.command(&call.session_id),
            description: Some(format!("session {}", call.session_id)),
            cwd: None,
        })
        .to_json()
    }

    fn result_card(&self, _arguments: &Value, result: &DurableResult) -> Option<Value> {
        let meta: SessionMeta = success_meta(result)?;
        ToolResultView::Terminal(TerminalResultView {
            title: Some(self.command(&meta.session_id)),
            output: Some(meta.output),
            exit_code: meta.exit_code,
            signal: meta.signal,
            session_id: Some(meta.session_id),
            running: Some(meta.running),
        })
        .to_json()
    }
}
