//! `dsh-tools mcp --http` sessions as the official Python MCP client sees them: closing a
//! session (DELETE) answers 200, which the client takes for a clean termination; a call
//! whose SSE stream is lost before its response (the client's transport reads the rest of
//! that stream itself and keeps it from the client) is answered after the client
//! reconnects with `Last-Event-ID`, from the events kept for that stream.

#![allow(clippy::unwrap_used)]

use crate::support::http::HttpHost;
use crate::support::mcp::scratch;
use serde_json::{Value, json};

/// A host with the fs built-ins over a root holding `note.txt`.
fn config(name: &str) -> Value {
    let root = scratch(&format!("{name}-root"));
    std::fs::write(root.join("note.txt"), "missed while away\n").unwrap();
    json!({ "builtins": { "fs": { "root": root.to_str().unwrap() } } })
}

/// The requests of `report` made with `method`, as `[status, Last-Event-ID]`.
fn requests(report: &Value, method: &str) -> Vec<(u64, Option<String>)> {
    report["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|request| request[0] == method)
        .map(|request| {
            let status = request[1].as_u64().unwrap();
            (status, request[2].as_str().map(str::to_owned))
        })
        .collect()
}

#[test]
fn closing_a_session_answers_200() {
    let mut host = HttpHost::start("http-delete", &config("http-delete"), &[]);
    let report = host.python(json!({ "sessions": 2, "steps": [
        { "session": 0, "op": "list" },
        { "session": 1, "op": "list" }
    ] }));
    assert_eq!(
        requests(&report, "DELETE"),
        vec![(200, None), (200, None)],
        "{report}"
    );
    host.wait_for_line("MCP session closed agent scope mcp-http-1");
    host.wait_for_line("MCP session closed agent scope mcp-http-2");
}

#[test]
fn a_response_sent_while_the_stream_was_lost_is_replayed_after_last_event_id() {
    let host = HttpHost::start("http-replay", &config("http-replay"), &[]);
    let report = host.python(json!({ "sessions": 1, "steps": [
        { "session": 0, "op": "call", "name": "read", "arguments": { "file_path": "note.txt" }, "cut": true },
        { "session": 0, "op": "call", "name": "read", "arguments": { "file_path": "note.txt" } }
    ] }));
    // The first stream's response went to the transport, not to the client...
    let swallowed = report["swallowed"].as_array().unwrap();
    assert_eq!(swallowed.len(), 1, "{report}");
    let swallowed = swallowed[0].as_str().unwrap();
    assert!(swallowed.contains("missed while away"), "{swallowed}");
    // ...which reconnected with the id of the event it had, and got the response there.
    let resumed: Vec<_> = requests(&report, "GET")
        .into_iter()
        .filter(|(_, last)| last.is_some())
        .collect();
    assert_eq!(resumed.len(), 1, "{report}");
    assert_eq!(resumed[0].0, 200);
    for call in &report["steps"].as_array().unwrap()[..2] {
        assert_eq!(call["isError"], json!(false), "{call}");
        assert!(
            call["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("missed while away"),
            "{call}"
        );
    }
}
