//! Which way Python Code Mode runs start in this process, for `capabilities.sandbox` and
//! `dsh-tools sandbox check`: forked from a fork server unless a pool fell back to fresh
//! interpreters (or `DSH_TOOLS_SANDBOX_SIMULATE=no-fork-server` makes it, to exercise the
//! fallback). Recorded here, beside the sandbox probe, because the sandbox report reads it
//! and Python Code Mode (a higher layer) writes it.

use dsh_tools_protocol::{PythonRunner, PythonRunnerKind};
use parking_lot::Mutex;

use super::probe::SIMULATE_VARIABLE;

/// The `DSH_TOOLS_SANDBOX_SIMULATE` feature that makes fork servers unusable.
pub const NO_FORK_SERVER: &str = "no-fork-server";

/// Why a pool of this process last fell back, if one did.
static FALLBACK: Mutex<Option<String>> = Mutex::new(None);

/// The fallback's reason when simulated.
pub(crate) fn simulated_fallback() -> Option<String> {
    std::env::var(SIMULATE_VARIABLE)
        .unwrap_or_default()
        .split(',')
        .any(|feature| feature.trim() == NO_FORK_SERVER)
        .then(|| format!("{SIMULATE_VARIABLE}={NO_FORK_SERVER}"))
}

/// Remembers that a pool fell back to fresh interpreters, and why.
pub(crate) fn record_fallback(why: &str) {
    *FALLBACK.lock() = Some(why.to_owned());
}

/// How runs start here: the last fallback's reason, a simulated one, or the fork server.
pub fn python_runner() -> PythonRunner {
    match FALLBACK.lock().clone().or_else(simulated_fallback) {
        Some(why) => PythonRunner {
            kind: PythonRunnerKind::FreshInterpreter,
            fallback_reason: Some(why),
        },
        None => PythonRunner {
            kind: PythonRunnerKind::ForkServer,
            fallback_reason: None,
        },
    }
}
