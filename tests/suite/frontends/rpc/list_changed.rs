//! `tools/listChanged` is coalesced per scope: a burst of registry changes (here 50,000
//! tools registered by one batch, or listed by one MCP server) reaches the client as a few
//! announcements, the last one after the last change, never one per tool.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::wire::{Framing, Host, echo_spec, temp_file};
use serde_json::{Value, json};
use std::time::Instant;

const TOOLS: usize = 50_000;

#[test]
fn fifty_thousand_registrations_in_one_batch_are_announced_a_few_times_not_per_tool() {
    let mut host = Host::initialized(Framing::Ndjson, json!({ "executeTools": true }), json!({}))
        .patient(std::time::Duration::from_secs(300));
    let batch: Vec<Value> = (0..TOOLS)
        .map(|n| {
            json!({ "jsonrpc": "2.0", "id": n, "method": "tools/register",
                "params": { "tool": echo_spec(&format!("t{n}")) } })
        })
        .collect();
    let started = Instant::now();
    host.send(&Value::Array(batch));
    let reply = loop {
        let message = host.read().expect("EOF before the batch reply");
        if message.is_array() {
            break message;
        }
        host.inbox.push(message);
    };
    let elapsed = started.elapsed();
    let replies = reply.as_array().unwrap();
    assert_eq!(replies.len(), TOOLS);
    assert!(
        replies
            .iter()
            .all(|r| r["result"]["registration"].is_string()),
        "{:.300}",
        reply
    );
    // Every announcement names the global scope and came before the reply (the last one
    // after the last change: nothing is left to announce).
    let announced = host.drain("tools/listChanged");
    assert!(
        announced.iter().all(|m| m["params"] == json!({})),
        "{announced:?}"
    );
    // One at the first change, one per second of the burst at most, one at its end.
    let bound = 2 + elapsed.as_secs() as usize;
    assert!(
        !announced.is_empty() && announced.len() <= bound,
        "{} announcements for {TOOLS} registrations in {elapsed:?} (at most {bound})",
        announced.len()
    );
    // The listing the client makes now is the final one.
    let schemas = host.request("tools/schemas", json!({}));
    assert_eq!(schemas["result"].as_array().unwrap().len(), TOOLS);
    assert!(host.drain("tools/listChanged").is_empty());
    assert_eq!(host.finish(), 0);
}

#[test]
fn a_change_made_by_a_request_is_announced_before_its_answer_even_right_after_another() {
    let mut host = Host::initialized(Framing::Ndjson, json!({ "executeTools": true }), json!({}));
    // Back to back, well within the 50 ms interval: the second is held, then announced
    // ahead of its answer.
    for n in 0..5 {
        let response = host.request(
            "tools/register",
            json!({ "tool": echo_spec(&format!("t{n}")) }),
        );
        assert!(response.get("result").is_some(), "{response}");
        assert_eq!(
            host.drain("tools/listChanged"),
            [json!({ "jsonrpc": "2.0", "method": "tools/listChanged", "params": {} })],
            "registration {n}"
        );
    }
    assert_eq!(host.finish(), 0);
}

/// An MCP server (stdio, ndjson) that lists `TOOLS` tools in one page.
const MANY_TOOLS_SERVER: &str = r#"
import json, sys
TOOLS = [{"name": f"t{n}", "inputSchema": {"type": "object"}} for n in range(50000)]
def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()
for line in sys.stdin:
    message = json.loads(line)
    method, id = message.get("method"), message.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": message["params"].get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "many", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": id, "result": {"tools": TOOLS}})
    elif id is not None and method is not None:
        send({"jsonrpc": "2.0", "id": id, "result": {}})
"#;

#[test]
fn an_mcp_server_listing_fifty_thousand_tools_is_announced_a_few_times_not_per_tool() {
    let script = temp_file("many_tools.py", MANY_TOOLS_SERVER);
    let python = crate::support::mcp::installed(".venv/bin/python");
    let mut host = Host::initialized(
        Framing::Ndjson,
        json!({}),
        json!({ "mcpServers": { "many": { "command": python, "args": [script] } } }),
    )
    .patient(std::time::Duration::from_secs(300));
    let started = Instant::now();
    // Each answer sends what waits first, so the polls are counted in the bound.
    let mut polls = 0;
    loop {
        polls += 1;
        let status = host.request("mcp/status", json!({}));
        let tools = status["result"][0]["tools"].as_array().map_or(0, Vec::len);
        if tools == TOOLS {
            break;
        }
        assert!(started.elapsed().as_secs() < 240, "{status:.300}");
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    let elapsed = started.elapsed();
    let announced = host.drain("tools/listChanged");
    assert!(
        announced.iter().all(|m| m["params"] == json!({})),
        "{announced:?}"
    );
    let bound = polls + 2 + elapsed.as_secs() as usize;
    assert!(
        !announced.is_empty() && announced.len() <= bound,
        "{} announcements for a listing of {TOOLS} tools in {elapsed:?} ({polls} polls, at most {bound})",
        announced.len()
    );
    let schemas = host.request("tools/schemas", json!({}));
    assert_eq!(schemas["result"].as_array().unwrap().len(), TOOLS);
    assert_eq!(host.finish(), 0);
}
