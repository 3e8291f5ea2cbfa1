//! JSON as deep as `transport.maxNestingDepth` allows, through every path that walks it, on
//! a host whose main thread has only a 2 MiB stack: nothing aborts, and a deeper limit is
//! refused by configuration (its maximum is the depth proven here).

use crate::support::code::any_spec;
use crate::support::wire::{Host, with_big_stack};
use serde_json::{Value, json};

/// The largest `transport.maxNestingDepth` the host accepts.
const MAX_DEPTH: usize = 50_000;

/// `levels` nested arrays around a string, built as text (the test's own stack stays flat).
fn nested_text(levels: usize) -> String {
    format!("{}\"s\"{}", "[".repeat(levels), "]".repeat(levels))
}

/// A schema of `levels` nested `items`.
fn schema_text(levels: usize) -> String {
    let mut text = String::from("{\"type\":\"string\"}");
    for _ in 0..levels {
        text = format!("{{\"type\":\"array\",\"items\":{text}}}");
    }
    text
}

fn host() -> Host {
    let mut host = Host::serve_on_small_stack(2048);
    host.initialize(
        json!({ "executeTools": true }),
        json!({ "tools": { "mode": "both" }, "transport": { "maxNestingDepth": MAX_DEPTH } }),
    );
    host
}

/// Sends a request whose params are given as text and returns the response.
fn raw_request(host: &mut Host, id: u64, method: &str, params: &str) -> Value {
    host.send_text(&format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{method}\",\"params\":{params}}}"
    ));
    loop {
        let message = host.read().unwrap();
        if message["id"] == json!(id) {
            return message;
        }
    }
}

#[test]
fn a_schema_at_the_depth_limit_is_registered_prompted_and_described() {
    with_big_stack(schema_at_the_limit);
}

fn schema_at_the_limit() {
    let mut host = host();
    // Envelope levels: params, tool, inputSchema, properties, x.
    let schema = schema_text(MAX_DEPTH - 6);
    let spec = format!(
        "{{\"tool\":{{\"name\":\"deep\",\"description\":\"d\",\"inputSchema\":{{\"type\":\"object\",\"properties\":{{\"x\":{schema}}}}},\"output\":{{\"jsonSchema\":{{}}}}}}}}"
    );
    let registered = raw_request(&mut host, 1, "tools/register", &spec);
    assert!(
        registered["result"]["registration"].is_string(),
        "{registered}"
    );
    for (id, method, params) in [
        (2, "tools/prompt", "{}"),
        (3, "tools/get", "{\"name\":\"deep\"}"),
    ] {
        let response = raw_request(&mut host, id, method, params);
        assert!(
            response.get("result").is_some(),
            "{method}: {}",
            &response.to_string()[..200]
        );
    }
    assert_eq!(host.finish(), 0);
}

#[test]
fn arguments_at_the_depth_limit_are_presented_executed_and_passed_from_run_code() {
    with_big_stack(arguments_at_the_limit);
}

fn arguments_at_the_limit() {
    let mut host = host();
    let registered = host.request("tools/register", json!({ "tool": any_spec("take", true) }));
    assert!(
        registered["result"]["registration"].is_string(),
        "{registered}"
    );
    // Envelope levels: params, arguments, x.
    let value = nested_text(MAX_DEPTH - 4);
    let card = raw_request(
        &mut host,
        1,
        "tools/presentCall",
        &format!("{{\"name\":\"take\",\"arguments\":{{\"x\":{value}}}}}"),
    );
    assert!(card.get("result").is_some(), "{}", &card.to_string()[..200]);
    host.send_text(&format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/execute\",\"params\":{{\"callId\":\"deep\",\"name\":\"take\",\"arguments\":{{\"x\":{value}}}}}}}"
    ));
    let executed = serve_until(&mut host, 2);
    assert_eq!(
        executed["result"]["value"],
        json!("taken"),
        "{}",
        &executed.to_string()[..300]
    );
    // A program passes a value as deep as the bridge admits (`{x: …}` plus the array): the
    // run is answered (the value or a failure naming the depth), the host does not abort.
    let code = format!(
        "let v = 's'; for (let i = 0; i < {}; i++) v = [v];\nreturn await tools.take({{ x: v }});",
        MAX_DEPTH - 2
    );
    host.send(
        &json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/execute",
        "params": { "callId": "deep-run", "name": "run_code",
            "arguments": { "code": code, "description": "deep" } } }),
    );
    let ran = serve_until(&mut host, 3);
    assert!(ran["result"].is_object(), "{}", &ran.to_string()[..300]);
    let again = serve_until_after(&mut host, 4, "return 'still serving';");
    assert_eq!(
        again["result"]["value"]["result"],
        json!("still serving"),
        "{again}"
    );
    assert_eq!(host.finish(), 0);
}

/// Runs `code` as request `id` and returns its response.
fn serve_until_after(host: &mut Host, id: u64, code: &str) -> Value {
    host.send(
        &json!({ "jsonrpc": "2.0", "id": id, "method": "tools/execute",
        "params": { "callId": format!("run-{id}"), "name": "run_code",
            "arguments": { "code": code, "description": "after" } } }),
    );
    serve_until(host, id)
}

/// Reads until the response to `id`, answering every `client/executeTool` with `"taken"`.
fn serve_until(host: &mut Host, id: u64) -> Value {
    loop {
        let message = host.read().unwrap();
        if message["method"] == "client/executeTool" {
            host.answer(&message, json!({ "value": "taken" }));
        } else if message.get("method").is_none() && message["id"] == json!(id) {
            return message;
        }
    }
}

#[test]
fn a_depth_limit_beyond_the_proven_maximum_is_refused() {
    let mut host = Host::serve_on_small_stack(2048);
    let response = host.request(
        "initialize",
        json!({ "protocolVersion": "1", "capabilities": {},
            "config": { "transport": { "maxNestingDepth": MAX_DEPTH + 1 } } }),
    );
    assert_eq!(
        response["error"]["message"],
        json!(format!(
            "invalid params: config.transport.maxNestingDepth: must be at most {MAX_DEPTH}"
        )),
        "{response}"
    );
    assert_eq!(host.finish(), 0);
}
