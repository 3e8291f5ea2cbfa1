//! `tools/progress` for a client that asked for it (`capabilities.progress`): live output and
//! progress of running calls, observe-only like `tools/result`. When the client reads too
//! slowly, output reports are dropped and each call's drops are counted and told to it; a
//! client tool's own `tools/reportProgress` is routed to its call by execution token.

use crate::json;
use crate::pipeline::hooks::ResultObserver;
use crate::tool::{
    ExecutionToken, Progress, ProgressEvent, ProgressSink, ToolExecution, ToolExecutionResult,
    progress_ids,
};
use crate::transport::Outbox;
use dsh_tools_protocol::{
    OutputReport, ProgressAmount, ProgressNotification, ProgressReport, ReportProgressParams,
};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

const METHOD: &str = "tools/progress";
/// Queued bytes past which live output is dropped (and counted): output can arrive faster
/// than any client reads, and what a front end shows of a flood is its latest lines.
const OUTPUT_HIGH_WATER: usize = 2 << 20;

/// Live output bytes per second one call may send, after a first [`LIVE_BURST`]: a view for
/// people, who read no faster; the rest is dropped and counted (the result and its spill
/// file keep everything). Without it a flood would cost the host and the client a
/// second copy of every byte (Codex caps a call's output deltas likewise).
const LIVE_RATE: f64 = (4 << 20) as f64;
/// Live output bytes a call may send at once.
const LIVE_BURST: f64 = (1 << 20) as f64;

/// Sends every call's live reports to the client.
pub struct ProgressNotifier {
    outbox: Outbox,
    /// What is kept of each running call's live output, until its result.
    calls: Mutex<HashMap<ExecutionToken, CallOutput>>,
}

/// One call's live-output state.
#[derive(Default)]
struct CallOutput {
    /// Output reports left out, until they are told.
    dropped: Dropped,
    /// Its allowance, from its first output report on.
    allowance: Option<Allowance>,
}

/// A token bucket of live-output bytes.
struct Allowance {
    bytes: f64,
    at: Instant,
}

impl ProgressNotifier {
    /// Whether `bytes` more of live output fit `execution`'s allowance (taken if so). A
    /// report larger than the burst goes when the bucket is not empty, leaving a debt.
    fn allows(&self, execution: &ToolExecution, bytes: usize) -> bool {
        self.with_allowance(execution, |allowance| {
            let allowed = *allowance > 0.0;
            if allowed {
                *allowance -= bytes as f64;
            }
            allowed
        })
    }

    /// `visit` of `execution`'s allowance, refilled for the time since it was last seen.
    fn with_allowance<T>(&self, execution: &ToolExecution, visit: impl FnOnce(&mut f64) -> T) -> T {
        let now = Instant::now();
        let mut calls = self.calls.lock();
        let call = calls.entry(execution.token).or_default();
        let allowance = call.allowance.get_or_insert(Allowance {
            bytes: LIVE_BURST,
            at: now,
        });
        let earned = now.duration_since(allowance.at).as_secs_f64() * LIVE_RATE;
        allowance.bytes = (allowance.bytes + earned).min(LIVE_BURST);
        allowance.at = now;
        visit(&mut allowance.bytes)
    }
}

#[derive(Clone, Copy, Default)]
struct Dropped {
    reports: u64,
    bytes: u64,
}

impl ProgressNotifier {
    pub fn new(outbox: Outbox) -> Arc<Self> {
        Arc::new(ProgressNotifier {
            outbox,
            calls: Mutex::new(HashMap::new()),
        })
    }

    /// The `{ kind: "output", dropped }` report of what `execution` lost so far, if anything.
    fn take_dropped(&self, execution: &ToolExecution) -> Option<ProgressNotification> {
        let mut calls = self.calls.lock();
        let dropped = std::mem::take(&mut calls.get_mut(&execution.token)?.dropped);
        drop(calls);
        dropped_report(execution, dropped)
    }
}

/// The `{ kind: "output", dropped }` report of `dropped`, unless nothing was.
fn dropped_report(execution: &ToolExecution, dropped: Dropped) -> Option<ProgressNotification> {
    if dropped.reports == 0 {
        return None;
    }
    Some(notification(
        execution,
        ProgressReport::Output(OutputReport {
            dropped: Some(dropped.reports),
            dropped_bytes: Some(dropped.bytes),
            ..OutputReport::default()
        }),
    ))
}

fn notification(execution: &ToolExecution, report: ProgressReport) -> ProgressNotification {
    let (call_id, dispatch_id) = progress_ids(execution);
    ProgressNotification {
        call_id: call_id.to_string(),
        dispatch_id: dispatch_id.map(str::to_string),
        report,
    }
}

/// The params of an output report (`ProgressNotification` with an `OutputReport`, fields
/// in its order), written in place: a flood's text is escaped once, into the queued buffer.
fn write_output(out: &mut String, execution: &ToolExecution, stream: &str, text: &str) {
    let (call_id, dispatch_id) = progress_ids(execution);
    out.push_str("{\"callId\":");
    json::write_json_string(out, call_id);
    if let Some(dispatch_id) = dispatch_id {
        out.push_str(",\"dispatchId\":");
        json::write_json_string(out, dispatch_id);
    }
    out.push_str(",\"kind\":\"output\",\"stream\":");
    json::write_json_string(out, stream);
    out.push_str(",\"text\":");
    json::write_json_string(out, text);
    out.push('}');
}

impl ProgressSink for ProgressNotifier {
    fn wants_output(&self, execution: &ToolExecution) -> bool {
        self.with_allowance(execution, |allowance| *allowance > 0.0)
    }

    fn output_skipped(&self, execution: &ToolExecution, bytes: usize) {
        let bytes = bytes as u64;
        self.count_dropped(execution, Dropped { reports: 1, bytes });
    }

    fn report(&self, execution: &ToolExecution, event: ProgressEvent) {
        match event {
            ProgressEvent::Output { stream, text } => {
                if !self.allows(execution, text.len()) {
                    let bytes = text.len() as u64;
                    self.count_dropped(execution, Dropped { reports: 1, bytes });
                    return;
                }
                // The client is told what it missed before it sees what comes after.
                if let Some(missed) = self.take_dropped(execution)
                    && !self.outbox.notify_observed(METHOD, &missed)
                {
                    self.count_dropped(execution, missed_count(&missed));
                }
                let bytes = text.len() as u64;
                let capacity = text.len() + 128;
                let sent =
                    self.outbox
                        .notify_observed_with(OUTPUT_HIGH_WATER, METHOD, capacity, |out| {
                            write_output(out, execution, stream.name(), &text)
                        });
                if !sent {
                    self.count_dropped(execution, Dropped { reports: 1, bytes });
                }
            }
            ProgressEvent::Progress {
                progress,
                total,
                message,
            } => {
                let report = ProgressReport::Progress(ProgressAmount {
                    progress,
                    total,
                    message,
                });
                self.outbox
                    .notify_observed(METHOD, &notification(execution, report));
            }
        }
    }
}

impl ProgressNotifier {
    fn count_dropped(&self, execution: &ToolExecution, more: Dropped) {
        let mut calls = self.calls.lock();
        let dropped = &mut calls.entry(execution.token).or_default().dropped;
        dropped.reports += more.reports;
        dropped.bytes += more.bytes;
    }
}

fn missed_count(missed: &ProgressNotification) -> Dropped {
    match &missed.report {
        ProgressReport::Output(output) => Dropped {
            reports: output.dropped.unwrap_or(0),
            bytes: output.dropped_bytes.unwrap_or(0),
        },
        ProgressReport::Progress(_) => Dropped::default(),
    }
}

impl ResultObserver for ProgressNotifier {
    /// A call that lost output reports says so before its result, whatever the queue holds
    /// (one small message per such call).
    fn observe(&self, execution: &ToolExecution, _result: &ToolExecutionResult) {
        let call = self.calls.lock().remove(&execution.token);
        if let Some(missed) = call.and_then(|call| dropped_report(execution, call.dropped)) {
            self.outbox.notify(METHOD, &missed);
        }
    }
}

/// The live client-tool calls a `tools/reportProgress` may name, by execution token.
#[derive(Default)]
pub struct ProgressRoutes(Mutex<HashMap<String, Progress>>);

impl ProgressRoutes {
    /// Routes reports for `token` to `progress` until the returned guard is dropped.
    pub fn open(self: &Arc<Self>, token: String, progress: Progress) -> Option<Route> {
        if !progress.is_live() {
            return None;
        }
        self.0.lock().insert(token.clone(), progress);
        Some(Route {
            routes: self.clone(),
            token,
        })
    }

    /// Hands one client report to its call; a finished or unknown call's is ignored.
    pub fn deliver(&self, report: ReportProgressParams) {
        let progress = self.0.lock().get(&report.token).cloned();
        match progress {
            Some(progress) => progress.progress(report.progress, report.total, report.message),
            None => tracing::debug!(
                "tools/reportProgress for {}, which is not running",
                report.token
            ),
        }
    }
}

/// An open route; closing it (drop) ends the call's client reports.
pub struct Route {
    routes: Arc<ProgressRoutes>,
    token: String,
}

impl Drop for Route {
    fn drop(&mut self) {
        self.routes.0.lock().remove(&self.token);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::tool::{ExecutionToken, Signal};

    fn execution(call_id: &str, parent: Option<ExecutionToken>) -> ToolExecution {
        ToolExecution {
            token: ExecutionToken::fresh(),
            call_id: call_id.into(),
            name: "bash".into(),
            arguments: Arc::new(serde_json::json!({})),
            agent: None,
            parent,
            signal: Signal::never(),
        }
    }

    #[tokio::test]
    async fn a_call_sends_a_burst_then_waits_and_each_call_has_its_own_allowance() {
        let (output, _input) = tokio::io::duplex(1 << 16);
        let (outbox, _writer) =
            crate::transport::spawn_writer(output, crate::transport::framing::Framing::Ndjson);
        let notifier = ProgressNotifier::new(outbox);
        let (first, second) = (execution("a", None), execution("b", None));
        // One report larger than the burst goes, leaving a debt of a burst (250 ms).
        assert!(notifier.allows(&first, 2 * LIVE_BURST as usize));
        assert!(!notifier.allows(&first, 1), "the burst is spent");
        assert!(
            !notifier.wants_output(&first),
            "a spent call's source may skip"
        );
        assert!(notifier.allows(&second, 1), "another call's is not");
        assert!(notifier.wants_output(&second), "asking takes nothing");
        notifier.output_skipped(&first, 5000);
        let told = notifier
            .take_dropped(&first)
            .map(|told| missed_count(&told));
        assert_eq!(told.map(|d| (d.reports, d.bytes)), Some((1, 5000)));
        notifier.observe(
            &first,
            &ToolExecutionResult::failure(crate::tool::ToolError::new("x")),
        );
        assert!(
            notifier.allows(&first, 1),
            "a settled call's allowance is gone"
        );
    }

    #[test]
    fn output_written_in_place_matches_the_wire_type() {
        let text = "y\"\\\n\u{1}é😀".repeat(3);
        for execution in [
            execution("call", None),
            execution("outer:code:2", Some(ExecutionToken::fresh())),
        ] {
            let mut out = String::new();
            write_output(&mut out, &execution, "stderr", &text);
            let report = ProgressReport::Output(OutputReport {
                stream: Some("stderr".into()),
                text: Some(text.clone()),
                ..OutputReport::default()
            });
            let expected = serde_json::to_string(&notification(&execution, report)).unwrap();
            assert_eq!(out, expected);
        }
    }
}
