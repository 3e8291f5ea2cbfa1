//! Integration tests of `process`: the tether (nothing outlives a SIGKILLed host), scratch dirs
//! (nothing stays in `$TMPDIR`) and the
//! sandbox's fail-closed path and its diagnostics, budgets per process tree, and the loopback
//! each agent scope shares.

mod budgets;
mod loopback;
mod sandbox;
mod scratch;
mod seccomp;
mod tether;
mod view;
