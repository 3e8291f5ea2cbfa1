//! What the TypeScript and Python hostile suites share: the answer of a failed run, the run
//! that proves the host still serves, and the scenarios both languages must survive, each
//! given that language's programs.

use super::{FRAMINGS, Framing, Host, any_spec, with_method};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// How late the runtime may enforce a budget (the contract).
pub const ENFORCEMENT_SLACK: Duration = Duration::from_millis(100);
/// What a machine busy with other work (`.ci/stress`: two CPU hogs beside the suite, which
/// itself runs tests in parallel) may add to what the client measures: a Python budget counts
/// the interpreter's CPU time, which a core shared with others accrues slowly, and every
/// hand-over between threads and processes waits for a core. A runaway the budget missed
/// would spin until the wall budget, whose different message fails the test anyway; this
/// only keeps the bound from failing for slowness.
pub const BUSY_MACHINE: Duration = Duration::from_secs(5);

/// The `run_code` result of a failed run.
pub fn failure(message: &str) -> Value {
    json!({
        "isError": true,
        "error": { "message": message, "info": { "name": "CodeRunFailedError", "code": "CODE_RUN_FAILED" } },
        "content": [{ "type": "text", "text": format!("Error: {message}") }]
    })
}

/// Runs `program` (which logs `fine` and returns `"still serving"`) and expects it to succeed.
pub fn still_serving(host: &mut Host, program: &str) {
    let result = host.run_code("after", program);
    assert_eq!(
        result,
        json!({ "isError": false, "value": { "logs": ["fine"], "result": "still serving" },
            "content": [{ "type": "text", "text": "fine\nstill serving" }] })
    );
}

/// A compute budget and what the client may measure beyond it.
pub struct ComputeBudget {
    pub compute_ms: u64,
    /// Beyond the runtime's own budget: handing the run over, ending it, writing the answer,
    /// pipe I/O and scheduling of an unoptimized build on a shared two-core machine.
    pub process_margin: Duration,
}

/// Under `config` with the budget's `computeMs`, each runaway program, in both framings, ends
/// as `timeout` within the compute budget plus the enforcement slack (and `process_margin`, and
/// what a busy machine adds), and the host keeps serving.
pub fn runaway_compute_times_out(
    config: &Value,
    budget: &ComputeBudget,
    programs: &[&str],
    serving: &str,
) {
    let expected = format!(
        "code run failed (timeout): compute budget of {} ms exhausted",
        budget.compute_ms
    );
    let bound = Duration::from_millis(budget.compute_ms)
        + ENFORCEMENT_SLACK
        + budget.process_margin
        + BUSY_MACHINE;
    let mut config = config.clone();
    super::merge(
        &mut config,
        json!({ "codeRuntime": { "computeMs": budget.compute_ms } }),
    );
    for framing in FRAMINGS {
        let mut host = Host::code_mode(framing, "code", config.clone());
        for program in programs {
            // Warm up: the timed run must not wait for an isolate or interpreter to start.
            still_serving(&mut host, serving);
            let started = Instant::now();
            let result = host.run_code("spin", program);
            let elapsed = started.elapsed();
            assert_eq!(result, failure(&expected), "{framing:?}:\n{program}");
            assert!(
                elapsed <= bound,
                "{elapsed:?} > {bound:?} for {framing:?}:\n{program}"
            );
        }
        still_serving(&mut host, serving);
        assert_eq!(host.finish(), 0);
    }
}

/// A run that logs `waiting` and then awaits `tools.hang({})` (a client tool never answered)
/// ends when the wall budget of `wall_ms` does, with its in-flight sub-call cancelled at the
/// client before the answer. Returns the run's transcript.
pub fn wall_budget_ends_a_waiting_run(host: &mut Host, program: &str, wall_ms: u64) -> Vec<Value> {
    host.register(any_spec("hang", true));
    host.send_run_code(json!("outer"), "wait", program);
    let (response, transcript) = host.serve_until(&json!("outer"), |_| None);
    assert_eq!(
        response["result"],
        failure(&format!(
            "code run failed (timeout): wall-clock budget of {wall_ms} ms exhausted\nCaptured output:\nwaiting"
        ))
    );
    let call = with_method(&transcript, "client/executeTool")[0];
    let cancel = with_method(&transcript, "$/cancelRequest");
    assert_eq!(cancel.len(), 1);
    assert_eq!(cancel[0]["params"]["id"], call["id"]);
    transcript
}

/// `program` prints `line 0`, `line 1`, … forever: lines stream while their compact JSON
/// array fits `cap`, then nothing more; the run ends as `output-limit` keeping what fits
/// beside the failure's own message (whole lines, then the fitting prefix of the next).
pub fn flood_stops_at_the_cap(host: &mut Host, framing: Framing, program: &str, cap: usize) {
    host.inbox.clear();
    host.send_run_code(json!("flood"), "flood", program);
    let (response, transcript) = host.serve_until(&json!("flood"), |_| None);
    let fitting = |budget: usize| {
        let mut kept: Vec<String> = Vec::new();
        loop {
            let mut next = kept.clone();
            next.push(format!("line {}", kept.len()));
            if serde_json::to_string(&next).unwrap().len() > budget {
                break;
            }
            kept = next;
        }
        kept
    };
    let diagnostic = format!("outer output exceeded {cap} bytes");
    let budget = cap - serde_json::to_string(&diagnostic).unwrap().len();
    let mut logs = fitting(budget);
    // The first line that does not fit keeps its longest fitting prefix (ASCII here).
    let used = serde_json::to_string(&logs).unwrap().len();
    let room = budget.saturating_sub(used + usize::from(!logs.is_empty()));
    let next = format!("line {}", logs.len());
    let prefix = &next[..room.saturating_sub(2).min(next.len())];
    if !prefix.is_empty() {
        logs.push(prefix.to_owned());
    }
    let kept = fitting(cap);
    let message = format!(
        "code run failed (output-limit): {diagnostic}\nCaptured output:\n{}",
        logs.join("\n")
    );
    assert_eq!(
        response["result"],
        failure(&message),
        "{framing:?}:\n{program}"
    );
    let streamed: Vec<&str> = with_method(&transcript, "code/log")
        .iter()
        .map(|m| m["params"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(streamed, kept, "nothing streams past the cap");
}
