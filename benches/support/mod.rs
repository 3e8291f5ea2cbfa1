//! Measurement and reporting shared by the benches: repeated samples, their median, one
//! machine-readable JSON line per scenario and a human-readable table at the end.

#![allow(dead_code, clippy::print_stdout)]

use serde_json::json;
use std::time::{Duration, Instant};

/// Whether a larger number is better (throughput) or worse (latency).
#[derive(Clone, Copy, Debug)]
pub enum Unit {
    /// Nanoseconds per call (lower is better).
    NanosPerCall,
    /// Calls per second (higher is better).
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

/// One scenario's samples, each the rate over `calls` calls.
pub struct Measured {
    pub scenario: String,
    pub unit: Unit,
    pub calls_per_sample: u64,
    pub samples: Vec<f64>,
    /// The target the README states, for the table's last column.
    pub target: Option<f64>,
}

impl Measured {
    /// Times `samples` runs of `sample` (each performing `calls` calls) after one warm-up run.
    pub fn run(
        scenario: &str,
        unit: Unit,
        calls: u64,
        samples: usize,
        target: Option<f64>,
        mut sample: impl FnMut() -> anyhow::Result<()>,
    ) -> anyhow::Result<Measured> {
        sample()?;
        let mut rates = Vec::with_capacity(samples);
        for _ in 0..samples {
            let started = Instant::now();
            sample()?;
            rates.push(unit.of(calls, started.elapsed()));
        }
        let measured = Measured {
            scenario: scenario.to_string(),
            unit,
            calls_per_sample: calls,
            samples: rates,
            target,
        };
        measured.print_json();
        Ok(measured)
    }

    pub fn median(&self) -> f64 {
        let mut sorted = self.samples.clone();
        sorted.sort_by(f64::total_cmp);
        sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN)
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

/// The human-readable summary of every scenario.
pub fn print_table(results: &[Measured]) {
    println!();
    println!(
        "{:<44} {:>12} {:>12} {:>12}  {:<8} {:>10}  met",
        "scenario", "median", "min", "max", "unit", "target"
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
        println!(
            "{:<44} {:>12.1} {:>12.1} {:>12.1}  {:<8} {:>10}  {met}",
            measured.scenario,
            measured.median(),
            measured.min(),
            measured.max(),
            measured.unit.name(),
            target,
        );
    }
}
