//! Hostile programs: runaway compute, heap bombs, log floods, pollution between runs and reaching for engine internals.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::support::{LIMITS, TestHost, check, failed, new_pool, ok, run_on};
use crate::runtime::{FailureKind, LogStream, RunLimits, RunOutcome};

/// How late a budget may be enforced.
const SLACK: Duration = Duration::from_millis(100);
/// What a machine busy with other work (`.ci/stress`) may add beyond the slack: the budgets'
/// watchdog and the isolate's thread each wait for a core. A budget that was not enforced
/// at all ends the run differently (or never), which the outcome's assertion catches.
const BUSY_MACHINE: Duration = Duration::from_secs(2);

/// Runs `code` on a fresh single-isolate pool and returns the outcome with its duration.
async fn timed(code: &str, limits: RunLimits, max_heap_mb: u64) -> (RunOutcome, Duration) {
    let pool = new_pool(1, max_heap_mb);
    let host = Arc::new(TestHost::default());
    let started = Instant::now();
    let outcome = run_on(&pool, code, limits, &host).await;
    let elapsed = started.elapsed();
    // The isolate was destroyed: the same pool still serves.
    let after = run_on(&pool, "return 'still serving'", LIMITS, &host).await;
    assert_eq!(after.result, ok(json!("still serving")), "after:\n{code}");
    pool.shutdown().await;
    (outcome, elapsed)
}

#[tokio::test]
async fn runaway_compute_is_stopped_within_the_budget() {
    let limits = RunLimits {
        compute_ms: 300,
        ..LIMITS
    };
    for code in [
        "while (true) {}",
        // A binding is pending while the loop spins.
        "tools.never({});\nwhile (true) {}",
        // The loop starts after an answered binding, inside a continuation.
        "await tools.echo({});\nfor (;;) {}",
        "setTimeout(() => { while (true) {} }, 1);\nawait tools.never({});",
    ] {
        let (outcome, elapsed) = timed(code, limits, 64).await;
        assert_eq!(
            outcome,
            RunOutcome {
                logs: vec![],
                result: failed(FailureKind::Timeout, "compute budget of 300 ms exhausted"),
            },
            "program:\n{code}"
        );
        assert!(
            elapsed < Duration::from_millis(300) + SLACK + BUSY_MACHINE,
            "{elapsed:?} for:\n{code}"
        );
    }
}

#[tokio::test]
async fn waiting_on_the_host_spends_no_compute() {
    let limits = RunLimits {
        compute_ms: 150,
        ..LIMITS
    };
    // The slow host answers after 300 ms: twice the compute budget.
    let (outcome, elapsed) = timed("return await tools.slow({n: 1})", limits, 64).await;
    assert_eq!(outcome.result, ok(json!({"n": 1})));
    assert!(elapsed >= Duration::from_millis(300), "{elapsed:?}");
}

#[tokio::test]
async fn the_wall_clock_budget_ends_waiting_programs() {
    let limits = RunLimits {
        max_wall_ms: 200,
        ..LIMITS
    };
    let (outcome, elapsed) = timed(
        "console.log('waiting');\nawait tools.never({});",
        limits,
        64,
    )
    .await;
    assert_eq!(
        outcome,
        RunOutcome {
            logs: vec!["waiting".to_owned()],
            result: failed(
                FailureKind::Timeout,
                "wall-clock budget of 200 ms exhausted"
            ),
        }
    );
    assert!(
        elapsed < Duration::from_millis(200) + SLACK + BUSY_MACHINE,
        "{elapsed:?}"
    );
}

#[tokio::test]
async fn allocation_bombs_end_as_worker_exit() {
    for code in [
        "const a = []; while (true) a.push('x'.repeat(1000) + a.length);",
        "const parts = []; for (let i = 0; ; i++) parts.push({ i, s: String(i).repeat(50) });",
        "const m = new Map(); for (let i = 0; ; i++) m.set(i, {i, pad: [i, i, i]});",
        "const a = []; while (true) a.push('x'.repeat(100000) + a.length);",
        "const c = []; while (true) c.push(new Array(100000).fill(c.length));",
    ] {
        // Compute is generous: the heap must run out first, even in an unoptimized build.
        let limits = RunLimits {
            compute_ms: 60_000,
            max_wall_ms: 120_000,
            ..LIMITS
        };
        let (outcome, _) = timed(code, limits, 32).await;
        assert_eq!(
            outcome.result,
            failed(FailureKind::WorkerExit, "heap limit of 32 MiB exceeded"),
            "program:\n{code}"
        );
    }
}

#[tokio::test]
async fn log_floods_stop_at_the_output_cap() {
    let limits = RunLimits {
        max_output_bytes: 100,
        ..LIMITS
    };
    let pool = new_pool(1, 64);
    let host = Arc::new(TestHost::default());
    let outcome = run_on(
        &pool,
        "for (let i = 0; ; i++) console.log('line ' + i);",
        limits,
        &host,
    )
    .await;
    // ["line 0",...,"line 9"] is 91 bytes; `,"line 10"` would make it 101, so ten lines
    // were streamed. The failure keeps what fits beside its 33-byte message: seven lines
    // (65 bytes), and no prefix of the eighth (which would need at least 3 more).
    let streamed: Vec<String> = (0..10).map(|i| format!("line {i}")).collect();
    assert_eq!(
        outcome,
        RunOutcome {
            logs: streamed[..7].to_vec(),
            result: failed(FailureKind::OutputLimit, "outer output exceeded 100 bytes"),
        }
    );
    let forwarded: Vec<(LogStream, String)> = streamed
        .into_iter()
        .map(|line| (LogStream::Log, line))
        .collect();
    assert_eq!(*host.lines.lock(), forwarded);

    // A program that swallows errors cannot keep logging past the cap either.
    let outcome = run_on(
        &pool,
        "for (let i = 0; ; i++) { try { console.error('x'.repeat(30)); } catch {} }",
        limits,
        &host,
    )
    .await;
    assert_eq!(
        outcome.result,
        failed(FailureKind::OutputLimit, "outer output exceeded 100 bytes")
    );
    // ["x…x","x…x","x…x"] is 2 + 3 * 32 + 2 = 100 bytes: three lines fit the cap; beside
    // the 33-byte message, two (2 + 32 + 1 + 32 = 67), and no room for a prefix of a third.
    assert_eq!(outcome.logs, ["x".repeat(30), "x".repeat(30)]);

    // The completion shares the cap with the logs.
    let outcome = run_on(
        &pool,
        "console.log('abc'); return 'x'.repeat(200);",
        limits,
        &host,
    )
    .await;
    assert_eq!(
        outcome,
        RunOutcome {
            logs: vec!["abc".to_owned()],
            result: failed(FailureKind::OutputLimit, "outer output exceeded 100 bytes"),
        }
    );
    // ["abc"] (7 bytes) + "xy" (4 bytes) = 11: exactly at an 11-byte cap.
    let tight = RunLimits {
        max_output_bytes: 11,
        ..LIMITS
    };
    let outcome = run_on(&pool, "console.log('abc'); throw 'xy';", tight, &host).await;
    assert_eq!(outcome.result, failed(FailureKind::Exception, "xy"));
    // Under a cap smaller than the message, the message itself is cut to fit.
    let outcome = run_on(&pool, "console.log('abc'); throw 'xyz';", tight, &host).await;
    assert_eq!(
        outcome,
        RunOutcome {
            logs: Vec::new(),
            result: failed(FailureKind::OutputLimit, "outer o"),
        }
    );
    pool.shutdown().await;
}

#[tokio::test]
async fn pollution_does_not_survive_the_run() {
    let pool = new_pool(1, 64);
    let host = Arc::new(TestHost::default());
    let polluting = concat!(
        "Object.prototype.polluted = 'yes'; Array.prototype.push = null;\n",
        "globalThis.leftover = 1; JSON.parse = null; tools.x.constructor.prototype.evil = 1;\n",
        "return 'polluted';",
    );
    let first = run_on(&pool, polluting, LIMITS, &host).await;
    assert_eq!(first.result, ok(json!("polluted")));
    let second = run_on(
        &pool,
        "return [typeof ({}).polluted, typeof [].push, typeof leftover, typeof JSON.parse, typeof (async () => {}).evil];",
        LIMITS,
        &host,
    )
    .await;
    assert_eq!(
        second.result,
        ok(json!([
            "undefined",
            "function",
            "undefined",
            "function",
            "undefined"
        ]))
    );
    pool.shutdown().await;
}

#[tokio::test]
async fn engine_internals_are_out_of_reach() {
    check(
        concat!(
            "return [typeof Deno, typeof __bootstrap, typeof __infra, typeof gc, typeof WebAssembly,\n",
            "  typeof performance, typeof queueMicrotask, typeof ShadowRealm, typeof Atomics,\n",
            "  typeof SharedArrayBuffer, typeof Temporal, typeof DOMException,\n",
            "  Object.getOwnPropertyNames(globalThis).filter((n) => n.startsWith('__')),\n",
            "  Object.getOwnPropertySymbols(globalThis).length,\n",
            "  Function('return typeof Deno')(), (0, eval)('typeof __bootstrap'),\n",
            "  await tools.x.constructor('return typeof Deno')(),\n",
            "  await import('data:text/javascript,export default 1').then(() => 'loaded', (e) => e.name)];",
        ),
        &[],
        ok(json!([
            "undefined", "undefined", "undefined", "undefined", "undefined", "undefined",
            "undefined", "undefined", "undefined", "undefined", "undefined", "undefined",
            [], 0, "undefined", "undefined", "undefined", "TypeError"
        ])),
    )
    .await;
    // Walk everything reachable from the global object (values, accessors, prototypes) and
    // look for ops, op holders and engine-private names.
    check(
        concat!(
            "const found = []; const seen = new Set(); const queue = [globalThis];\n",
            "const suspicious = /^(op_|Deno$|core$|ops$|__bootstrap|__infra|__v8x|gc$)/;\n",
            "while (queue.length > 0) {\n",
            "  const item = queue.pop();\n",
            "  if ((typeof item !== 'object' && typeof item !== 'function') || item === null || seen.has(item)) continue;\n",
            "  seen.add(item);\n",
            "  if (typeof item === 'function' && suspicious.test(item.name)) found.push('function ' + item.name);\n",
            "  for (const key of Reflect.ownKeys(item)) {\n",
            "    if (typeof key === 'string' && suspicious.test(key)) found.push('key ' + key);\n",
            "    const d = Object.getOwnPropertyDescriptor(item, key);\n",
            "    if (d !== undefined) queue.push(d.value, d.get, d.set);\n",
            "  }\n",
            "  queue.push(Object.getPrototypeOf(item));\n",
            "}\n",
            "return [seen.size > 300, found];",
        ),
        &[],
        ok(json!([true, []])),
    )
    .await;
    // Stack-trace hooks see no bootstrap function objects.
    check(
        concat!(
            "const functions = [];\n",
            "Error.prepareStackTrace = (_e, sites) => { for (const s of sites) functions.push(typeof s.getFunction()); return ''; };\n",
            "console.log({ toJSON() { new Error('probe').stack; return 1; } });\n",
            "await tools.echo({ a: 1 });\n",
            "return [...new Set(functions)];",
        ),
        &["1"],
        ok(json!(["undefined"])),
    )
    .await;
    // The raw op path cannot be intercepted through patched Function.prototype methods.
    check(
        concat!(
            "let seen = 0;\n",
            "const call = Function.prototype.call;\n",
            "Function.prototype.call = function (...a) { seen++; return call.apply(this, a); };\n",
            "Function.prototype.apply = function () { seen++; return 'hijacked'; };\n",
            "const r = await tools.echo({ a: 1 });\n",
            "setTimeout(() => {}, 1);\n",
            "return [r, seen];",
        ),
        &[],
        ok(json!([{"a": 1}, 0])),
    )
    .await;
}

#[tokio::test]
async fn host_panics_are_contained() {
    let pool = new_pool(1, 64);
    let host = Arc::new(TestHost::default());
    let outcome = run_on(
        &pool,
        "try { await tools.panic({}); } catch (e) { return [e.toolName, e.message]; }",
        LIMITS,
        &host,
    )
    .await;
    assert_eq!(outcome.result, ok(json!(["panic", "the tool host failed"])));
    let outcome = run_on(&pool, "await tools.panic_later({});", LIMITS, &host).await;
    assert_eq!(
        outcome.result,
        failed(
            FailureKind::WorkerExit,
            "the isolate thread exited during the run"
        )
    );
    let outcome = run_on(&pool, "return 'replaced'", LIMITS, &host).await;
    assert_eq!(outcome.result, ok(json!("replaced")));
    pool.shutdown().await;
}
