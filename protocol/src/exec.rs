//! Exec sessions: the `exec` config section and the `bash/exited` notification a host sends
//! when a command that outlived its call ends.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// `exec` section: bounds of `bash` commands that outlive their call (sessions).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct ExecConfig {
    /// Sessions running at once in this host, every scope together (default 16, at least
    /// 1); one more is refused.
    pub max_sessions: u32,
    /// A session that printed nothing and was not read, written or listed for this long is
    /// killed (ms; default 3,600,000; 0: never).
    pub idle_timeout_ms: u64,
    /// A session is killed this long after it started, whatever it does (ms; default
    /// 86,400,000; 0: never).
    pub max_lifetime_ms: u64,
}

impl Default for ExecConfig {
    fn default() -> Self {
        ExecConfig {
            max_sessions: 16,
            idle_timeout_ms: 3_600_000,
            max_lifetime_ms: 86_400_000,
        }
    }
}

/// `bash/exited` params (host → client): a session ended. Sent once per session, however
/// it ended (its own exit, `bash_kill`, a lifetime, the end of its Code Mode run or of its
/// agent scope); a command that ended within its call is answered by that call instead.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct BashExitedNotification {
    /// The agent scope that started it (absent: the host's own scope).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub agent: Option<String>,
    /// The session, as `bash` answered it.
    pub session_id: String,
    /// Its command.
    pub command: String,
    /// The exit code, when the shell exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub exit_code: Option<i64>,
    /// The signal that ended it (`SIGKILL`), when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub signal: Option<String>,
    /// Why the host ended it, when it did (`killed`, `idle`, `lifetime`, `run ended`,
    /// `scope closed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reason: Option<String>,
    /// How long it ran.
    #[ts(type = "number")]
    pub runtime_ms: u64,
    /// The last lines of its output (at most 2,000 bytes), escape sequences removed.
    pub tail: String,
}
