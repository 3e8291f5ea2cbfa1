//! What one fresh isolate costs the host: creation (snapshot restore + `__dshFinish`) and
//! teardown, each on a thread of its own as the pool does it. Timing, not a check, so it is
//! ignored by default: `cargo test --release --lib create_and_drop -- --ignored --nocapture`.

#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::time::{Duration, Instant};

use crate::runtime::js::isolate::FreshIsolate;
use crate::runtime::js::slot::ISOLATE_STACK_BYTES;
use crate::runtime::js::snapshot::Startup;

/// Isolates measured after the warm-up ones.
const CYCLES: usize = 200;
const WARM_UP: usize = 20;

/// (create, drop) of one isolate on a new thread, like a pool slot's isolate thread.
fn one_cycle(startup: Startup) -> (Duration, Duration) {
    std::thread::Builder::new()
        .stack_size(ISOLATE_STACK_BYTES)
        .spawn(move || {
            let started = Instant::now();
            let isolate = FreshIsolate::new(64, startup).unwrap();
            let created = started.elapsed();
            let started = Instant::now();
            drop(isolate);
            (created, started.elapsed())
        })
        .unwrap()
        .join()
        .unwrap()
}

fn micros(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    (at(0.5).as_secs_f64() * 1e6, at(0.9).as_secs_f64() * 1e6)
}

#[test]
#[ignore = "a timing, run by hand in release"]
fn create_and_drop_cost() {
    let startup = super::support::startup_with_snapshot();
    for _ in 0..WARM_UP {
        one_cycle(startup);
    }
    let (mut creates, mut drops) = (Vec::new(), Vec::new());
    let started = Instant::now();
    for _ in 0..CYCLES {
        let (create, dropped) = one_cycle(startup);
        creates.push(create);
        drops.push(dropped);
    }
    let per_cycle = started.elapsed().as_secs_f64() * 1e6 / CYCLES as f64;
    let (create_median, create_p90) = micros(creates);
    let (drop_median, drop_p90) = micros(drops);
    eprintln!(
        "{CYCLES} isolates: create median {create_median:.0} µs p90 {create_p90:.0} µs; \
         drop median {drop_median:.0} µs p90 {drop_p90:.0} µs; \
         whole cycle (thread included) {per_cycle:.0} µs"
    );
}
