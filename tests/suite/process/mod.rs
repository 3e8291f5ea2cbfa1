//! Integration tests of `process`: the tether (nothing outlives a SIGKILLed host) and the
//! sandbox's fail-closed path and its diagnostics.

mod sandbox;
mod tether;
