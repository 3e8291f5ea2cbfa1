//! Deterministic hosts and helpers shared by the runtime tests.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::{Arc, Once, OnceLock};
use std::time::Duration;

use futures::future::BoxFuture;
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::runtime::{
    BindingHost, FailureKind, IsolatePool, LogStream, PoolConfig, RunFailure, RunLimits,
    RunOutcome, RunRequest,
};

/// A host whose answers depend only on the tool name:
/// `fail` rejects with "denied", `never` never settles, `slow` answers after 300 ms of host-side
/// waiting, `abort` cancels the run's token, `name` answers the tool name, `panic` panics in
/// `call`, `panic_later` returns a future that panics when polled a second time, anything else
/// echoes.
#[derive(Default)]
pub(super) struct TestHost {
    pub(super) calls: Mutex<Vec<(String, serde_json::Value)>>,
    pub(super) lines: Mutex<Vec<(LogStream, String)>>,
    pub(super) abort: CancellationToken,
}

impl BindingHost for TestHost {
    fn call(
        &self,
        name: &str,
        arguments: serde_json::Value,
    ) -> BoxFuture<'static, Result<serde_json::Value, String>> {
        self.calls.lock().push((name.to_owned(), arguments.clone()));
        match name {
            "fail" => Box::pin(async { Err("denied".to_owned()) }),
            "never" => Box::pin(futures::future::pending()),
            "slow" => Box::pin(async move {
                tokio::time::sleep(Duration::from_millis(300)).await;
                Ok(arguments)
            }),
            "abort" => {
                self.abort.cancel();
                Box::pin(futures::future::pending())
            }
            "panic" => panic!("host bug in call"),
            "panic_later" => {
                let mut polled = false;
                Box::pin(futures::future::poll_fn(move |cx| {
                    assert!(!polled, "host bug in a pending future");
                    polled = true;
                    cx.waker().wake_by_ref();
                    std::task::Poll::Pending
                }))
            }
            "name" => {
                let name = serde_json::Value::String(name.to_owned());
                Box::pin(async move { Ok(name) })
            }
            _ => Box::pin(async move { Ok(arguments) }),
        }
    }

    fn log(&self, stream: LogStream, text: &str) {
        self.lines.lock().push((stream, text.to_owned()));
    }
}

/// The process's startup, once its snapshot is built (in the background, on first use).
pub(super) fn startup_with_snapshot() -> crate::runtime::js::snapshot::Startup {
    let startup = crate::runtime::js::snapshot::Startup::of_process().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while startup.snapshot().is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "no snapshot within a minute"
        );
        // Waiting for the background build, not timing: spinning would take a core it needs.
        std::thread::sleep(Duration::from_millis(5));
    }
    startup
}

pub(super) const LIMITS: RunLimits = RunLimits {
    compute_ms: 2_000,
    max_wall_ms: 10_000,
    max_output_bytes: 1 << 20,
    max_depth: 100,
};

/// Points the user cache (`$XDG_CACHE_HOME`, where v8x would put `v8x/quickjs-bytecode`) at an
/// empty directory before the first isolate exists, so the bytecode-cache test can tell
/// whether anything was written.
pub(super) fn cache_home() -> &'static PathBuf {
    static HOME: OnceLock<PathBuf> = OnceLock::new();
    static SET: Once = Once::new();
    let home = HOME.get_or_init(|| {
        let temp = std::env::temp_dir();
        sweep_dead_cache_homes(&temp);
        let dir = temp.join(format!("{CACHE_HOME_PREFIX}{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    });
    SET.call_once(|| {
        // SAFETY: tests only, before this module's tests create any isolate. v8x prefers
        // XDG_CACHE_HOME over HOME, so HOME is left alone for the rest of the test binary.
        unsafe { std::env::set_var("XDG_CACHE_HOME", home) };
    });
    home
}

const CACHE_HOME_PREFIX: &str = "dsh-runtime-cache-";

/// Removes the cache homes of earlier test processes that are gone: a static is never
/// dropped, so each test binary's home outlives it, and the next one tidies up.
fn sweep_dead_cache_homes(temp: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(temp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|name| name.strip_prefix(CACHE_HOME_PREFIX))
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// A pool of the given size, created after the cache home is redirected.
pub(super) fn new_pool(size: usize, max_heap_mb: u64) -> IsolatePool {
    cache_home();
    IsolatePool::new(PoolConfig { size, max_heap_mb }).unwrap()
}

/// The pool shared by the golden tests.
pub(super) fn shared_pool() -> &'static IsolatePool {
    static POOL: OnceLock<IsolatePool> = OnceLock::new();
    POOL.get_or_init(|| new_pool(2, 64))
}

/// The tools every test program's `tools` object binds.
pub(super) const TOOLS: [&str; 15] = [
    "echo",
    "x",
    "never",
    "t",
    "slow",
    "fail",
    "abort",
    "panic",
    "panic_later",
    "a",
    "b",
    "c",
    "my-tool",
    "__proto__",
    "constructor",
];

pub(super) async fn run_on(
    pool: &IsolatePool,
    code: &str,
    limits: RunLimits,
    host: &Arc<TestHost>,
) -> RunOutcome {
    pool.run(RunRequest {
        code: code.to_owned(),
        limits,
        tools: TOOLS.iter().map(|name| (*name).to_owned()).collect(),
        host: host.clone(),
        abort: host.abort.clone(),
    })
    .await
}

/// Runs a program on the shared pool with generous limits and a fresh host.
pub(super) async fn run(code: &str) -> (RunOutcome, Arc<TestHost>) {
    let host = Arc::new(TestHost::default());
    let outcome = run_on(shared_pool(), code, LIMITS, &host).await;
    (outcome, host)
}

pub(super) fn ok(value: serde_json::Value) -> Result<Option<serde_json::Value>, RunFailure> {
    Ok(Some(value))
}

pub(super) fn failed(
    kind: FailureKind,
    message: &str,
) -> Result<Option<serde_json::Value>, RunFailure> {
    Err(RunFailure {
        kind,
        message: message.to_owned(),
    })
}

/// Asserts a program's whole outcome: its logs and its result.
pub(super) async fn check(
    code: &str,
    logs: &[&str],
    result: Result<Option<serde_json::Value>, RunFailure>,
) {
    let (outcome, _) = run(code).await;
    assert_eq!(
        outcome,
        RunOutcome {
            logs: logs.iter().map(|line| (*line).to_owned()).collect(),
            result,
        },
        "program:\n{code}"
    );
}
