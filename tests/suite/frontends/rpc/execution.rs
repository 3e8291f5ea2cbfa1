//! Execution over the wire, through the real binary: whole results and `tools/result`,
//! client failures and garbage answers as normalized failures, a disconnecting client,
//! `tools/executionMode` (with `client/classify`), and `tools/executeBatch` (call order,
//! overlap proven by several `client/executeTool` requests outstanding at once, the
//! `maxParallel` bound, exclusive barriers, cancellation).

#![allow(clippy::unwrap_used)]

use crate::support::pipeline as pipeline_support;

use pipeline_support::{Framing, Host, echo_spec};
use serde_json::{Value, json};

const FRAMINGS: [Framing; 2] = [Framing::Lsp, Framing::Ndjson];

fn host(framing: Framing) -> Host {
    Host::initialized(framing, json!({ "executeTools": true }), json!({}))
}

fn register(host: &mut Host, tool: Value) -> String {
    let response = host.request("tools/register", json!({ "tool": tool }));
    response["result"]["registration"]
        .as_str()
        .unwrap_or_else(|| panic!("{response}"))
        .to_string()
}

/// A client tool `name` with `concurrencySafe` set as given; arguments `{ i: integer }`.
fn numbered_spec(name: &str, concurrency: Value) -> Value {
    json!({
        "name": name,
        "parameters": { "i": { "type": "integer", "required": true } },
        "output": { "schema": { "type": "integer" } },
        "concurrencySafe": concurrency
    })
}

fn failure(message: &str, code: Option<&str>) -> Value {
    let mut error = json!({ "message": message });
    if let Some(code) = code {
        let name = if code == "INVALID_ARGS" {
            "ToolArgsError"
        } else {
            "HarnessError"
        };
        error["info"] = json!({ "name": name, "code": code });
    }
    json!({
        "isError": true,
        "error": error,
        "content": [{ "type": "text", "text": format!("Error: {message}") }]
    })
}

fn success_int(i: u64) -> Value {
    json!({ "isError": false, "value": i, "content": [{ "type": "text", "text": i.to_string() }] })
}

/// Reads until `count` `client/executeTool` requests are outstanding; returns them by `i`.
fn outstanding(host: &mut Host, count: usize) -> Vec<Value> {
    let mut calls: Vec<Value> = (0..count)
        .map(|_| host.next_with_method("client/executeTool"))
        .collect();
    calls.sort_by_key(|c| c["params"]["arguments"]["i"].as_u64());
    calls
}

/// A fence: a request answered inline after everything the host already queued. Any
/// `client/executeTool` sent before it is in the inbox afterwards.
fn fence(host: &mut Host) -> Vec<Value> {
    host.request("tools/schemas", json!({}));
    host.drain("client/executeTool")
}

fn answer_with_i(host: &mut Host, call: &Value) {
    let i = call["params"]["arguments"]["i"].clone();
    host.answer(call, json!({ "value": i }));
}

#[test]
fn a_client_result_comes_back_whole_with_one_tools_result_in_both_framings() {
    for framing in FRAMINGS {
        let mut host = host(framing);
        let registration = register(
            &mut host,
            json!({
                "name": "stat",
                "parameters": { "path": { "type": "string", "required": true } },
                "output": { "schema": {
                    "type": "object",
                    "additionalProperties": false,
                    "properties": { "size": { "type": "number", "required": true } }
                } }
            }),
        );
        let id = host.start(
            "tools/execute",
            json!({ "callId": "call-1", "name": "stat", "arguments": { "path": "/a" } }),
        );
        let call = host.next_with_method("client/executeTool");
        let token = call["params"]["token"].clone();
        assert!(token.as_str().unwrap().starts_with('t'), "{call}");
        assert_eq!(
            call["params"],
            json!({
                "registration": registration,
                "token": token,
                "callId": "call-1",
                "name": "stat",
                "arguments": { "path": "/a" }
            })
        );
        host.send(&json!({ "jsonrpc": "2.0", "id": call["id"], "result": {
            "value": { "size": 1.50e3 },
            "meta": { "kind": "file" },
            "additionalContexts": [{ "role": "user", "content": "stat ran", "source": "fs" }]
        } }));
        let response = host.response_to(&id);
        let expected = json!({
            "isError": false,
            "value": { "size": 1500 },
            "content": [{ "type": "text", "text": "{\n  \"size\": 1500\n}" }],
            "meta": { "kind": "file" },
            "additionalContexts": [{ "role": "user", "content": "stat ran", "source": "fs" }]
        });
        assert_eq!(response["result"], expected, "{framing:?}");
        let observed = host.drain("tools/result");
        assert_eq!(
            observed
                .iter()
                .map(|m| m["params"].clone())
                .collect::<Vec<_>>(),
            [json!({
                "execution": { "token": token, "callId": "call-1", "name": "stat" },
                "result": expected
            })]
        );
        // Client-supplied content replaces the rendering; the value is still validated.
        let id = host.start(
            "tools/execute",
            json!({ "callId": "call-2", "name": "stat", "arguments": { "path": "/b" } }),
        );
        let call = host.next_with_method("client/executeTool");
        host.answer(
            &call,
            json!({ "value": { "size": 2 }, "content": [{ "type": "text", "text": "2 bytes" }] }),
        );
        assert_eq!(
            host.response_to(&id)["result"],
            json!({ "isError": false, "value": { "size": 2 }, "content": [{ "type": "text", "text": "2 bytes" }] })
        );
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn client_errors_and_garbage_answers_become_normalized_failures() {
    let mut host = host(Framing::Ndjson);
    register(
        &mut host,
        json!({ "name": "t", "output": { "schema": { "type": "string" } } }),
    );
    let invalid =
        |detail: &str| format!("client returned an invalid result for tool \"t\": {detail}");
    let cases: Vec<(Value, Value)> = vec![
        (
            json!({ "error": { "code": -1, "message": "disk full" } }),
            failure("disk full", None),
        ),
        (
            json!({ "result": 42 }),
            failure(
                &invalid("invalid type: integer `42`, expected struct ExecuteToolResult"),
                None,
            ),
        ),
        (
            json!({ "result": {} }),
            failure(&invalid("missing field `value`"), None),
        ),
        (
            json!({ "result": { "value": "x", "bogus": 1 } }),
            failure(
                &invalid(
                    "bogus: unknown field `bogus`, expected one of `value`, `content`, `meta`, `additionalContexts`",
                ),
                None,
            ),
        ),
        (
            json!({ "result": { "value": "x", "content": "text" } }),
            failure(
                &invalid("content: invalid type: string \"text\", expected a sequence"),
                None,
            ),
        ),
        (
            json!({}),
            failure("response must carry exactly one of result or error", None),
        ),
        (json!({ "error": "boom" }), failure("malformed error", None)),
        (
            json!({ "result": { "value": 5 } }),
            failure(
                "tool \"t\" returned invalid output: \"value\" must be a string",
                Some("INVALID_TOOL_OUTPUT"),
            ),
        ),
    ];
    for (answer, expected) in cases {
        let id = host.start("tools/execute", json!({ "callId": "c", "name": "t" }));
        let call = host.next_with_method("client/executeTool");
        let mut reply = json!({ "jsonrpc": "2.0", "id": call["id"] });
        for (key, value) in answer.as_object().unwrap() {
            reply[key] = value.clone();
        }
        host.send(&reply);
        assert_eq!(host.response_to(&id)["result"], expected, "{answer}");
        assert_eq!(host.drain("tools/result").len(), 1);
    }
    // A lossy number in the client's answer is invalid output, named by its path.
    let id = host.start("tools/execute", json!({ "callId": "c", "name": "t" }));
    let call = host.next_with_method("client/executeTool");
    let reply = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{\"value\":1e400}}}}\n",
        call["id"]
    );
    host.write_raw(reply.as_bytes());
    assert_eq!(
        host.response_to(&id)["result"],
        failure(
            "tool \"t\" returned invalid output: \"value\" is not lossless JSON: 1e+400 is outside the range of a double",
            Some("INVALID_TOOL_OUTPUT")
        )
    );
    // The host is still serving.
    let id = host.start("tools/execute", json!({ "callId": "c", "name": "t" }));
    let call = host.next_with_method("client/executeTool");
    host.answer(&call, json!({ "value": "fine" }));
    assert_eq!(host.response_to(&id)["result"]["value"], "fine");
    assert_eq!(host.finish(), 0);
}

#[test]
fn a_client_that_disconnects_mid_call_gets_a_normalized_failure_and_the_host_exits_cleanly() {
    for framing in FRAMINGS {
        let mut host = host(framing);
        register(&mut host, echo_spec("echo"));
        let id = host.start(
            "tools/execute",
            json!({ "callId": "c", "name": "echo", "arguments": { "text": "x" } }),
        );
        host.next_with_method("client/executeTool");
        host.close_input();
        let result = host.response_to(&id)["result"].clone();
        // Shutdown aborts in-flight runs and fails every pending client request; whichever
        // the call sees first, it is a normalized failure.
        let acceptable = [
            failure("tool call aborted", Some("ABORTED")),
            failure(
                "client could not execute tool \"echo\": the client disconnected before answering",
                None,
            ),
        ];
        assert!(acceptable.contains(&result), "{framing:?}: {result}");
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn execution_mode_is_parallel_only_for_an_exact_true() {
    let mut host = host(Framing::Lsp);
    register(&mut host, numbered_spec("par", json!(true)));
    register(&mut host, numbered_spec("excl", json!(false)));
    register(&mut host, numbered_spec("plain", json!(null)));
    let ask = register(&mut host, numbered_spec("ask", json!("ask")));
    host.request("agents/open", json!({ "agent": "x" }));
    host.request("tools/restrict", json!({ "agent": "x", "deny": ["par"] }));
    let mode = |host: &mut Host, params: Value| {
        host.request("tools/executionMode", params)["result"].clone()
    };
    let cases = [
        (
            json!({ "name": "par", "arguments": { "i": 1 } }),
            "parallel",
        ),
        (
            json!({ "name": "excl", "arguments": { "i": 1 } }),
            "exclusive",
        ),
        (
            json!({ "name": "plain", "arguments": { "i": 1 } }),
            "exclusive",
        ),
        (
            json!({ "name": "par", "arguments": { "i": "one" } }),
            "exclusive",
        ),
        (json!({ "name": "par", "arguments": {} }), "exclusive"),
        (json!({ "name": "nope", "arguments": {} }), "exclusive"),
        (
            json!({ "name": "par", "arguments": { "i": 1 }, "agent": "x" }),
            "exclusive",
        ),
    ];
    for (params, expected) in cases {
        assert_eq!(mode(&mut host, params.clone()), json!(expected), "{params}");
    }
    assert_eq!(host.drain("client/classify"), Vec::<Value>::new());
    let answers = [
        (json!(true), "parallel"),
        (json!(false), "exclusive"),
        (json!("true"), "exclusive"),
        (json!(1), "exclusive"),
        (json!({ "parallel": true }), "exclusive"),
    ];
    for (answer, expected) in answers {
        let id = host.start(
            "tools/executionMode",
            json!({ "name": "ask", "arguments": { "i": 1.0 } }),
        );
        let classify = host.next_with_method("client/classify");
        assert_eq!(
            classify["params"],
            json!({ "registration": ask, "name": "ask", "arguments": { "i": 1 } })
        );
        host.answer(&classify, answer.clone());
        assert_eq!(host.response_to(&id)["result"], json!(expected), "{answer}");
    }
    let id = host.start(
        "tools/executionMode",
        json!({ "name": "ask", "arguments": { "i": 1 } }),
    );
    let classify = host.next_with_method("client/classify");
    host.answer_error(&classify, -1, "cannot tell");
    assert_eq!(host.response_to(&id)["result"], "exclusive");
    // Invalid arguments are exclusive without asking.
    assert_eq!(
        mode(
            &mut host,
            json!({ "name": "ask", "arguments": { "i": "x" } })
        ),
        "exclusive"
    );
    assert_eq!(host.drain("client/classify"), Vec::<Value>::new());
    assert_eq!(host.finish(), 0);
}

#[test]
fn a_batch_overlaps_parallel_calls_up_to_max_parallel_and_keeps_call_order() {
    for framing in FRAMINGS {
        let mut host = host(framing);
        register(&mut host, numbered_spec("par", json!(true)));
        let calls: Vec<Value> = (0..4)
            .map(|i| json!({ "callId": format!("c{i}"), "name": "par", "arguments": { "i": i } }))
            .collect();
        let id = host.start(
            "tools/executeBatch",
            json!({ "calls": calls, "maxParallel": 2 }),
        );
        // Two client/executeTool requests are outstanding at once, before any answer...
        let first = outstanding(&mut host, 2);
        // ...and no third one was sent.
        assert_eq!(fence(&mut host), Vec::<Value>::new());
        // Answering call 1 before call 0 frees its slot: call 2 starts.
        answer_with_i(&mut host, &first[1]);
        let third = host.next_with_method("client/executeTool");
        assert_eq!(third["params"]["arguments"]["i"], 2);
        assert_eq!(fence(&mut host), Vec::<Value>::new());
        answer_with_i(&mut host, &third);
        let fourth = host.next_with_method("client/executeTool");
        assert_eq!(fourth["params"]["arguments"]["i"], 3);
        answer_with_i(&mut host, &fourth);
        answer_with_i(&mut host, &first[0]);
        let response = host.response_to(&id);
        assert_eq!(
            response["result"],
            json!([
                success_int(0),
                success_int(1),
                success_int(2),
                success_int(3)
            ]),
            "{framing:?}"
        );
        // Durable results are published once per call, in model order.
        let published: Vec<Value> = host
            .drain("tools/result")
            .iter()
            .map(|m| m["params"]["execution"]["callId"].clone())
            .collect();
        assert_eq!(published, ["c0", "c1", "c2", "c3"]);
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn an_exclusive_call_in_a_batch_waits_for_the_pool_and_bars_later_calls() {
    let mut host = host(Framing::Ndjson);
    register(&mut host, numbered_spec("par", json!(true)));
    register(&mut host, numbered_spec("excl", json!(false)));
    let call = |name: &str, i: u64| json!({ "callId": format!("c{i}"), "name": name, "arguments": { "i": i } });
    let id = host.start(
        "tools/executeBatch",
        json!({ "calls": [call("par", 0), call("par", 1), call("excl", 2), call("par", 3)] }),
    );
    let pool = outstanding(&mut host, 2);
    assert_eq!(fence(&mut host), Vec::<Value>::new());
    answer_with_i(&mut host, &pool[0]);
    assert_eq!(fence(&mut host), Vec::<Value>::new());
    answer_with_i(&mut host, &pool[1]);
    let exclusive = host.next_with_method("client/executeTool");
    assert_eq!(exclusive["params"]["name"], "excl");
    assert_eq!(fence(&mut host), Vec::<Value>::new());
    answer_with_i(&mut host, &exclusive);
    let last = host.next_with_method("client/executeTool");
    assert_eq!(last["params"]["arguments"]["i"], 3);
    answer_with_i(&mut host, &last);
    assert_eq!(
        host.response_to(&id)["result"],
        json!([
            success_int(0),
            success_int(1),
            success_int(2),
            success_int(3)
        ])
    );
    assert_eq!(host.finish(), 0);
}

#[test]
fn a_batch_keeps_failures_in_place() {
    let mut host = host(Framing::Lsp);
    register(&mut host, numbered_spec("par", json!(true)));
    let id = host.start(
        "tools/executeBatch",
        json!({ "calls": [
            { "callId": "a", "name": "par", "arguments": { "i": 0 } },
            { "callId": "b", "name": "missing", "arguments": {} },
            { "callId": "c", "name": "par", "arguments": { "i": "x" } }
        ] }),
    );
    let call = host.next_with_method("client/executeTool");
    answer_with_i(&mut host, &call);
    assert_eq!(
        host.response_to(&id)["result"],
        json!([
            success_int(0),
            failure("unknown tool \"missing\"", Some("UNKNOWN_TOOL")),
            failure(
                "invalid arguments: \"i\" must be an integer",
                Some("INVALID_ARGS")
            ),
        ])
    );
    assert_eq!(host.finish(), 0);
}

#[test]
fn cancelling_a_batch_aborts_running_calls_and_never_starts_queued_ones() {
    let mut host = host(Framing::Ndjson);
    register(&mut host, numbered_spec("par", json!(true)));
    register(&mut host, numbered_spec("excl", json!(false)));
    let id = host.start(
        "tools/executeBatch",
        json!({ "calls": [
            { "callId": "a", "name": "par", "arguments": { "i": 0 } },
            { "callId": "b", "name": "excl", "arguments": { "i": 1 } }
        ] }),
    );
    let running = host.next_with_method("client/executeTool");
    host.send(&json!({ "jsonrpc": "2.0", "method": "$/cancelRequest", "params": { "id": id } }));
    let forwarded = host.next_with_method("$/cancelRequest");
    assert_eq!(forwarded["params"]["id"], running["id"]);
    assert_eq!(
        host.response_to(&id)["result"],
        json!([
            failure("tool call aborted", Some("ABORTED")),
            failure(
                "tool call aborted before dispatch",
                Some("ABORTED_BEFORE_DISPATCH")
            ),
        ])
    );
    assert_eq!(host.drain("client/executeTool"), Vec::<Value>::new());
    assert_eq!(host.finish(), 0);
}

#[test]
fn invalid_calls_publish_tools_result_without_reaching_the_client() {
    let mut host = host(Framing::Lsp);
    register(&mut host, echo_spec("echo"));
    host.request("agents/open", json!({ "agent": "x" }));
    let response = host.request(
        "tools/execute",
        json!({ "callId": "bad", "name": "echo", "arguments": { "text": 1 }, "agent": "x" }),
    );
    let expected = failure(
        "invalid arguments: \"text\" must be a string",
        Some("INVALID_ARGS"),
    );
    assert_eq!(response["result"], expected);
    let observed = host.drain("tools/result");
    assert_eq!(observed.len(), 1);
    let execution = &observed[0]["params"]["execution"];
    assert_eq!(
        (
            &execution["callId"],
            &execution["name"],
            &execution["agent"]
        ),
        (&json!("bad"), &json!("echo"), &json!("x"))
    );
    assert_eq!(observed[0]["params"]["result"], expected);
    assert_eq!(host.drain("client/executeTool"), Vec::<Value>::new());
    assert_eq!(host.finish(), 0);
}
