//! Termination inside a microtask drain ends the drain and drops what was queued, as V8
//! does. QuickJS ends only the job that was running when it saw the request; a drain that
//! went on let a microtask flood outlive every request (the heap-limit flood of
//! `code_mode::memory` spun for minutes at a constant heap whenever the request ended a
//! job that only linked the flood's promises, not the one that re-queued it).

#![allow(clippy::unwrap_used)]

use super::support::{cache_home, startup_with_snapshot};
use crate::runtime::js::isolate::FreshIsolate;

/// Steps after which the floods stop on their own, so the test ends whatever happens.
const LIMIT: u64 = 1_000_000;

/// Two microtask floods that restart each other: ending any one job (a step, or a restart)
/// leaves the other flood running, which brings the ended one back within a few steps.
const FLOODS: &str = r"
globalThis.steps = 0;
const last = [0, 0];
const step = (i) => {
  if (++globalThis.steps >= LIMIT) return;
  last[i] = globalThis.steps;
  if (last[i] - last[1 - i] > 4) {
    last[1 - i] = last[i];
    Promise.resolve().then(() => step(1 - i));
  }
  Promise.resolve().then(() => step(i));
};
Promise.resolve().then(() => step(0));
Promise.resolve().then(() => step(1));
";

fn steps(isolate: &mut FreshIsolate) -> u64 {
    isolate
        .evaluate("globalThis.steps")
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn a_terminated_job_ends_the_drain_and_nothing_queued_runs_after() {
    cache_home();
    let startup = startup_with_snapshot();
    std::thread::spawn(move || {
        let mut isolate = FreshIsolate::new(64, startup).unwrap();
        let floods = FLOODS.replace("LIMIT", &LIMIT.to_string());
        isolate.evaluate(&floods).unwrap();
        assert_eq!(steps(&mut isolate), 0, "the floods start only in the drain");
        isolate.request_termination();
        isolate.drain_then_resume();
        let after_termination = steps(&mut isolate);
        assert!(
            after_termination < LIMIT / 100,
            "the floods ran {after_termination} steps after termination was requested"
        );
        // The queue was dropped: a later drain has nothing of the floods left to run.
        isolate.drain_then_resume();
        assert_eq!(steps(&mut isolate), after_termination);
    })
    .join()
    .unwrap();
}
