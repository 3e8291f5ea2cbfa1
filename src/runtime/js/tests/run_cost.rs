//! What running a trivial program on a ready isolate costs, without its creation: the part of
//! a spaced run's answer the isolate thread spends, right after the isolate was built and
//! after it waited 1, 10 and 100 ms (as a spaced run's isolate does; the run then costs
//! several times more; it takes no more page faults, so caches gone cold are the likely cause).
//! Timing, not a check, so it is ignored by default:
//! `cargo test --release --lib trivial_run_cost -- --ignored --nocapture`.

#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::support::{LIMITS, TestHost};
use crate::runtime::control::RunControl;
use crate::runtime::js::isolate::{FreshIsolate, Job};
use crate::runtime::js::slot::ISOLATE_STACK_BYTES;
use crate::runtime::js::snapshot::Startup;

const RUNS: usize = 200;
const WARM_UP: usize = 20;

/// One run of `code` on a fresh isolate built on a new thread, as a pool slot does it: the
/// time from handing it the job to its outcome.
fn one_run(startup: Startup, code: &'static str, idle: Duration) -> Duration {
    std::thread::Builder::new()
        .stack_size(ISOLATE_STACK_BYTES)
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
                .unwrap();
            let mut isolate = FreshIsolate::new(64, startup).unwrap();
            let job = Job {
                code: code.to_owned(),
                limits: LIMITS,
                tools: vec!["echo".to_owned(), "read".to_owned()],
                host: Arc::new(TestHost::default()),
                control: Arc::new(RunControl::new(Box::new(|| {}), LIMITS.max_output_bytes)),
                max_heap_mb: 64,
            };
            // A spaced run meets an isolate that waited: its caches went cold meanwhile.
            std::thread::sleep(idle);
            let started = Instant::now();
            let outcome = runtime.block_on(isolate.run(job));
            let took = started.elapsed();
            assert!(outcome.result.is_ok(), "{code}");
            took
        })
        .unwrap()
        .join()
        .unwrap()
}

#[test]
#[ignore = "a timing, run by hand in release"]
fn trivial_run_cost() {
    let startup = super::support::startup_with_snapshot();
    let cases = [
        ("return 1", Duration::ZERO),
        ("return 1", Duration::from_millis(1)),
        ("return 1", Duration::from_millis(10)),
        ("return 1", Duration::from_millis(100)),
        ("return await tools.echo({ i: 1 })", Duration::ZERO),
    ];
    for (code, idle) in cases {
        for _ in 0..WARM_UP {
            one_run(startup, code, idle);
        }
        let runs = if idle.is_zero() { RUNS } else { RUNS / 4 };
        let mut samples: Vec<Duration> = (0..runs).map(|_| one_run(startup, code, idle)).collect();
        samples.sort();
        let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
        eprintln!(
            "{code} after {idle:?} idle: run median {:.0} µs, p90 {:.0} µs, min {:.0} µs",
            at(0.5).as_secs_f64() * 1e6,
            at(0.9).as_secs_f64() * 1e6,
            samples[0].as_secs_f64() * 1e6,
        );
    }
}
