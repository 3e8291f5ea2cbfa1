//! A server's `structuredContent` for a tool without an `outputSchema`
//! (`tests/mcp-servers/structured_server.py`): kept beside the text value on the wire result
//! of `tools/execute`, re-served by `dsh-tools mcp` to the official Python SDK client, and
//! dropped by a post-execute rewrite of the content unless the rewrite sets its own.

#![allow(clippy::unwrap_used)]

use crate::support::mcp::{Binary, all_running, python_client, structured};
use serde_json::{Value, json};

const TEXT: &str = "Bergen: light rain, 7.5 °C";

fn forecast() -> Value {
    json!({ "city": "Bergen", "sky": "light rain", "celsius": 7.5 })
}

fn call(call_id: &str) -> Value {
    json!({ "callId": call_id, "name": "mcp__structured__forecast", "arguments": { "city": "Bergen" } })
}

#[test]
fn tools_execute_shows_the_structured_content_beside_the_text_value() {
    let mut host = Binary::serve(json!({ "mcpServers": { "structured": structured() } }));
    host.wait_for_status(all_running);
    let answer = host.request("tools/execute", call("c1"));
    assert_eq!(
        answer["result"],
        json!({
            "isError": false,
            "value": TEXT,
            "content": [{ "type": "text", "text": TEXT }],
            "structuredContent": forecast(),
        })
    );
}

#[test]
fn dsh_tools_mcp_re_serves_the_structured_content_without_an_output_schema() {
    let config = json!({ "mcpServers": { "structured": structured() } });
    let report = python_client(
        "structured-re-served",
        "native",
        &config,
        json!({ "calls": [{ "name": "mcp__structured__forecast", "arguments": { "city": "Bergen" } }] }),
    );
    let listed = report["tools"].as_array().unwrap();
    let tool = listed
        .iter()
        .find(|t| t["name"] == "mcp__structured__forecast")
        .unwrap();
    assert_eq!(tool["outputSchema"], Value::Null, "{tool}");
    assert_eq!(
        report["calls"][0],
        json!({ "isError": false, "content": [{ "type": "text", "text": TEXT }], "structuredContent": forecast() })
    );
}

#[test]
fn a_post_execute_rewrite_of_the_content_drops_it_unless_the_rewrite_sets_its_own() {
    let mut host = Binary::spawn(&["serve", "--framing", "ndjson"]);
    let config = json!({ "mcpServers": { "structured": structured() } });
    let answer = host.request(
        "initialize",
        json!({ "protocolVersion": "1", "config": config, "capabilities": { "hooks": true } }),
    );
    assert_eq!(answer["result"]["protocolVersion"], "1", "{answer}");
    host.wait_for_status(all_running);
    let subscribed = host.request("hooks/subscribe", json!({ "event": "tools/post-execute" }));
    assert!(
        subscribed["result"]["subscription"].is_string(),
        "{subscribed}"
    );
    let redacted = json!([{ "type": "text", "text": "Bergen: [redacted]" }]);
    let own = json!({ "city": "Bergen" });
    let decisions = [
        json!({ "kind": "accept" }),
        json!({ "kind": "accept", "content": redacted }),
        json!({ "kind": "accept", "content": redacted, "structuredContent": own }),
    ];
    let mut results = Vec::new();
    for (n, decision) in decisions.into_iter().enumerate() {
        let (answer, asked) =
            host.request_answering("tools/execute", call(&format!("c{n}")), |request| {
                assert_eq!(request["method"], "hooks/postExecute", "{request}");
                // The hook sees the server's object on the result it decides about.
                assert_eq!(request["params"]["result"]["structuredContent"], forecast());
                decision.clone()
            });
        assert_eq!(asked.len(), 1, "{asked:?}");
        results.push(answer["result"].clone());
    }
    assert_eq!(
        results[0]["structuredContent"],
        forecast(),
        "{}",
        results[0]
    );
    assert_eq!(results[1]["content"], redacted, "{}", results[1]);
    assert_eq!(results[1].get("structuredContent"), None, "{}", results[1]);
    assert_eq!(results[2]["content"], redacted, "{}", results[2]);
    assert_eq!(results[2]["structuredContent"], own, "{}", results[2]);
}
