//! How isolates start: from a startup snapshot of deno_core's own JavaScript plus
//! runtime-ts/bootstrap.ts once one is built, from that source until then.
//!
//! Restoring the snapshot is cheaper than evaluating the source in every isolate, but
//! building it is expensive (QuickJS serializes every intrinsic), more than a new host
//! should spend before its first answer. So the snapshot is built once per process on a
//! background thread of low priority, and the isolates the pool needs before it exists are
//! created from source. Either way the bootstrap's `__dshFinish()` then completes each
//! isolate (see bootstrap.ts), so the two are the same to a program.

use std::sync::{Once, OnceLock};

use deno_core::{JsRuntimeForSnapshot, RuntimeOptions};

use super::bridge;
use super::slot::ISOLATE_STACK_BYTES;
use super::strip;
use crate::runtime::contract::RuntimeError;

/// The isolate-side sources, embedded and type-stripped once per process.
const BOOTSTRAP_TS: &str = include_str!("../../../runtime-ts/bootstrap.ts");

/// Where a new isolate starts from. Cheap to copy.
#[derive(Clone, Copy)]
pub(crate) struct Startup {
    /// The stripped bootstrap, evaluated in an isolate created without the snapshot.
    bootstrap: &'static str,
    /// False for isolates that must start from source even once the snapshot exists (tests
    /// comparing the two ways).
    use_snapshot: bool,
}

impl Startup {
    /// The process's startup: strips the bootstrap (once) and starts building the snapshot
    /// in the background (once).
    pub(crate) fn of_process() -> Result<Startup, RuntimeError> {
        static ENGINE_FLAGS: Once = Once::new();
        ENGINE_FLAGS.call_once(set_engine_flags);
        static BOOTSTRAP: OnceLock<Result<String, String>> = OnceLock::new();
        let bootstrap = BOOTSTRAP
            .get_or_init(|| {
                strip::strip_types(BOOTSTRAP_TS)
                    .map_err(|error| format!("bootstrap.ts does not strip: {error}"))
            })
            .as_deref()
            .map_err(|error| RuntimeError::Bootstrap(error.clone()))?;
        static BUILD: Once = Once::new();
        BUILD.call_once(|| build_in_background(bootstrap));
        Ok(Startup {
            bootstrap,
            use_snapshot: true,
        })
    }

    /// The snapshot, once it is built.
    pub(crate) fn snapshot(self) -> Option<&'static [u8]> {
        SNAPSHOT.get().copied().filter(|_| self.use_snapshot)
    }

    /// The same startup, but always from source.
    #[cfg(test)]
    pub(crate) fn without_snapshot(self) -> Startup {
        Startup {
            use_snapshot: false,
            ..self
        }
    }

    /// The bootstrap source, for an isolate created without the snapshot.
    pub(crate) fn bootstrap(self) -> &'static str {
        self.bootstrap
    }
}

/// Engine flags for every isolate of the process, set before the first one exists.
///
/// `--no-temporal-polyfill` (v8x): the engine would otherwise evaluate a large Temporal
/// polyfill into every context, and the snapshot would carry it into every isolate it
/// restores, a large part of an isolate's creation. Programs never see `Temporal`
/// (bootstrap.ts keeps only the standard library); the one trace it left,
/// `Date.prototype.toTemporalInstant` in isolates built from source (never in restored ones),
/// goes with it (tests/surface.rs).
///
/// `--no-bytecode-cache` (v8x): the engine would otherwise write the bytecode of every module
/// it compiles, model programs included, under `$XDG_CACHE_HOME/v8x`; programs must never
/// reach the disk. A flag rather than the engine's `V82JSC_NO_BC_CACHE`, which would mean
/// setting the environment of a process that already runs other threads.
///
/// Randomness: QuickJS seeds `Math.random` once per context from the clock, and a context
/// restored from the snapshot restores the state it had when the snapshot was taken; with
/// an entropy source, v8x instead installs its own `Math.random` in every context it creates
/// or restores, whose generator its first draw seeds from that source (v8x patch 0014),
/// unless a `--random-seed` flag is set. deno_core sets `--random-seed=42` for the whole
/// process when its first runtime is the snapshot builder (it wants reproducible V8
/// snapshots), and which runtime is first was a race here: every run of a host that lost it
/// drew the same sequence. So the engine is initialized here,
/// before any runtime, in deno_core's ordinary mode (its later snapshot-mode call does
/// nothing once it is), the seed is cleared (0 is none) and the OS is the entropy source.
fn set_engine_flags() {
    deno_core::JsRuntime::init_platform(None);
    deno_core::v8::V8::set_flags_from_string(
        "--no-temporal-polyfill --no-bytecode-cache --random-seed=0",
    );
    deno_core::v8::V8::set_entropy_source(os_entropy);
}

/// Fills `buffer` from the kernel's random number generator.
fn os_entropy(buffer: &mut [u8]) -> bool {
    let mut filled = 0;
    while filled < buffer.len() {
        let rest = &mut buffer[filled..];
        // SAFETY: writes at most `rest.len()` bytes into `rest`.
        let read = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        match usize::try_from(read) {
            Ok(read) => filled += read,
            Err(_) if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {
            }
            Err(_) => return false,
        }
    }
    true
}

/// The snapshot, kept for the rest of the process once built.
static SNAPSHOT: OnceLock<&'static [u8]> = OnceLock::new();

/// Builds the snapshot on a thread of its own (v8x keeps per-thread state, see slot.rs) at
/// low priority, so it takes no core a run is waiting for. A failure leaves isolates
/// starting from source, which reports the same failure where it matters.
fn build_in_background(bootstrap: &'static str) {
    let spawned = std::thread::Builder::new()
        .name("dsh-snapshot".to_owned())
        .stack_size(ISOLATE_STACK_BYTES)
        .spawn(move || {
            lower_this_threads_priority();
            match build(bootstrap) {
                Ok(snapshot) => {
                    let _ = SNAPSHOT.set(snapshot);
                    // What a test waits on before it expects isolates restored from it.
                    tracing::debug!("the startup snapshot is built");
                }
                Err(error) => {
                    tracing::warn!("no startup snapshot, isolates start from source: {error}")
                }
            }
        });
    if let Err(error) = spawned {
        tracing::warn!("could not start the snapshot thread, isolates start from source: {error}");
    }
}

fn build(bootstrap: &'static str) -> Result<&'static [u8], String> {
    let mut runtime = JsRuntimeForSnapshot::try_new(RuntimeOptions {
        extensions: vec![bridge::extension()],
        ..Default::default()
    })
    .map_err(|error| format!("snapshot isolate creation failed: {error}"))?;
    runtime
        .execute_script("dsh-runtime:bootstrap.ts", bootstrap)
        .map_err(|error| format!("bootstrap.ts failed: {error}"))?;
    // Deliberately kept for the rest of the process: every later isolate starts from it.
    Ok(Box::leak(runtime.snapshot()))
}

/// Nice 10 for the calling thread only (on Linux a thread is its own scheduling entity).
fn lower_this_threads_priority() {
    let thread = nix::unistd::gettid().as_raw();
    // SAFETY: setpriority reads only its integer arguments.
    let niced = unsafe { libc::setpriority(libc::PRIO_PROCESS, thread as libc::id_t, 10) };
    if niced != 0 {
        tracing::debug!(
            "the snapshot thread keeps its priority: {}",
            std::io::Error::last_os_error()
        );
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_snapshot_is_built_in_the_background_and_then_used() {
        let startup = Startup::of_process().unwrap();
        assert!(startup.bootstrap().contains("__dshFinish"));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let snapshot = loop {
            match startup.snapshot() {
                Some(snapshot) => break snapshot,
                None if std::time::Instant::now() < deadline => std::thread::yield_now(),
                None => panic!("the snapshot was not built within a minute"),
            }
        };
        assert!(!snapshot.is_empty());
    }
}
