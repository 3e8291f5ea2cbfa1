//! `tools/progress` through the real binary: `bash` output streams while the command runs,
//! in order, also from a Code Mode sub-call (with its `dispatchId`); a client tool's
//! `tools/reportProgress` reaches the front end; a client without `capabilities.progress`
//! gets none; and a 200 MB flood behind a client that does not read keeps the host small,
//! counts what it dropped, and still delivers the whole result.

use crate::support::raw::{RawHost, high_water_mark, wait_until_quiet};
use crate::support::wire::{Framing, Host, echo_spec};
use serde_json::{Value, json};
use std::time::Duration;

/// A command printing a line every 200 ms for 1 s.
const SLOW_LINES: &str = "for i in 1 2 3 4 5; do echo line$i; sleep 0.2; done";

fn bash_config(cwd: &std::path::Path) -> Value {
    json!({ "builtins": { "bash": { "cwd": cwd.display().to_string() } } })
}

fn host_with(progress: bool, config: Value) -> Host {
    Host::initialized(
        Framing::Ndjson,
        json!({ "executeTools": true, "progress": progress }),
        config,
    )
}

/// Every message that came before the response to `id`, and the response.
fn until_response(host: &mut Host, id: &Value) -> (Vec<Value>, Value) {
    let mut before = Vec::new();
    loop {
        let message = host
            .read()
            .expect("the host closed stdout before answering");
        if message.get("method").is_none() && &message["id"] == id {
            return (before, message);
        }
        before.push(message);
    }
}

fn progress_of(messages: &[Value]) -> Vec<Value> {
    messages
        .iter()
        .filter(|m| m["method"] == "tools/progress")
        .map(|m| m["params"].clone())
        .collect()
}

/// The concatenated text of `stream`'s output reports.
fn text_of(reports: &[Value], stream: &str) -> String {
    reports
        .iter()
        .filter(|r| r["kind"] == "output" && r["stream"] == stream)
        .filter_map(|r| r["text"].as_str())
        .collect()
}

#[test]
fn bash_output_streams_before_its_result_in_order() {
    let cwd = tempfile::tempdir().unwrap();
    let mut host = host_with(true, bash_config(cwd.path()));
    let id = host.start(
        "tools/execute",
        json!({ "callId": "slow", "name": "bash", "arguments": { "command": SLOW_LINES } }),
    );
    let (before, response) = until_response(&mut host, &id);
    assert_eq!(response["result"]["isError"], json!(false), "{response}");
    let reports = progress_of(&before);
    let output: Vec<&Value> = reports.iter().filter(|r| r["kind"] == "output").collect();
    assert!(
        output.len() >= 3,
        "{} output reports before the result: {reports:?}",
        output.len()
    );
    assert!(
        output
            .iter()
            .all(|r| r["callId"] == "slow" && r.get("dispatchId").is_none())
    );
    assert_eq!(
        text_of(&reports, "stdout"),
        "line1\nline2\nline3\nline4\nline5\n"
    );
    assert_eq!(host.finish(), 0);
}

#[test]
fn stderr_streams_as_its_own_stream() {
    let cwd = tempfile::tempdir().unwrap();
    let mut host = host_with(true, bash_config(cwd.path()));
    let id = host.start(
        "tools/execute",
        json!({ "callId": "both", "name": "bash",
            "arguments": { "command": "echo out; echo err >&2; echo 'é€'" } }),
    );
    let (before, _) = until_response(&mut host, &id);
    let reports = progress_of(&before);
    assert_eq!(text_of(&reports, "stdout"), "out\né€\n");
    assert_eq!(text_of(&reports, "stderr"), "err\n");
    assert_eq!(host.finish(), 0);
}

#[test]
fn a_sub_calls_bash_streams_with_its_dispatch_id() {
    let cwd = tempfile::tempdir().unwrap();
    let mut config = bash_config(cwd.path());
    config["tools"] = json!({ "mode": "code" });
    config["codeRuntime"] = json!({ "poolSize": 1 });
    let mut host = host_with(true, config);
    let program = format!(
        "await tools.bash({{ command: 'true' }});\n\
         const run = await tools.bash({{ command: {:?} }});\n\
         return run.exitCode;",
        SLOW_LINES
    );
    let id = host.start(
        "tools/execute",
        json!({ "callId": "outer", "name": "run_code",
            "arguments": { "code": program, "description": "stream" } }),
    );
    let (before, response) = until_response(&mut host, &id);
    assert_eq!(
        response["result"]["value"]["result"],
        json!(0),
        "{response}"
    );
    let reports = progress_of(&before);
    assert!(reports.len() >= 3, "{reports:?}");
    for report in &reports {
        assert_eq!(report["callId"], "outer", "{report}");
        assert_eq!(report["dispatchId"], "outer:code:2", "{report}");
    }
    assert_eq!(
        text_of(&reports, "stdout"),
        "line1\nline2\nline3\nline4\nline5\n"
    );
    assert_eq!(host.finish(), 0);
}

/// Registers an echo client tool, calls it, and answers its `client/executeTool` after
/// sending `reports` (each with the request's token unless it has one); returns what came
/// before the response, the response and the token.
fn client_tool_reporting(host: &mut Host, reports: &[Value]) -> (Vec<Value>, Value, Value) {
    let registered = host.request("tools/register", json!({ "tool": echo_spec("slow_echo") }));
    assert!(registered.get("result").is_some(), "{registered}");
    let id = host.start(
        "tools/execute",
        json!({ "callId": "client", "name": "slow_echo", "arguments": { "text": "hi" } }),
    );
    let (mut before, mut token) = (Vec::new(), Value::Null);
    loop {
        let message = host.read().expect("EOF before the response");
        if message["method"] == "client/executeTool" {
            token = message["params"]["token"].clone();
            for report in reports {
                let mut params = report.clone();
                if params.get("token").is_none() {
                    params["token"] = token.clone();
                }
                host.send(
                    &json!({ "jsonrpc": "2.0", "method": "tools/reportProgress", "params": params }),
                );
            }
            host.answer(&message, json!({ "value": "hi" }));
        } else if message.get("method").is_none() && message["id"] == id {
            return (before, message, token);
        } else {
            before.push(message);
        }
    }
}

#[test]
fn a_client_tools_reports_reach_the_front_end() {
    let mut host = host_with(true, json!({}));
    let (before, response, token) = client_tool_reporting(
        &mut host,
        &[
            json!({ "progress": 1, "total": 2, "message": "half" }),
            json!({ "token": "t999999", "progress": 5 }),
            json!({ "progress": "not a number" }),
            json!({ "progress": 2, "total": 2 }),
        ],
    );
    assert_eq!(response["result"]["value"], json!("hi"), "{response}");
    let reports = progress_of(&before);
    assert_eq!(
        reports,
        [
            json!({ "callId": "client", "kind": "progress", "progress": 1.0, "total": 2.0,
                "message": "half" }),
            json!({ "callId": "client", "kind": "progress", "progress": 2.0, "total": 2.0 }),
        ]
    );
    // A report after the call ended goes nowhere, and the host keeps serving.
    host.send(&json!({ "jsonrpc": "2.0", "method": "tools/reportProgress",
        "params": { "token": token, "progress": 9 } }));
    let tools = host.request("tools/schemas", json!({}));
    assert!(tools.get("result").is_some(), "{tools}");
    assert!(progress_of(&host.drain("tools/progress")).is_empty());
    assert_eq!(host.finish(), 0);
}

#[test]
fn a_client_without_the_capability_gets_no_progress() {
    let cwd = tempfile::tempdir().unwrap();
    let mut host = host_with(false, bash_config(cwd.path()));
    let id = host.start(
        "tools/execute",
        json!({ "callId": "quiet", "name": "bash", "arguments": { "command": SLOW_LINES } }),
    );
    let (mut before, response) = until_response(&mut host, &id);
    assert_eq!(response["result"]["isError"], json!(false), "{response}");
    let (more, _, _) = client_tool_reporting(&mut host, &[json!({ "progress": 1 })]);
    before.extend(more);
    assert!(progress_of(&before).is_empty(), "{before:?}");
    host.close_stdin();
    let rest = host.read_to_end();
    assert!(progress_of(&rest).is_empty(), "{rest:?}");
}

const FLOOD_BYTES: u64 = 200 << 20;

#[test]
fn a_flood_behind_a_reader_that_does_not_read_keeps_the_host_small() {
    let cwd = tempfile::tempdir().unwrap();
    let mut host = RawHost::initialized_with(json!({ "progress": true }), bash_config(cwd.path()));
    let pid = host.pid();
    let idle = high_water_mark(pid);
    let command = format!("head -c {FLOOD_BYTES} /dev/zero | tr '\\0' x");
    host.send(
        &json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/execute",
        "params": { "callId": "flood", "name": "bash",
            "arguments": { "command": command, "timeoutMs": 600000 } } }),
    );
    // The client reads nothing until the host has done the work.
    wait_until_quiet(pid, Duration::from_secs(300));
    let grown = high_water_mark(pid).saturating_sub(idle);
    assert!(
        grown < 64 << 20,
        "the host grew by {} MiB over idle during a 200 MB flood",
        grown >> 20
    );
    let (mut shown, mut dropped, mut told_dropped) = (0u64, 0u64, false);
    let response = loop {
        let message = host.next().expect("EOF before the response");
        if message["method"] == "tools/progress" {
            let report = &message["params"];
            assert_eq!(report["callId"], "flood");
            shown += report["text"].as_str().map_or(0, |t| t.len() as u64);
            if let Some(bytes) = report["droppedBytes"].as_u64() {
                dropped += bytes;
                told_dropped = true;
            }
        } else if message["id"] == 1 {
            break message;
        }
    };
    assert!(told_dropped, "the drops were not reported");
    assert_eq!(
        shown + dropped,
        FLOOD_BYTES,
        "reported output does not add up"
    );
    let value = &response["result"]["value"];
    assert_eq!(value["exitCode"], json!(0), "{response:.500}");
    assert_eq!(
        value["stdoutSpill"]["bytes"],
        json!(FLOOD_BYTES),
        "{value:.500}"
    );
    let RawHost {
        mut child, stdin, ..
    } = host;
    drop(stdin);
    assert!(child.wait().unwrap().success());
}
