//! Integration tests of `process`: the tether (nothing outlives a SIGKILLed host), scratch dirs
//! (nothing stays in `$TMPDIR`) and the
//! sandbox's fail-closed path and its diagnostics, and budgets per process tree.

mod budgets;
mod sandbox;
mod scratch;
mod seccomp;
mod tether;
mod view;
