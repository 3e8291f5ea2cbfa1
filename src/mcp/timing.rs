//! The MCP client's hand-tuned durations and restart bound, in one place, each with the
//! reason for its value: how long a server gets to start, answer and exit (`supervisor`,
//! `process`), and how it is restarted or reconnected. A server entry's own `timeoutMs`
//! bounds its calls; these bound everything around them.

use std::time::Duration;

/// Handshake and listing deadline of a server that configures no `timeoutMs`: long enough
/// for a package runner (`npx`, `uvx`) that resolves or installs the server on first use,
/// short enough that a server that never answers is reported as failed within a minute.
pub(super) const DEFAULT_STARTUP: Duration = Duration::from_secs(30);

/// The least time a server gets to start, whatever its per-call `timeoutMs`: starting a
/// runtime such as node takes longer than a call should, so a tight call deadline must not
/// make a healthy server fail its handshake.
pub(super) const STARTUP_FLOOR: Duration = Duration::from_secs(10);

/// How long a server whose handshake failed gets to report its exit status: a process that
/// failed at start usually exits at once, and its status makes the error readable; one that
/// hangs instead is not waited for.
pub(super) const EXIT_REPORT: Duration = Duration::from_millis(500);

/// Consecutive failed attempts (spawn, handshake, listing, or a crash soon after) before
/// the supervisor gives up on a stdio server: a local command that fails five times in a row
/// with backoff between is broken, not busy, and retrying forever would only churn processes.
pub(super) const MAX_ATTEMPTS: u32 = 5;

/// First backoff before a restart, doubled per consecutive failure: quick enough that a
/// one-off crash costs the user little, growing so a broken server does not spin.
pub(super) const FIRST_BACKOFF: Duration = Duration::from_millis(200);

/// A server that ran this long before exiting starts a fresh series of attempts: a crash
/// after that much healthy work is a new incident, not the same failure repeating.
pub(super) const STABLE_AFTER: Duration = Duration::from_secs(30);

/// The longest backoff: a remote server is retried at least this often, without end (an
/// outage of a hosted server is usually temporary; a local command that cannot start is
/// not, which is why stdio servers give up after [`MAX_ATTEMPTS`]).
pub(super) const MAX_BACKOFF: Duration = Duration::from_secs(10);

/// How often an idle remote server is pinged, so that its loss shows (in `mcp/status`, and
/// as a reconnect) without waiting for a call to fail; rare enough to be no load.
pub(super) const PING_EVERY: Duration = Duration::from_secs(15);

/// How long a ping or a session's closing may take: a healthy server answers a ping at
/// once, and a slow close must not hold up a reconnect or the host's exit.
pub(super) const PING_DEADLINE: Duration = Duration::from_secs(10);

/// How long a stdio server may take to exit on its own once its stdin is closed, which is
/// how the MCP specification asks a client to end one: enough for a clean shutdown.
pub(super) const EXIT_ON_EOF: Duration = Duration::from_millis(500);

/// How long a server may take to exit after SIGTERM before its group is SIGKILLed: a
/// second chance to flush and clean up, bounded so the host's exit stays prompt.
pub(super) const EXIT_ON_SIGTERM: Duration = Duration::from_millis(1000);

/// How long a SIGKILLed server may take to be reaped: a killed process goes at once unless
/// it is in an uninterruptible wait, which the host does not wait out.
pub(super) const REAP_GRACE: Duration = Duration::from_secs(5);
