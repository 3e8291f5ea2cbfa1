//! The JavaScript engine: one model program per fresh deno_core (QuickJS) isolate.
//!
//! An [`IsolatePool`] keeps `size` isolates ready. Each is restored from a process-wide
//! startup snapshot (deno_core's JavaScript plus `runtime-ts/bootstrap.ts`, which `snapshot`
//! builds in the background; until it is ready, isolates evaluate that source) on a thread of its own with a current-thread tokio runtime, waits for exactly one
//! program, runs it and is dropped with its thread, so no state survives between programs and
//! creation never sits on the request path. The isolate-side code (the `tools` proxy,
//! `ToolCallError`, the console shim, the lossless JSON snapshot and run-scoped timers) lives
//! in `runtime-ts/bootstrap.ts`; programs see what `runtime-ts/globals.d.ts` declares. The
//! bridge uses synchronous ops only and drives host futures itself. This is the only module
//! that touches deno_core.
//!
//! Reading order: `pool` (runs and the watchdog wiring), `slot` (threads), `handoff` (a run
//! given to an awake thread), `snapshot`,
//! `isolate` (one run), `harness_call` (its answer), `bridge` (ops), `verdict` (how the
//! engine saw the end), `reclaim` (an ended isolate's memory back to the system),
//! `terminator`, `interrupt` and `parking` (ending a stopped run), `timing` (the hand-tuned
//! waits and why),
//! `strip` (type stripping).

mod bridge;
mod handoff;
mod harness_call;
mod interrupt;
mod isolate;
mod parking;
mod pool;
#[doc(hidden)]
pub mod probe;
mod reclaim;
mod slot;
mod snapshot;
pub mod strip;
mod supply;
mod terminator;
mod timing;
mod verdict;

pub use pool::IsolatePool;

#[cfg(test)]
mod tests;
