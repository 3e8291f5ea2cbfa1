//! Runaway programs whose time goes where the engine does not look for termination (the
//! microtask drain, built-ins called in a loop): through the real binary, each ends as a
//! timeout within its budget, nothing of it keeps a core busy afterwards, twenty in a row
//! leave the pool at full size, and EOF still ends the host at once.

use crate::support::code::hostile::{self, ComputeBudget, failure};
use crate::support::code::{Framing, Host, any_spec};
use crate::support::raw::thread_ticks;
use serde_json::json;
use std::time::{Duration, Instant};

const SERVING: &str = "console.log('fine'); return 'still serving';";

/// The programs: a self-re-queueing promise chain (also followed by a throw, which settles
/// the program while the chain goes on), an `await` loop with no binding call, loops over
/// built-ins that run long inside the engine (in a debug build each `fill` and `sort` call
/// alone outlasts the 200 ms an isolate gets to stop, unless the built-in itself looks for
/// termination), and one built-in call that would take years (`includes` over 2^53 indices).
const RUNAWAYS: [&str; 7] = [
    "const f = () => Promise.resolve().then(f); f();\nawait new Promise(() => {});",
    "const f = () => Promise.resolve().then(f); f();\nthrow new Error('and then');",
    "while (true) await null;",
    "const big = Array.from({ length: 200000 }, (_, i) => ({ i, s: 'x'.repeat(20) }));\nwhile (true) JSON.stringify(big);",
    "while (true) new Array(5e6).fill(0);",
    // One `sort` call would outlast the slot's bound; it looks for termination between comparisons.
    "const a = new Array(1e6).fill(0).map((_, i) => -i);\nwhile (true) a.slice().sort();",
    "return Array.prototype.includes.call({ length: 2 ** 53 }, 'never');",
];

#[test]
fn each_runaway_ends_as_a_timeout_within_its_budget() {
    hostile::runaway_compute_times_out(
        &json!({ "codeRuntime": { "poolSize": 2 } }),
        &ComputeBudget {
            compute_ms: 300,
            // Type stripping and handing the run to a warm isolate.
            process_margin: Duration::from_millis(400),
        },
        &RUNAWAYS,
        SERVING,
    );
}

#[test]
fn twenty_runaways_leave_no_busy_thread_a_full_pool_and_a_prompt_exit() {
    let mut host = Host::code_mode(
        Framing::Ndjson,
        "code",
        json!({ "codeRuntime": { "computeMs": 100, "poolSize": 2 } }),
    );
    let timeout = failure("code run failed (timeout): compute budget of 100 ms exhausted");
    for round in 0..20 {
        let program = RUNAWAYS[round % RUNAWAYS.len()];
        assert_eq!(
            host.run_code(&format!("runaway-{round}"), program),
            timeout,
            "{program}"
        );
    }
    assert_quiet(host.pid());
    assert_no_terminator_left(host.pid());
    assert_no_isolate_parked(host.pid(), 2);
    assert_pool_serves_two_at_once(&mut host);
    let eof = Instant::now();
    assert_eq!(host.finish(), 0);
    // Prompt: no runaway is waited for (one would never end), only ordinary teardown, which a
    // busy machine may slow down.
    assert!(
        eof.elapsed() < Duration::from_secs(2) + hostile::BUSY_MACHINE,
        "EOF took {:?}",
        eof.elapsed()
    );
}

/// Both isolates of the pool take a run at the same time: each run blocks on a client tool
/// until the other has dispatched too.
fn assert_pool_serves_two_at_once(host: &mut Host) {
    host.register(any_spec("gate", true));
    for n in 0..2 {
        host.send_run_code(
            json!(format!("gated-{n}")),
            &format!("gated-{n}"),
            "return await tools.gate({});",
        );
    }
    let mut gates = Vec::new();
    while gates.len() < 2 {
        let message = host.next_message();
        if message["method"] == "client/executeTool" {
            gates.push(message);
        } else {
            assert!(
                message.get("id").is_none() || message.get("method").is_some(),
                "{message}"
            );
        }
    }
    for gate in &gates {
        host.answer(gate, json!({ "value": "open" }));
    }
    let mut answered = 0;
    while answered < 2 {
        let message = host.next_message();
        if message.get("method").is_none() {
            assert_eq!(
                message["result"]["value"]["result"],
                json!("open"),
                "{message}"
            );
            answered += 1;
        }
    }
}

/// Within a bounded wait, no `dsh-terminator` thread is left: each ends when its isolate left
/// JavaScript or was parked (a parked thread's slices are requested by the dozer).
fn assert_no_terminator_left(pid: u32) {
    wait_for_threads(pid, ":dsh-terminator", 0, "terminator threads left");
}

/// Within a bounded wait, only the pool's own isolate threads are left: every runaway's
/// thread left JavaScript and ended (a termination request makes the engine check at its
/// next call or back-edge, and its long built-ins check as they go, so even one built-in
/// call that would take years ends; a thread parked because it was starved of CPU runs in
/// slices until it does).
fn assert_no_isolate_parked(pid: u32, pool_size: usize) {
    wait_for_threads(
        pid,
        ":dsh-isolate-",
        pool_size,
        "isolate threads: runaways were kept",
    );
}

/// Waits (up to 30 s, a guard for a busy machine, not a timing assertion) until at most
/// `at_most` of `pid`'s threads have `name` in their name.
fn wait_for_threads(pid: u32, name: &str, at_most: usize, what: &str) {
    let count = || {
        thread_ticks(pid)
            .into_iter()
            .filter(|(thread, _)| thread.contains(name))
            .count()
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while count() > at_most {
        assert!(Instant::now() < deadline, "{} {what}", count());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Within a bounded wait (30 s, for a busy machine), a 500 ms stretch in which no thread of
/// `pid` used more than 5% of a core: a runaway left spinning uses all of one (or all it gets).
fn assert_quiet(pid: u32) {
    const WINDOW: Duration = Duration::from_millis(500);
    const MAX_TICKS: u64 = 3; // 30 ms at 100 ticks per second
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut busiest = Vec::new();
    while Instant::now() < deadline {
        let before = thread_ticks(pid);
        std::thread::sleep(WINDOW);
        let after = thread_ticks(pid);
        busiest = after
            .iter()
            .filter_map(|(thread, ticks)| {
                let start = before
                    .iter()
                    .find(|(t, _)| t == thread)
                    .map_or(0, |(_, t)| *t);
                (ticks - start > MAX_TICKS).then(|| format!("{thread} +{}", ticks - start))
            })
            .collect();
        if busiest.is_empty() {
            return;
        }
    }
    panic!("threads still busy after the runs: {busiest:?}");
}
