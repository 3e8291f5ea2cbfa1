//! What one fresh isolate costs the host, in-process: creating it (snapshot restore and
//! bootstrap), dropping it, and running a program on one that then waited as a spaced run's
//! isolate does, cold or warmed up first as the pool warms one for an anticipated run. Each
//! on a thread of its own, as a pool slot does it. These are the parts
//! the `stdio_code_mode` rows are made of: back to back, creation and drop bound the rate on
//! two cores; spaced, the run after idling is most of the answer.
//!
//! `cargo bench --bench isolate` prints one JSON line per scenario (median, p90, min in µs).
//! `BENCH_RUNS=<n>` sets the samples per scenario (default 200).

#![allow(clippy::print_stdout)]

use anyhow::anyhow;
use dsh_tools::runtime::js::probe::IsolateProbe;
use serde_json::json;
use std::time::Duration;

/// The binary's allocator, so the numbers are the shipped ones.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Untimed isolates before each scenario's samples.
const WARM_UP: usize = 20;

fn main() -> anyhow::Result<()> {
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .unwrap_or(200);
    let probe = IsolateProbe::ready(Duration::from_secs(60)).map_err(|e| anyhow!(e))?;

    let (mut creates, mut drops) = (Vec::new(), Vec::new());
    for cycle in 0..WARM_UP + runs {
        let (created, dropped) = probe.create_and_drop().map_err(|e| anyhow!(e))?;
        if cycle >= WARM_UP {
            creates.push(created);
            drops.push(dropped);
        }
    }
    report("isolate_create", creates);
    report("isolate_drop", drops);

    let cases = [
        ("return 1", 0),
        ("return 1", 1),
        ("return 1", 10),
        ("return 1", 100),
        ("return await tools.echo({ i: 1 })", 0),
    ];
    for (code, idle_ms) in cases {
        let idle = Duration::from_millis(idle_ms);
        // Idle samples cost their wait: fewer of them.
        let samples = if idle_ms == 0 {
            runs
        } else {
            (runs / 4).max(5)
        };
        let mut took = Vec::with_capacity(samples);
        for run in 0..WARM_UP + samples {
            let duration = probe.run_after(code, idle).map_err(|e| anyhow!(e))?;
            if run >= WARM_UP {
                took.push(duration);
            }
        }
        report(&format!("run `{code}` after {idle_ms} ms idle"), took);
    }

    // The pool's warm-up of an isolate for an anticipated run, and what the run then costs.
    let samples = (runs / 4).max(5);
    let (mut warm_ups, mut runs_after) = (Vec::new(), Vec::new());
    for run in 0..WARM_UP + samples {
        let (warm_up, took) = probe
            .warm_up_and_run_after("return 1", Duration::from_millis(100))
            .map_err(|e| anyhow!(e))?;
        if run >= WARM_UP {
            warm_ups.push(warm_up);
            runs_after.push(took);
        }
    }
    report("warm-up after 100 ms idle", warm_ups);
    report("run `return 1` after 100 ms idle and a warm-up", runs_after);
    Ok(())
}

fn report(scenario: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let micros = |q: f64| {
        let index = ((samples.len() - 1) as f64 * q).round() as usize;
        (samples[index].as_secs_f64() * 1e7).round() / 10.0
    };
    println!(
        "{}",
        json!({
            "scenario": scenario,
            "samples": samples.len(),
            "median_us": micros(0.5),
            "p90_us": micros(0.9),
            "min_us": micros(0.0),
        })
    );
}
