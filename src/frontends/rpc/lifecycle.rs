//! The LSP-style lifecycle as its own layer in front of the method table: which requests
//! the connection accepts in each state, and the exit code `exit` ends with.

use dsh_tools_protocol::error_codes;
use parking_lot::Mutex;

/// Where the connection is in the lifecycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lifecycle {
    /// Only `initialize` (and `exit`) are accepted.
    Uninitialized,
    /// Serving.
    Initialized,
    /// `shutdown` arrived; only `exit` is accepted.
    ShutDown,
}

/// A request the lifecycle refuses: the JSON-RPC error code and message.
#[derive(Debug, PartialEq, Eq)]
pub struct Refusal {
    pub code: i32,
    pub message: &'static str,
}

/// The lifecycle state and its transitions.
pub struct LifecycleGate(Mutex<Lifecycle>);

impl Default for LifecycleGate {
    fn default() -> Self {
        LifecycleGate(Mutex::new(Lifecycle::Uninitialized))
    }
}

impl LifecycleGate {
    /// Admits a request for `method` or says why not; `shutdown` closes the gate to every
    /// later request from the moment it is admitted.
    pub fn admit(&self, method: &str) -> Result<(), Refusal> {
        let mut state = self.0.lock();
        let refusal = |code, message| Err(Refusal { code, message });
        match (*state, method) {
            (Lifecycle::Uninitialized, "initialize") => Ok(()),
            (_, "initialize") => refusal(
                error_codes::INVALID_REQUEST,
                "invalid request: initialize was already called",
            ),
            (Lifecycle::Uninitialized, _) => refusal(
                error_codes::SERVER_NOT_INITIALIZED,
                "server not initialized: send initialize first",
            ),
            (Lifecycle::ShutDown, _) => refusal(
                error_codes::INVALID_REQUEST,
                "invalid request: the host is shut down; only exit is accepted",
            ),
            (Lifecycle::Initialized, "shutdown") => {
                *state = Lifecycle::ShutDown;
                Ok(())
            }
            (Lifecycle::Initialized, _) => Ok(()),
        }
    }

    /// `initialize` succeeded: the connection serves every method.
    pub fn initialized(&self) {
        *self.0.lock() = Lifecycle::Initialized;
    }

    /// Whether `shutdown` arrived (the client asked for a graceful end).
    pub fn is_shut_down(&self) -> bool {
        *self.0.lock() == Lifecycle::ShutDown
    }

    /// The exit code of `exit` now: 0 after `shutdown`, else 1 (as LSP says).
    pub fn exit_code(&self) -> i32 {
        if self.is_shut_down() { 0 } else { 1 }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn only_initialize_opens_the_gate_and_only_once() {
        let gate = LifecycleGate::default();
        let refused = gate.admit("tools/schemas").unwrap_err();
        assert_eq!(refused.code, error_codes::SERVER_NOT_INITIALIZED);
        assert_eq!(gate.admit("initialize"), Ok(()));
        gate.initialized();
        assert_eq!(gate.admit("tools/schemas"), Ok(()));
        let again = gate.admit("initialize").unwrap_err();
        assert_eq!(again.code, error_codes::INVALID_REQUEST);
        assert_eq!(gate.exit_code(), 1);
    }

    #[test]
    fn shutdown_closes_the_gate_to_everything_after_it() {
        let gate = LifecycleGate::default();
        gate.initialized();
        assert_eq!(gate.admit("shutdown"), Ok(()));
        assert!(gate.is_shut_down());
        for method in ["tools/execute", "shutdown", "initialize"] {
            assert_eq!(
                gate.admit(method).unwrap_err().code,
                error_codes::INVALID_REQUEST
            );
        }
        assert_eq!(gate.exit_code(), 0);
    }
}
