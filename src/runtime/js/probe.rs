//! What one fresh isolate costs, measured the way a pool slot spends it: creation (snapshot
//! restore and bootstrap), teardown, and a program run on an isolate that waited. For
//! `benches/isolate.rs` only; not part of the API.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;

use super::isolate::{FreshIsolate, Job};
use super::slot::ISOLATE_STACK_BYTES;
use super::snapshot::Startup;
use crate::runtime::control::RunControl;
use crate::runtime::{BindingHost, LogStream, RunLimits};

/// The heap limit the pool gives a run by default, in MiB.
const HEAP_MB: u64 = 64;

const LIMITS: RunLimits = RunLimits {
    compute_ms: 2_000,
    max_wall_ms: 10_000,
    max_output_bytes: 1 << 20,
    max_depth: 100,
};

/// The process's startup, once its snapshot is built (isolates made before restore nothing).
#[derive(Clone, Copy)]
pub struct IsolateProbe {
    startup: Startup,
}

impl IsolateProbe {
    /// Waits for the background snapshot build, as a pool's first isolates do.
    pub fn ready(patience: Duration) -> Result<IsolateProbe, String> {
        let startup = Startup::of_process().map_err(|error| error.to_string())?;
        let deadline = Instant::now() + patience;
        while startup.snapshot().is_none() {
            if Instant::now() > deadline {
                return Err(format!("no startup snapshot within {patience:?}"));
            }
            // Waiting for another thread's build: spinning would take the core it needs.
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(IsolateProbe { startup })
    }

    /// (creation, teardown) of one isolate on a thread of its own, as a pool slot makes it.
    pub fn create_and_drop(self) -> Result<(Duration, Duration), String> {
        on_isolate_thread(move || {
            let started = Instant::now();
            let isolate = FreshIsolate::new(HEAP_MB, self.startup)?;
            let created = started.elapsed();
            let started = Instant::now();
            drop(isolate);
            Ok((created, started.elapsed()))
        })
    }

    /// How long `code` takes on an isolate built on a thread of its own that then waited
    /// `idle` (a spaced run meets an isolate whose caches went cold). `tools.echo` answers its
    /// arguments.
    pub fn run_after(self, code: &str, idle: Duration) -> Result<Duration, String> {
        self.run_after_idle(code, idle, false).map(|(_, run)| run)
    }

    /// Like [`run_after`](Self::run_after), the isolate warming up for the run first (as the
    /// pool warms an idle isolate for an anticipated run): (warm-up, run).
    pub fn warm_up_and_run_after(
        self,
        code: &str,
        idle: Duration,
    ) -> Result<(Duration, Duration), String> {
        self.run_after_idle(code, idle, true)
    }

    fn run_after_idle(
        self,
        code: &str,
        idle: Duration,
        warm_up: bool,
    ) -> Result<(Duration, Duration), String> {
        let code = code.to_owned();
        on_isolate_thread(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
                .map_err(|error| error.to_string())?;
            let mut isolate = FreshIsolate::new(HEAP_MB, self.startup)?;
            let job = Job {
                code,
                limits: LIMITS,
                tools: vec!["echo".to_owned()],
                host: Arc::new(Echo),
                control: Arc::new(RunControl::new(Box::new(|| {}), LIMITS.max_output_bytes)),
                max_heap_mb: HEAP_MB,
            };
            std::thread::sleep(idle);
            let started = Instant::now();
            if warm_up {
                isolate.warm();
            }
            let warmed = started.elapsed();
            let started = Instant::now();
            let outcome = runtime.block_on(isolate.run(job));
            let took = started.elapsed();
            outcome
                .result
                .map(|_| (warmed, took))
                .map_err(|failure| format!("{failure:?}"))
        })
    }
}

fn on_isolate_thread<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    std::thread::Builder::new()
        .stack_size(ISOLATE_STACK_BYTES)
        .spawn(work)
        .map_err(|error| error.to_string())?
        .join()
        .map_err(|_| "the isolate thread panicked".to_owned())?
}

/// A host whose only tool answers its arguments.
struct Echo;

impl BindingHost for Echo {
    fn call(
        &self,
        _name: &str,
        arguments: serde_json::Value,
    ) -> BoxFuture<'static, Result<serde_json::Value, String>> {
        Box::pin(async move { Ok(arguments) })
    }

    fn log(&self, _stream: LogStream, _text: &str) {}
}
