//! The startup snapshot every isolate starts from: deno_core's own JavaScript plus runtime-ts/bootstrap.ts, evaluated once per process.
//!
//! Creating an isolate from scratch parses and runs all of that JavaScript (about 20 ms of CPU
//! per isolate here); restoring the snapshot takes about a third of that. The bootstrap's
//! `__dshFinish()` then completes each restored isolate (see bootstrap.ts).

use std::sync::OnceLock;

use deno_core::{JsRuntimeForSnapshot, RuntimeOptions};

use super::bridge;
use super::slot::ISOLATE_STACK_BYTES;
use super::strip;
use crate::runtime::contract::RuntimeError;

/// The isolate-side sources, embedded and type-stripped once per process.
const BOOTSTRAP_TS: &str = include_str!("../../../runtime-ts/bootstrap.ts");

/// The snapshot, built on first use and kept for the life of the process.
pub(crate) fn startup_snapshot() -> Result<&'static [u8], RuntimeError> {
    static SNAPSHOT: OnceLock<Result<&'static [u8], String>> = OnceLock::new();
    SNAPSHOT
        .get_or_init(build)
        .clone()
        .map_err(RuntimeError::Bootstrap)
}

fn build() -> Result<&'static [u8], String> {
    let bootstrap = strip::strip_types(BOOTSTRAP_TS)
        .map_err(|error| format!("bootstrap.ts does not strip: {error}"))?;
    // A thread of its own, like every isolate: v8x keeps per-thread state (see slot.rs).
    std::thread::Builder::new()
        .name("dsh-snapshot".to_owned())
        .stack_size(ISOLATE_STACK_BYTES)
        .spawn(move || {
            let mut runtime = JsRuntimeForSnapshot::try_new(RuntimeOptions {
                extensions: vec![bridge::extension()],
                ..Default::default()
            })
            .map_err(|error| format!("snapshot isolate creation failed: {error}"))?;
            runtime
                .execute_script("dsh-runtime:bootstrap.ts", bootstrap)
                .map_err(|error| format!("bootstrap.ts failed: {error}"))?;
            // Deliberately kept for the rest of the process: every isolate starts from it.
            let snapshot: &'static [u8] = Box::leak(runtime.snapshot());
            Ok(snapshot)
        })
        .map_err(|error| format!("could not start the snapshot thread: {error}"))?
        .join()
        .map_err(|_| "building the startup snapshot panicked".to_owned())?
}
