//! Runs never wait on each other: `poolSize` is how many isolates are kept warm, not how many
//! runs may be alive. Programs whose bindings meet at a client tool the client answers only
//! once every run has dispatched it all get their answers; past `maxConcurrentRuns` a run is
//! refused at once.

use crate::support::code::{Framing, Host, any_spec};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// How soon after the client's answers every run must have answered (the bar).
const ANSWERED_WITHIN: Duration = Duration::from_secs(1);

/// A Code Mode host with a concurrency-safe client tool `gate`.
fn host_with_gate(code_runtime: Value) -> Host {
    let mut host = Host::code_mode(
        Framing::Ndjson,
        "code",
        json!({ "codeRuntime": code_runtime }),
    );
    host.register(any_spec("gate", true));
    host
}

/// Starts `runs` runs that each wait at the gate, and reads until all of them have dispatched
/// it: a run left queued behind the others never does (the read's patience then fails the
/// test). Returns the gate requests.
fn dispatch_all(host: &mut Host, runs: usize) -> Vec<Value> {
    for n in 0..runs {
        host.send_run_code(
            json!(format!("run-{n}")),
            &format!("run-{n}"),
            &format!("const opened = await tools.gate({{ n: {n} }});\nreturn [{n}, opened];"),
        );
    }
    let mut gates = Vec::new();
    while gates.len() < runs {
        let message = host.next_message();
        if message["method"] == "client/executeTool" {
            gates.push(message);
        } else {
            assert!(message.get("method").is_some(), "answered early: {message}");
        }
    }
    gates
}

/// Opens every gate, then reads every run's answer, within [`ANSWERED_WITHIN`] of the last
/// gate answered.
fn open_all(host: &mut Host, gates: &[Value]) {
    for gate in gates {
        host.answer(gate, json!({ "value": "open" }));
    }
    let opened = Instant::now();
    let mut answered = 0;
    while answered < gates.len() {
        let message = host.next_message();
        if message.get("method").is_some() {
            continue;
        }
        let id = message["id"].as_str().unwrap_or_default().to_owned();
        let n: u64 = id.trim_start_matches("run-").parse().unwrap_or(u64::MAX);
        assert_eq!(
            message["result"]["value"]["result"],
            json!([n, "open"]),
            "{message}"
        );
        answered += 1;
    }
    assert!(
        opened.elapsed() < ANSWERED_WITHIN,
        "{} runs answered {:?} after the client opened their gates",
        gates.len(),
        opened.elapsed()
    );
}

#[test]
fn three_runs_meet_with_two_isolates_kept_warm() {
    let mut host = host_with_gate(json!({ "poolSize": 2 }));
    let gates = dispatch_all(&mut host, 3);
    open_all(&mut host, &gates);
    assert_eq!(host.finish(), 0);
}

#[test]
fn twenty_runs_meet_with_one_isolate_kept_warm() {
    let mut host = host_with_gate(json!({ "poolSize": 1 }));
    let gates = dispatch_all(&mut host, 20);
    open_all(&mut host, &gates);
    // And again: the runs' isolates are gone and the host keeps serving as many.
    let gates = dispatch_all(&mut host, 20);
    open_all(&mut host, &gates);
    assert_eq!(host.finish(), 0);
}

#[test]
fn python_runs_meet_with_one_interpreter_kept_warm() {
    let mut host = host_with_gate(json!({ "poolSize": 1, "language": "python" }));
    for n in 0..3 {
        host.send_run_code(
            json!(format!("run-{n}")),
            &format!("run-{n}"),
            &format!("opened = await tools.gate({{'n': {n}}})\nreturn [{n}, opened]"),
        );
    }
    let mut gates = Vec::new();
    while gates.len() < 3 {
        let message = host.next_message();
        if message["method"] == "client/executeTool" {
            gates.push(message);
        } else {
            assert!(message.get("method").is_some(), "answered early: {message}");
        }
    }
    open_all(&mut host, &gates);
    assert_eq!(host.finish(), 0);
}

/// What a run refused at the cap answers.
fn refused(cap: usize) -> String {
    format!(
        "run_code refused: {cap} runs are already in progress, the most \
         codeRuntime.maxConcurrentRuns allows; try again when one has finished"
    )
}

#[test]
fn a_run_past_max_concurrent_runs_fails_at_once_and_the_others_go_on() {
    let mut host = host_with_gate(json!({ "poolSize": 1, "maxConcurrentRuns": 2 }));
    let gates = dispatch_all(&mut host, 2);
    let sent = Instant::now();
    let response = host.request(
        "tools/execute",
        json!({ "callId": "third", "name": "run_code",
            "arguments": { "code": "return 3", "description": "one too many" } }),
    );
    // At once: nothing it could wait for would come before the client answers the gates.
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "{:?}",
        sent.elapsed()
    );
    assert_eq!(response["result"]["isError"], true, "{response}");
    assert_eq!(
        response["result"]["error"]["message"],
        json!(refused(2)),
        "{response}"
    );
    open_all(&mut host, &gates);
    // The two that ended make room again.
    let gates = dispatch_all(&mut host, 2);
    open_all(&mut host, &gates);
    assert_eq!(host.finish(), 0);
}

/// Programs sent while the cap is reached: each a mebibyte.
const HELD_BACK: usize = 100;
/// What those requests may add to the host's peak memory: a few of them in flight at once,
/// never all of them (before, every one waited holding its program several times over: 300
/// took the host from 61 MB to 1,375 MB).
const HELD_BACK_GROWTH_KIB: u64 = 64 * 1024;

#[test]
fn runs_past_the_cap_hold_nothing_while_the_others_run() {
    let mut host = host_with_gate(json!({ "poolSize": 1, "maxConcurrentRuns": 2 }));
    let gates = dispatch_all(&mut host, 2);
    let before = host.peak_memory_kib();
    let big = format!("return '{}';", "x".repeat(1 << 20));
    for n in 0..HELD_BACK {
        host.send_run_code(json!(format!("big-{n}")), &format!("big-{n}"), &big);
    }
    let mut refusals = 0;
    while refusals < HELD_BACK {
        let message = host.next_message();
        if message.get("method").is_some() {
            continue;
        }
        assert_eq!(
            message["result"]["error"]["message"],
            json!(refused(2)),
            "{}",
            message["id"]
        );
        refusals += 1;
    }
    let growth = host.peak_memory_kib().saturating_sub(before);
    assert!(
        growth < HELD_BACK_GROWTH_KIB,
        "{HELD_BACK} programs of a mebibyte past the cap raised the host's peak memory by {growth} KiB"
    );
    open_all(&mut host, &gates);
    assert_eq!(host.finish(), 0);
}
