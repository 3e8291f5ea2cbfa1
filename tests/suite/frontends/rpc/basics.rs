//! Integration tests through the real binary over stdio, in both framings.

#![allow(clippy::unwrap_used)]

use crate::support::wire as support;

use serde_json::json;
use support::{Framing, Host, echo_spec};

const FRAMINGS: [Framing; 2] = [Framing::Lsp, Framing::Ndjson];

#[test]
fn a_client_tool_round_trips_through_the_pipeline_in_both_framings() {
    for framing in FRAMINGS {
        let mut host = Host::initialized(framing, json!({ "executeTools": true }), json!({}));
        let registered = host.request("tools/register", json!({ "tool": echo_spec("echo") }));
        assert_eq!(
            registered["result"]["registration"]
                .as_str()
                .map(|s| s.starts_with("tool:")),
            Some(true)
        );
        host.send(
            &json!({ "jsonrpc": "2.0", "id": "run", "method": "tools/execute",
            "params": { "callId": "c1", "name": "echo", "arguments": { "text": "hi" } } }),
        );
        let call = host.next_with_method("client/executeTool");
        assert_eq!(call["params"]["name"], "echo");
        assert_eq!(call["params"]["callId"], "c1");
        assert_eq!(call["params"]["arguments"], json!({ "text": "hi" }));
        host.answer(&call, json!({ "value": "hi back" }));
        let response = host.response_to(&json!("run"));
        assert_eq!(
            response["result"],
            json!({ "isError": false, "value": "hi back", "content": [{ "type": "text", "text": "hi back" }] }),
            "{framing:?}"
        );
        let observed = host.next_with_method("tools/result");
        assert_eq!(observed["params"]["execution"]["callId"], "c1");
        assert_eq!(observed["params"]["result"]["value"], "hi back");
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn invalid_arguments_and_unknown_tools_are_results_not_rpc_errors() {
    for framing in FRAMINGS {
        let mut host = Host::initialized(framing, json!({ "executeTools": true }), json!({}));
        host.request("tools/register", json!({ "tool": echo_spec("echo") }));
        let invalid = host.request(
            "tools/execute",
            json!({ "callId": "c", "name": "echo", "arguments": { "text": 5 } }),
        );
        assert_eq!(
            invalid["result"],
            json!({
                "isError": true,
                "error": { "message": "invalid arguments: \"text\" must be a string", "info": { "name": "ToolArgsError", "code": "INVALID_ARGS" } },
                "content": [{ "type": "text", "text": "Error: invalid arguments: \"text\" must be a string" }]
            })
        );
        let unknown = host.request(
            "tools/execute",
            json!({ "callId": "d", "name": "nope", "arguments": {} }),
        );
        assert_eq!(
            unknown["result"]["error"]["message"],
            "unknown tool \"nope\""
        );
        assert_eq!(unknown["result"]["error"]["info"]["code"], "UNKNOWN_TOOL");
        assert_eq!(
            unknown["result"]["content"],
            json!([{ "type": "text", "text": "Error: unknown tool \"nope\"" }])
        );
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn lifecycle_errors_use_lsp_codes() {
    let mut host = Host::spawn(Framing::Lsp);
    let early = host.request("tools/schemas", json!({}));
    assert_eq!(early["error"]["code"], -32002);
    host.request("initialize", json!({ "protocolVersion": "1" }));
    let again = host.request("initialize", json!({ "protocolVersion": "1" }));
    assert_eq!(again["error"]["code"], -32600, "{again}");
    let unknown = host.request("tools/frobnicate", json!({}));
    assert_eq!(
        unknown["error"],
        json!({ "code": -32601, "message": "method not found: \"tools/frobnicate\"" })
    );
    let shutdown = host.request("shutdown", json!(null));
    assert_eq!(shutdown["result"], json!(null));
    let late = host.request("tools/schemas", json!({}));
    assert_eq!(late["error"]["code"], -32600);
    host.send(&json!({ "jsonrpc": "2.0", "method": "exit" }));
    assert_eq!(host.finish(), 0);
}

#[test]
fn malformed_input_is_answered_and_the_loop_reads_on() {
    let mut host = Host::initialized(Framing::Ndjson, json!({}), json!({}));
    host.write_raw(b"{not json}\n");
    let parse_error = host.read().unwrap();
    assert_eq!(parse_error["error"]["code"], -32700);
    assert_eq!(parse_error["id"], json!(null));
    host.write_raw(b"{\"jsonrpc\":\"1.0\",\"id\":7,\"method\":\"tools/schemas\"}\n");
    let bad_version = host.read().unwrap();
    assert_eq!(
        bad_version["error"],
        json!({ "code": -32600, "message": "invalid request: \"jsonrpc\" must be \"2.0\"" })
    );
    assert_eq!(bad_version["id"], 7);
    let wrong_params = host.request("tools/register", json!({ "tool": { "name": 5 } }));
    assert_eq!(wrong_params["error"]["code"], -32602);
    assert!(
        wrong_params["error"]["message"]
            .as_str()
            .unwrap()
            .contains("tool.name"),
        "{wrong_params}"
    );
    let schemas = host.request("tools/schemas", json!({}));
    assert_eq!(schemas["result"], json!([]));
    assert_eq!(host.finish(), 0);
}

#[test]
fn registration_errors_carry_a_data_code() {
    let mut host = Host::initialized(Framing::Lsp, json!({ "executeTools": true }), json!({}));
    host.request("tools/register", json!({ "tool": echo_spec("echo") }));
    let cases = [
        (echo_spec("echo"), "DUPLICATE_TOOL"),
        (echo_spec("run_code"), "RESERVED_NAME"),
        (json!({ "name": "x", "parameters": {} }), "MISSING_OUTPUT"),
        (
            json!({ "name": "x", "output": { "schema": { "type": "string" } }, "timeoutMs": 0 }),
            "INVALID_TIMEOUT",
        ),
        (
            json!({ "name": "x", "output": { "schema": { "type": "string" } }, "timeoutMs": -3 }),
            "INVALID_TIMEOUT",
        ),
        (
            json!({ "name": "x", "output": { "jsonSchema": { "anyOf": [] } } }),
            "UNSUPPORTED_SCHEMA",
        ),
    ];
    for (tool, code) in cases {
        let response = host.request("tools/register", json!({ "tool": tool }));
        assert_eq!(response["error"]["data"]["code"], code, "{response}");
    }
    assert_eq!(host.finish(), 0);
}

#[test]
fn cancelling_a_call_whose_client_never_answers_ends_it_and_tells_the_client() {
    let mut host = Host::initialized(Framing::Lsp, json!({ "executeTools": true }), json!({}));
    host.request("tools/register", json!({ "tool": echo_spec("echo") }));
    host.send(
        &json!({ "jsonrpc": "2.0", "id": 99, "method": "tools/execute",
        "params": { "callId": "c", "name": "echo", "arguments": { "text": "x" } } }),
    );
    let call = host.next_with_method("client/executeTool");
    host.send(&json!({ "jsonrpc": "2.0", "method": "$/cancelRequest", "params": { "id": 99 } }));
    let forwarded = host.next_with_method("$/cancelRequest");
    assert_eq!(forwarded["params"]["id"], call["id"]);
    let response = host.response_to(&json!(99));
    assert_eq!(response["result"]["error"]["info"]["code"], "ABORTED");
    assert_eq!(host.finish(), 0);
}

#[test]
fn a_declared_timeout_ends_a_call_whose_client_never_answers() {
    let mut host = Host::initialized(Framing::Ndjson, json!({ "executeTools": true }), json!({}));
    let mut spec = echo_spec("slow");
    spec["timeoutMs"] = json!(50);
    host.request("tools/register", json!({ "tool": spec }));
    let response = host.request(
        "tools/execute",
        json!({ "callId": "c", "name": "slow", "arguments": { "text": "x" } }),
    );
    assert_eq!(
        response["result"]["error"],
        json!({
            "message": "tool \"slow\" timed out after 50 ms",
            "info": { "name": "HarnessError", "code": "TOOL_TIMEOUT" }
        })
    );
    assert_eq!(host.finish(), 0);
}
