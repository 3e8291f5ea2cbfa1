//! Pool behavior: concurrency, aborts, shutdown, startup validation and the bytecode cache.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use serde_json::json;

use super::support::{LIMITS, TestHost, cache_home, failed, new_pool, ok, run_on};
use crate::runtime::js::timing::WARM_AFTER;
use crate::runtime::{FailureKind, IsolatePool, PoolConfig, RunOutcome, RuntimeError};

#[tokio::test]
async fn two_hundred_concurrent_runs_are_all_answered() {
    let pool = new_pool(2, 64);
    let host = Arc::new(TestHost::default());
    let runs = (0..200).map(|i| {
        let pool = pool.clone();
        let host = host.clone();
        async move {
            // Half the runs are announced first, as the wire front end announces them.
            if i % 2 == 0 {
                pool.anticipate();
            }
            let code = format!("return {i} + (await tools.echo({{n: {i}}})).n");
            run_on(&pool, &code, LIMITS, &host).await
        }
    });
    let outcomes = futures::future::join_all(runs).await;
    for (i, outcome) in outcomes.into_iter().enumerate() {
        assert_eq!(outcome.result, ok(json!(2 * i)), "run {i}");
    }
    assert_eq!(host.calls.lock().len(), 200);
    pool.shutdown().await;
}

#[tokio::test]
async fn the_abort_token_ends_the_run() {
    let pool = new_pool(1, 64);
    let aborted = |logs: Vec<String>| RunOutcome {
        logs,
        result: failed(FailureKind::Abort, "run aborted"),
    };
    // Fired by the host while the program waits on it.
    let host = Arc::new(TestHost::default());
    let outcome = run_on(
        &pool,
        "console.log('started');\nawait tools.abort({});",
        LIMITS,
        &host,
    )
    .await;
    assert_eq!(outcome, aborted(vec!["started".to_owned()]));
    // Fired while the program spins.
    let host = Arc::new(TestHost::default());
    let outcome = run_on(&pool, "tools.abort({});\nwhile (true) {}", LIMITS, &host).await;
    assert_eq!(outcome, aborted(vec![]));
    // Already fired: nothing runs.
    let host = Arc::new(TestHost::default());
    host.abort.cancel();
    let outcome = run_on(&pool, "await tools.echo({});", LIMITS, &host).await;
    assert_eq!(outcome, aborted(vec![]));
    assert!(host.calls.lock().is_empty());
    // The pool still serves.
    let host = Arc::new(TestHost::default());
    let outcome = run_on(&pool, "return 7", LIMITS, &host).await;
    assert_eq!(outcome.result, ok(json!(7)));
    pool.shutdown().await;
}

#[tokio::test]
async fn shutdown_ends_runs_and_refuses_new_ones() {
    let pool = new_pool(2, 64);
    let host = Arc::new(TestHost::default());
    let waiting = {
        let pool = pool.clone();
        let host = host.clone();
        tokio::spawn(async move { run_on(&pool, "await tools.never({});", LIMITS, &host).await })
    };
    // The run is in flight once the host saw its call.
    while host.calls.lock().is_empty() {
        tokio::task::yield_now().await;
    }
    pool.shutdown().await;
    let shut_down = failed(FailureKind::WorkerExit, "isolate pool shut down");
    assert_eq!(waiting.await.unwrap().result, shut_down);
    assert_eq!(pool.ready_isolates(), 0);
    let outcome = run_on(&pool, "return 1", LIMITS, &host).await;
    assert_eq!(outcome.result, shut_down);
}

#[tokio::test]
async fn dropping_a_run_stops_its_isolate() {
    let pool = new_pool(1, 64);
    let host = Arc::new(TestHost::default());
    {
        let run = run_on(&pool, "tools.never({});\nwhile (true) {}", LIMITS, &host);
        tokio::pin!(run);
        // Poll until the program is running, then drop the run.
        while host.calls.lock().is_empty() {
            futures::poll!(run.as_mut())
                .is_pending()
                .then_some(())
                .unwrap();
            tokio::task::yield_now().await;
        }
    }
    // The single isolate was stopped and replaced, so the next run is served.
    let outcome = run_on(&pool, "return 'next'", LIMITS, &host).await;
    assert_eq!(outcome.result, ok(json!("next")));
    pool.shutdown().await;
}

#[tokio::test]
async fn invalid_configs_are_refused() {
    let refused = |size, max_heap_mb| IsolatePool::new(PoolConfig { size, max_heap_mb }).err();
    assert_eq!(
        refused(0, 64),
        Some(RuntimeError::InvalidConfig("size must be at least 1"))
    );
    assert_eq!(
        refused(1, 0),
        Some(RuntimeError::InvalidConfig(
            "max_heap_mb must be at least 1"
        ))
    );
    // 1 MiB is too small to evaluate the bootstrap, so a pool whose first isolates start
    // from source is refused; restored from the startup snapshot (if an earlier test in this
    // process built it) an isolate fits in 1 MiB and the pool starts.
    match refused(1, 1) {
        None => {}
        Some(error) => assert!(matches!(error, RuntimeError::Isolate(_)), "{error:?}"),
    }
}

/// The engine's cache is off by its flag (`--no-bytecode-cache`), so nothing, not even its
/// directory, appears under the cache home the engine would write to.
#[tokio::test]
async fn programs_never_reach_the_bytecode_cache() {
    let home = cache_home();
    let pool = new_pool(1, 64);
    let host = Arc::new(TestHost::default());
    for code in [
        "return 'cache probe one'",
        "throw new Error('cache probe two')",
    ] {
        run_on(&pool, code, LIMITS, &host).await;
    }
    pool.shutdown().await;
    let entries: Vec<_> = std::fs::read_dir(home).unwrap().collect();
    assert!(entries.is_empty(), "{entries:?}");
    std::fs::remove_dir(home).unwrap();
}

/// Announces a run to `pool`'s next isolate once it has been ready for `WARM_AFTER`, and waits
/// until the pool has warmed up `count` isolates in all (the warm-up runs on the isolate's own
/// thread). Nothing here races the isolate's thread on a busy machine: the slot takes the
/// offer's time before it counts the offer as ready, so `WARM_AFTER` after seeing it counted
/// the isolate is old enough; and announcing before the offer reached the pool does nothing,
/// so announcing repeats until the warm-up is seen (the first announcement that finds the
/// offer asks for it, later ones are ignored).
async fn announce_to_an_idle_isolate(pool: &IsolatePool, count: usize) {
    let guard = std::time::Duration::from_secs(60);
    let ready = tokio::time::timeout(guard, async {
        while pool.ready_isolates() == 0 {
            tokio::task::yield_now().await;
        }
    });
    assert!(ready.await.is_ok(), "no isolate became ready");
    tokio::time::sleep(WARM_AFTER).await;
    let warmed = tokio::time::timeout(guard, async {
        while pool.warm_ups() < count {
            pool.anticipate();
            tokio::task::yield_now().await;
        }
    });
    assert!(
        warmed.await.is_ok(),
        "no warm-up: {} of {count}",
        pool.warm_ups()
    );
}

#[tokio::test]
async fn an_anticipated_run_meets_a_warmed_up_isolate_and_answers_as_an_unwarmed_one_would() {
    // A program whose answer carries positions and logs, and that waits on a binding call and
    // a timer: the warm-up turned the event loop with a waker of its own, the run's must wake it.
    let program = "console.log(typeof globalThis.__warm, Object.keys(globalThis).length);\nconsole.log((await tools.echo({ n: 1 })).n);\nawait new Promise((resolve) => setTimeout(resolve, 1));\nconst e = new Error('x');\nthrow new Error(e.stack.split('\\n')[1] ?? 'no frame');";
    let cold = new_pool(1, 64);
    let host = Arc::new(TestHost::default());
    let unwarmed = run_on(&cold, program, LIMITS, &host).await;
    assert_eq!(cold.warm_ups(), 0, "nothing was anticipated");
    cold.shutdown().await;

    let pool = new_pool(1, 64);
    // Only an isolate that sat idle warms up; once per isolate, however often it is announced.
    announce_to_an_idle_isolate(&pool, 1).await;
    pool.anticipate();
    let warmed = run_on(&pool, program, LIMITS, &host).await;
    assert_eq!(warmed, unwarmed);
    assert_eq!(
        warmed.logs.get(1).map(String::as_str),
        Some("1"),
        "{warmed:?}"
    );
    assert!(
        matches!(warmed.result, Err(ref f) if f.message.contains("program.ts")),
        "{warmed:?}"
    );
    assert_eq!(pool.warm_ups(), 1);

    // The next isolate, announced and then left waiting, does not hold up the shutdown.
    announce_to_an_idle_isolate(&pool, 2).await;
    pool.shutdown().await;
    assert_eq!(pool.ready_isolates(), 0);
}

/// A host whose `meet` calls all answer once `expected` of them have been made: runs that
/// wait on each other through their bindings.
struct Meeting {
    expected: usize,
    arrived: tokio::sync::watch::Sender<usize>,
}

impl crate::runtime::BindingHost for Meeting {
    fn call(
        &self,
        _: &str,
        _: serde_json::Value,
    ) -> futures::future::BoxFuture<'static, Result<serde_json::Value, String>> {
        self.arrived.send_modify(|arrived| *arrived += 1);
        let mut arrivals = self.arrived.subscribe();
        let expected = self.expected;
        Box::pin(async move {
            let met = arrivals.wait_for(|arrived| *arrived >= expected).await;
            met.map(|_| json!("met"))
                .map_err(|_| "the meeting ended".to_owned())
        })
    }

    fn log(&self, _: crate::runtime::LogStream, _: &str) {}
}

#[tokio::test]
async fn runs_that_wait_on_each_other_all_run_with_one_isolate_kept_warm() {
    const RUNS: usize = 5;
    let pool = new_pool(1, 64);
    let host = Arc::new(Meeting {
        expected: RUNS,
        arrived: tokio::sync::watch::Sender::new(0),
    });
    let runs = (0..RUNS).map(|_| {
        let (pool, host) = (pool.clone(), host.clone());
        async move {
            pool.run(crate::runtime::RunRequest {
                code: "return await tools.meet({});".to_owned(),
                limits: LIMITS,
                tools: vec!["meet".to_owned()],
                host,
                abort: tokio_util::sync::CancellationToken::new(),
            })
            .await
        }
    });
    // A guard against the deadlock a queue of runs would be, not a timing assertion.
    let outcomes = tokio::time::timeout(
        std::time::Duration::from_secs(120),
        futures::future::join_all(runs),
    )
    .await
    .unwrap_or_else(|_| panic!("runs queued behind runs that wait for them"));
    for outcome in outcomes {
        assert_eq!(outcome.result, ok(json!("met")));
    }
    pool.shutdown().await;
}
