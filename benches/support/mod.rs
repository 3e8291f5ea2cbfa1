//! Measurement and reporting shared by the benches: repeated samples, their median, the CPU
//! time each sample cost (robust when other work shares the machine), one machine-readable
//! JSON line per scenario and a human-readable table at the end.

#![allow(dead_code, clippy::print_stdout)]

use serde_json::json;
use std::time::{Duration, Instant};

/// What a sample's rate is expressed in.
#[derive(Clone, Copy, Debug)]
pub enum Unit {
    /// Wall-clock nanoseconds per call (lower is better).
    NanosPerCall,
    /// Calls per wall-clock second (higher is better).
    CallsPerSecond,
}

impl Unit {
    fn name(self) -> &'static str {
        match self {
            Unit::NanosPerCall => "ns/call",
            Unit::CallsPerSecond => "calls/s",
        }
    }

    fn of(self, calls: u64, elapsed: Duration) -> f64 {
        let seconds = elapsed.as_secs_f64();
        match self {
            Unit::NanosPerCall => seconds * 1e9 / calls as f64,
            Unit::CallsPerSecond => calls as f64 / seconds,
        }
    }
}

/// How to measure one scenario.
pub struct Scenario {
    pub name: String,
    pub unit: Unit,
    /// Calls one sample performs.
    pub calls: u64,
    /// Timed samples (after one untimed warm-up sample).
    pub samples: usize,
    /// The target the README states.
    pub target: Option<f64>,
    /// Processes whose CPU time per call is reported, by label (`None` is this process).
    pub cpu_of: Vec<(&'static str, Option<u32>)>,
}

impl Scenario {
    /// Whether filter arguments (`cargo bench --bench x -- <filter>...`), if any, select
    /// this scenario (a filter selects every name containing it).
    pub fn selected(&self) -> bool {
        let filters: Vec<String> = std::env::args()
            .skip(1)
            .filter(|a| !a.starts_with("--"))
            .collect();
        filters.is_empty() || filters.iter().any(|f| self.name.contains(f.as_str()))
    }

    /// Runs the warm-up and the timed samples; `None` when the scenario is not selected.
    pub fn measure(
        &self,
        mut sample: impl FnMut() -> anyhow::Result<()>,
    ) -> anyhow::Result<Option<Measured>> {
        if !self.selected() {
            return Ok(None);
        }
        sample()?;
        let mut rates = Vec::with_capacity(self.samples);
        let mut cpu: Vec<Vec<f64>> = vec![Vec::new(); self.cpu_of.len()];
        for _ in 0..self.samples {
            let cpu_before: Vec<Option<u64>> =
                self.cpu_of.iter().map(|(_, pid)| cpu_ns(*pid)).collect();
            let started = Instant::now();
            sample()?;
            let elapsed = started.elapsed();
            rates.push(self.unit.of(self.calls, elapsed));
            for (index, (_, pid)) in self.cpu_of.iter().enumerate() {
                if let (Some(before), Some(after)) = (cpu_before[index], cpu_ns(*pid)) {
                    cpu[index].push(after.saturating_sub(before) as f64 / self.calls as f64);
                }
            }
        }
        let cpu_ns_per_call = self
            .cpu_of
            .iter()
            .zip(cpu)
            .filter(|(_, samples)| !samples.is_empty())
            .map(|((label, _), samples)| (*label, median(&samples)))
            .collect();
        Ok(Some(Measured {
            scenario: self.name.clone(),
            unit: self.unit,
            calls_per_sample: self.calls,
            samples: rates,
            target: self.target,
            cpu_ns_per_call,
            allocations_per_call: None,
        }))
    }
}

/// On-CPU nanoseconds of every live thread of `pid` (this process for `None`), from
/// `/proc/<pid>/task/*/schedstat`; `None` where that is unavailable.
fn cpu_ns(pid: Option<u32>) -> Option<u64> {
    let process = pid.map_or_else(|| "self".to_string(), |p| p.to_string());
    let tasks = std::fs::read_dir(format!("/proc/{process}/task")).ok()?;
    let mut total = 0;
    for task in tasks.flatten() {
        let Ok(text) = std::fs::read_to_string(task.path().join("schedstat")) else {
            continue; // the thread ended meanwhile
        };
        total += text.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(total)
}

fn median(samples: &[f64]) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN)
}

/// One scenario's results.
pub struct Measured {
    pub scenario: String,
    pub unit: Unit,
    pub calls_per_sample: u64,
    /// Each timed sample's rate, in `unit`.
    pub samples: Vec<f64>,
    pub target: Option<f64>,
    /// Median CPU nanoseconds per call, by process label.
    pub cpu_ns_per_call: Vec<(&'static str, f64)>,
    /// Heap allocations per call, where the bench could count them.
    pub allocations_per_call: Option<f64>,
}

impl Measured {
    pub fn median(&self) -> f64 {
        median(&self.samples)
    }

    fn min(&self) -> f64 {
        self.samples.iter().copied().fold(f64::INFINITY, f64::min)
    }

    fn max(&self) -> f64 {
        self.samples
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max)
    }

    fn meets_target(&self) -> Option<bool> {
        self.target.map(|target| match self.unit {
            Unit::NanosPerCall => self.median() <= target,
            Unit::CallsPerSecond => self.median() >= target,
        })
    }

    fn print_json(&self) {
        let cpu: serde_json::Map<String, serde_json::Value> = self
            .cpu_ns_per_call
            .iter()
            .map(|(label, ns)| (label.to_string(), json!(round(*ns))))
            .collect();
        let line = json!({
            "bench": bench_name(),
            "scenario": self.scenario,
            "unit": self.unit.name(),
            "median": round(self.median()),
            "min": round(self.min()),
            "max": round(self.max()),
            "samples": self.samples.len(),
            "calls_per_sample": self.calls_per_sample,
            "target": self.target,
            "meets_target": self.meets_target(),
            "cpu_ns_per_call": cpu,
            "allocations_per_call": self.allocations_per_call.map(round),
        });
        println!("{line}");
    }
}

fn round(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

fn bench_name() -> String {
    std::env::args()
        .next()
        .and_then(|path| {
            let file = std::path::Path::new(&path)
                .file_stem()?
                .to_str()?
                .to_string();
            // Cargo names bench executables `<name>-<hash>`.
            Some(file.split('-').next().unwrap_or(&file).to_string())
        })
        .unwrap_or_default()
}

/// One JSON line per scenario, then a human-readable table of them.
pub fn report(results: &[Measured]) {
    for measured in results {
        measured.print_json();
    }
    println!();
    println!(
        "{:<42} {:>10} {:>10} {:>10} {:<8} {:>7} {:<4} {:<28} {:>7}",
        "scenario", "median", "min", "max", "unit", "target", "met", "cpu ns/call", "allocs"
    );
    for measured in results {
        let target = measured
            .target
            .map_or_else(|| "-".to_string(), |t| format!("{t}"));
        let met = match measured.meets_target() {
            Some(true) => "yes",
            Some(false) => "NO",
            None => "-",
        };
        let cpu = measured
            .cpu_ns_per_call
            .iter()
            .map(|(label, ns)| format!("{label} {ns:.0}"))
            .collect::<Vec<_>>()
            .join(", ");
        let allocations = measured
            .allocations_per_call
            .map_or_else(|| "-".to_string(), |a| format!("{a:.1}"));
        println!(
            "{:<42} {:>10.1} {:>10.1} {:>10.1} {:<8} {:>7} {met:<4} {cpu:<28} {allocations:>7}",
            measured.scenario,
            measured.median(),
            measured.min(),
            measured.max(),
            measured.unit.name(),
            target,
        );
    }
}
