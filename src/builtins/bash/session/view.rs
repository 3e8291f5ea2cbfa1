//! What the session tools answer: one value shape for `bash_output`, `bash_write` and
//! `bash_kill` (the text read, the state, where the whole output is), and its rendering.

use super::log::Unread;
use super::running::Session;
use crate::builtins::bash::SpilledStream;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The state of a session and the output read from it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionOutput {
    /// The session.
    pub session_id: String,
    /// Whether it is still running.
    pub running: bool,
    /// Its exit code, once the shell exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// The signal that ended it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    /// Why the host ended it, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What it printed since the last read (its tail when that was long).
    pub output: String,
    /// Bytes since the last read left out of `output` (they are in `outputFile`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skipped_bytes: u64,
    /// The file with everything it printed (raw bytes, escape sequences included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_file: Option<SpilledStream>,
    /// How long it has run.
    pub runtime_ms: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl SessionOutput {
    /// `session`'s state with `unread`.
    pub fn of(session: &Session, unread: Unread) -> Self {
        let mut inner = session.lock();
        let ended = inner.ended.clone();
        let output_file = inner.log.saved().map(|saved| SpilledStream {
            path: saved.path.display().to_string(),
            bytes: saved.bytes,
        });
        drop(inner);
        SessionOutput {
            session_id: session.id.clone(),
            running: ended.is_none(),
            exit_code: ended.as_ref().and_then(|e| e.exit_code()),
            signal: ended
                .as_ref()
                .filter(|e| e.exit_code().is_none())
                .and_then(|e| e.signal()),
            reason: ended
                .as_ref()
                .and_then(|e| e.reason)
                .map(|r| r.as_str().to_owned()),
            output: unread.text,
            skipped_bytes: unread.skipped,
            output_file,
            runtime_ms: ended
                .map_or(session.started.elapsed(), |e| e.runtime)
                .as_millis() as u64,
        }
    }

    /// The line that says what the session is doing now.
    pub fn status_line(&self) -> String {
        let id = &self.session_id;
        let runtime = seconds(self.runtime_ms);
        if self.running {
            return format!(
                "[session {id} is still running ({runtime}); bash_output waits for more, \
                 bash_write types into it, bash_kill stops it]"
            );
        }
        let how = match (self.exit_code, &self.signal) {
            (Some(code), _) => format!("exited with code {code}"),
            (None, Some(signal)) => format!("was killed by {signal}"),
            (None, None) => "ended".to_owned(),
        };
        match &self.reason {
            Some(reason) => format!("[session {id} {how} after {runtime} ({reason})]"),
            None => format!("[session {id} {how} after {runtime}]"),
        }
    }
}

/// `12.3 s`.
fn seconds(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

/// What the model reads: the note on skipped bytes, the output, then the status line.
pub fn render(output: &SessionOutput) -> String {
    let mut text = String::new();
    if output.skipped_bytes > 0 {
        let file = output
            .output_file
            .as_ref()
            .map_or("it was not saved".to_owned(), |f| {
                format!("the whole output is in {}", f.path)
            });
        text.push_str(&format!(
            "[... {} earlier bytes not shown: {file} ...]\n",
            output.skipped_bytes
        ));
    }
    if output.output.is_empty() {
        text.push_str("(no new output)\n");
    } else {
        text.push_str(&output.output);
        if !output.output.ends_with('\n') {
            text.push('\n');
        }
    }
    text.push_str(&output.status_line());
    text
}

/// The value schema of [`SessionOutput`].
pub fn session_output_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "sessionId": { "type": "string", "required": true },
            "running": { "type": "boolean", "required": true },
            "exitCode": { "type": "integer" },
            "signal": { "type": "string" },
            "reason": { "type": "string" },
            "output": { "type": "string", "required": true },
            "skippedBytes": { "type": "integer" },
            "outputFile": crate::builtins::bash::spilled_stream_schema(),
            "runtimeMs": { "type": "integer", "required": true }
        }
    })
}
