//! Per-tool metrics (`tools/metrics`): call and error counts and latency percentiles of the
//! dispatch (wrappers inside this one and the body), kept in a bounded window per tool.

use crate::pipeline::Next;
use crate::pipeline::hooks::{Dispatch, DispatchOutcome, ExecuteWrapper};
use futures::future::BoxFuture;
use parking_lot::Mutex;
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

/// Latencies kept per tool for percentiles.
const WINDOW: usize = 1024;

#[derive(Default)]
struct ToolStats {
    calls: u64,
    errors: u64,
    latencies_us: VecDeque<u64>,
}

/// One tool's numbers as `tools/metrics` reports them.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolMetrics {
    /// Tool name.
    pub name: String,
    /// Dispatched calls.
    pub calls: u64,
    /// Of which failed.
    pub errors: u64,
    /// Median dispatch latency over the last 1,024 calls (ms).
    pub p50_ms: f64,
    /// 99th percentile (ms).
    pub p99_ms: f64,
    /// Connections of its commands the sandbox's proxy refused (`bash` under a
    /// `sandbox.network` policy; absent when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub blocked_connections: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The shared metrics table.
#[derive(Default)]
pub struct Metrics {
    tools: Mutex<BTreeMap<String, ToolStats>>,
}

impl Metrics {
    /// A snapshot, by tool name.
    pub fn snapshot(&self) -> Vec<ToolMetrics> {
        let tools = self.tools.lock();
        tools
            .iter()
            .map(|(name, stats)| {
                let mut sorted: Vec<u64> = stats.latencies_us.iter().copied().collect();
                sorted.sort_unstable();
                let at = |q: f64| {
                    sorted
                        .get(((sorted.len() as f64 - 1.0) * q).round() as usize)
                        .map_or(0.0, |us| *us as f64 / 1000.0)
                };
                ToolMetrics {
                    name: name.clone(),
                    calls: stats.calls,
                    errors: stats.errors,
                    p50_ms: at(0.5),
                    p99_ms: at(0.99),
                    blocked_connections: 0,
                }
            })
            .collect()
    }

    fn record(&self, name: &str, failed: bool, latency_us: u64) {
        let mut tools = self.tools.lock();
        let stats = tools.entry(name.to_string()).or_default();
        stats.calls += 1;
        stats.errors += u64::from(failed);
        if stats.latencies_us.len() == WINDOW {
            stats.latencies_us.pop_front();
        }
        stats.latencies_us.push_back(latency_us);
    }
}

/// Records every dispatch into [`Metrics`].
pub struct MetricsWrapper(pub Arc<Metrics>);

impl ExecuteWrapper for MetricsWrapper {
    fn wrap(&self, dispatch: Dispatch, next: Next) -> BoxFuture<'static, DispatchOutcome> {
        let metrics = self.0.clone();
        let name = dispatch.execution.name.clone();
        Box::pin(async move {
            let started = Instant::now();
            let outcome = next.run(dispatch).await;
            let latency = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
            metrics.record(&name, outcome.is_err(), latency);
            outcome
        })
    }
}
