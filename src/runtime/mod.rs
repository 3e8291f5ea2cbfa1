//! Code Mode's JavaScript runtime: one model program per fresh deno_core (QuickJS) isolate, with compute, wall, heap and output budgets.
//!
//! Each pool slot is a thread owning a current-thread tokio runtime and one fresh,
//! bootstrapped `JsRuntime` that waits for exactly one program; after the run the isolate
//! is dropped and a new one is built, so no state survives between programs. The
//! isolate-side code (the `tools` proxy, `ToolCallError`, the console shim, the lossless
//! JSON snapshot and run-scoped timers) lives in `runtime-ts/bootstrap.ts`. This is the only
//! module that touches deno_core.

mod bridge;
mod contract;
mod control;
mod isolate;
mod output;
mod pool;
mod slot;
pub mod strip;
mod verdict;

pub use contract::{
    BindingHost, FailureKind, LogStream, PoolConfig, RunFailure, RunLimits, RunOutcome, RunRequest,
    RuntimeError,
};
pub use pool::IsolatePool;

#[cfg(test)]
mod tests;
