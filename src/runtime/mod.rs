//! Code Mode's JavaScript runtime: one model program per fresh deno_core (QuickJS) isolate, with compute, wall, heap and output budgets.
//!
//! An [`IsolatePool`] keeps `size` isolates ready. Each is restored from a process-wide
//! startup snapshot (deno_core's JavaScript plus `runtime-ts/bootstrap.ts`) on a thread of its
//! own with a current-thread tokio runtime, waits for exactly one program, runs it and is
//! dropped with its thread, so no state survives between programs and creation never sits on
//! the request path. The isolate-side code (the `tools` proxy, `ToolCallError`, the console
//! shim, the lossless JSON snapshot and run-scoped timers) lives in `runtime-ts/bootstrap.ts`;
//! programs see what `runtime-ts/globals.d.ts` declares. The bridge uses synchronous ops only
//! and drives host futures itself. This is the only module that touches deno_core.
//!
//! Reading order: `contract` (the public vocabulary), `pool` (runs and the watchdog wiring),
//! `slot` (threads), `snapshot`, `isolate` (one run), `bridge` (ops), `control` (budgets),
//! `output` (the byte cap), `verdict` (outcomes).

mod bridge;
mod contract;
mod control;
mod guarded;
mod isolate;
mod output;
mod pool;
pub mod python;
mod slot;
mod snapshot;
pub mod strip;
mod verdict;

pub use contract::{
    BindingHost, FailureKind, LogStream, PoolConfig, RunFailure, RunLimits, RunOutcome, RunRequest,
    RuntimeError,
};
pub use pool::IsolatePool;
pub use python::{PythonConfig, PythonPool};

#[cfg(test)]
mod tests;
