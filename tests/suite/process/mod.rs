//! Integration tests of `process`: the tether (nothing outlives a SIGKILLed host), scratch dirs
//! (nothing stays in `$TMPDIR`) and the
//! sandbox's fail-closed path and its diagnostics, budgets per process tree, the loopback
//! each agent scope shares (and the proxy listener made in it), and network policies.

mod budgets;
mod loopback;
mod network_policy;
mod sandbox;
mod scratch;
mod seccomp;
mod tether;
mod unprivileged;
mod view;
