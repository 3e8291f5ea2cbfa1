//! Integration tests of `process`: the tether (nothing outlives a SIGKILLed host), scratch dirs
//! (nothing stays in `$TMPDIR`) and the
//! sandbox's fail-closed path and its diagnostics.

mod sandbox;
mod scratch;
mod seccomp;
mod tether;
