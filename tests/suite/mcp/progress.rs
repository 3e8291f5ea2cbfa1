//! Progress of ingested calls, through the real binary: a client with
//! `capabilities.progress` calling `server-everything`'s `trigger-long-running-operation`
//! (over stdio and over Streamable HTTP, natively and from Code Mode) receives each of the
//! server's `notifications/progress` as a `tools/progress` report of that call, in order
//! and before the result.

#![allow(clippy::unwrap_used)]

use crate::support::http::Everything;
use crate::support::mcp::{PATIENCE, all_running, everything};
use crate::support::wire::{Framing, Host};
use dsh_tools_protocol::McpServerStatus;
use serde_json::{Value, json};

const LONG: &str = "mcp__ev__trigger-long-running-operation";
const STEPS: u64 = 4;

/// A host with `ev` ingested, initialized with `capabilities`, once `ev` runs.
fn host_with(server: Value, capabilities: Value) -> Host {
    let config = json!({ "tools": { "mode": "both" }, "mcpServers": { "ev": server } });
    let mut host = Host::initialized(Framing::Ndjson, capabilities, config);
    let deadline = std::time::Instant::now() + PATIENCE;
    loop {
        let answer = host.request("mcp/status", json!({}));
        let status: Vec<McpServerStatus> =
            serde_json::from_value(answer["result"].clone()).unwrap();
        if all_running(&status) {
            return host;
        }
        assert!(std::time::Instant::now() < deadline, "{status:?}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Runs `name` as call `call_id` and returns its result and the `tools/progress` reports
/// that arrived before it.
fn execute(host: &mut Host, call_id: &str, name: &str, arguments: Value) -> (Value, Vec<Value>) {
    host.drain("tools/progress");
    let answer = host.request(
        "tools/execute",
        json!({ "callId": call_id, "name": name, "arguments": arguments }),
    );
    let reports = host
        .drain("tools/progress")
        .into_iter()
        .map(|n| n["params"].clone())
        .collect();
    (answer["result"].clone(), reports)
}

/// Asserts `reports` are the server's steps `1..=STEPS` of `STEPS`, all for `call_id` (and
/// `dispatch`, when a sub-call reports).
fn assert_steps(reports: &[Value], call_id: &str, dispatch: Option<&str>) {
    let steps: Vec<Value> = reports
        .iter()
        .map(|r| json!([r["kind"], r["progress"], r["total"]]))
        .collect();
    let expected: Vec<Value> = (1..=STEPS)
        .map(|i| json!(["progress", i as f64, STEPS as f64]))
        .collect();
    assert_eq!(steps, expected, "{reports:#?}");
    for report in reports {
        assert_eq!(report["callId"], call_id, "{report}");
        match dispatch {
            Some(prefix) => assert!(
                report["dispatchId"]
                    .as_str()
                    .is_some_and(|id| id.starts_with(prefix)),
                "{report}"
            ),
            None => assert!(report.get("dispatchId").is_none(), "{report}"),
        }
    }
}

fn arguments() -> Value {
    json!({ "duration": 0.4, "steps": STEPS })
}

fn assert_completed(result: &Value) {
    assert_eq!(result["isError"], false, "{result}");
    let text = result.to_string();
    assert!(
        text.contains("Long running operation completed"),
        "{result}"
    );
}

#[test]
fn a_stdio_servers_progress_reaches_the_client_natively_and_from_code_mode() {
    let mut host = host_with(everything(), json!({ "progress": true }));
    let (result, reports) = execute(&mut host, "long", LONG, arguments());
    assert_completed(&result);
    assert_steps(&reports, "long", None);
    let program = format!(r#"return await tools["{LONG}"]({{ duration: 0.4, steps: {STEPS} }});"#);
    let (result, reports) = execute(
        &mut host,
        "prog",
        "run_code",
        json!({ "code": program, "description": "a long operation" }),
    );
    assert_completed(&result);
    assert_steps(&reports, "prog", Some("prog:code:"));
    // A call that reported nothing leaves no stale route: the next one starts afresh.
    let (result, reports) = execute(&mut host, "again", LONG, arguments());
    assert_completed(&result);
    assert_steps(&reports, "again", None);
}

#[test]
fn an_http_servers_progress_reaches_the_client() {
    let everything = Everything::start();
    let mut host = host_with(
        json!({ "url": everything.url() }),
        json!({ "progress": true }),
    );
    let (result, reports) = execute(&mut host, "long", LONG, arguments());
    assert_completed(&result);
    assert_steps(&reports, "long", None);
}

#[test]
fn without_the_capability_no_progress_is_sent() {
    let mut host = host_with(everything(), json!({}));
    let (result, reports) = execute(&mut host, "long", LONG, arguments());
    assert_completed(&result);
    assert_eq!(reports, Vec::<Value>::new());
}
