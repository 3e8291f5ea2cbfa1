//! The `tools/code-dispatch-log` stage: a sub-call's logged copy (`tools/codeDispatch`) is
//! bounded like a result while the program receives the whole value, and a client
//! subscribed with `hooks/subscribe { event: "tools/code-dispatch-log" }` may replace it
//! through `hooks/codeDispatchLog`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::spill::{
    READ_MORE, THRESHOLD, host_spilling_into, marker_path, numbered_lines,
};
use crate::support::wire::Host;
use serde_json::{Value, json};

fn any_tool(host: &mut Host, name: &str) {
    let response = host.request(
        "tools/register",
        json!({ "tool": {
            "name": name,
            "description": "Any result.",
            "inputSchema": { "type": "object" },
            "output": { "jsonSchema": {} },
            "concurrencySafe": true
        } }),
    );
    assert!(response["result"]["registration"].is_string(), "{response}");
}

/// Runs `program` as `run_code`, answering host requests with `answer`; returns the outer
/// result and the `tools/codeDispatch` notifications.
fn run(host: &mut Host, program: &str, answer: impl FnMut(&Value) -> Value) -> (Value, Vec<Value>) {
    let response = host.request_answering(
        "tools/execute",
        json!({ "callId": "run", "name": "run_code", "arguments": { "code": program, "description": "d" } }),
        answer,
    );
    let dispatches = host.drain("tools/codeDispatch");
    (response["result"].clone(), dispatches)
}

#[test]
fn an_oversized_sub_call_is_logged_as_preview_and_locator_while_the_program_sees_it_whole() {
    let base = tempfile::tempdir().unwrap();
    let mut host = host_spilling_into(
        &base.path().join("spill"),
        json!({}),
        json!({ "tools": { "mode": "code" } }),
    );
    any_tool(&mut host, "big");
    let text = numbered_lines("entry", 30_000);
    let program = "const t = await tools.big({});\nreturn t.length + ' ' + t.split('\\n')[29999];";
    let (result, dispatches) = run(&mut host, program, |_| json!({ "value": text }));
    assert_eq!(
        result["value"]["result"],
        format!("{} entry 29999", text.len()),
        "the program had the whole value"
    );
    assert_eq!(dispatches.len(), 1);
    let logged = dispatches[0]["params"]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(logged.len() <= THRESHOLD, "{} bytes", logged.len());
    assert!(logged.starts_with("entry 0\n"));
    assert!(logged.ends_with(READ_MORE));
    let path = marker_path(logged);
    assert_eq!(std::fs::read_to_string(path).unwrap(), text);
    assert_eq!(dispatches[0]["params"]["isError"], false);
    assert_eq!(dispatches[0]["params"]["id"], "run:code:1");
}

#[test]
fn a_client_hook_replaces_the_logged_content_and_a_failing_one_keeps_it() {
    let base = tempfile::tempdir().unwrap();
    let mut host = host_spilling_into(
        &base.path().join("spill"),
        json!({ "hooks": true }),
        json!({ "tools": { "mode": "code" } }),
    );
    any_tool(&mut host, "echo");
    let response = host.request(
        "hooks/subscribe",
        json!({ "event": "tools/code-dispatch-log" }),
    );
    let subscription = response["result"]["subscription"]
        .as_str()
        .unwrap()
        .to_owned();
    let program = "const a = await tools.echo({ n: 1 });\nconst b = await tools.echo({ n: 2 });\nreturn [a, b];";
    let mut seen = Vec::new();
    let (result, dispatches) = run(&mut host, program, |request| {
        let params = &request["params"];
        match request["method"].as_str().unwrap() {
            "client/executeTool" => {
                json!({ "value": format!("secret {}", params["arguments"]["n"]) })
            }
            "hooks/codeDispatchLog" => {
                seen.push(params.clone());
                if params["dispatch"]["id"] == "run:code:1" {
                    json!({ "content": [{ "type": "text", "text": "redacted" }] })
                } else {
                    json!({ "content": "not blocks" })
                }
            }
            other => panic!("unexpected request {other}"),
        }
    });
    assert_eq!(result["value"]["result"], json!(["secret 1", "secret 2"]));
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0]["subscription"], subscription);
    let dispatch = &seen[0]["dispatch"];
    assert_eq!(dispatch["id"], "run:code:1");
    assert_eq!(dispatch["parent"], "run");
    assert_eq!(dispatch["name"], "echo");
    assert_eq!(dispatch["arguments"], json!({ "n": 1 }));
    assert_eq!(
        dispatch["content"],
        json!([{ "type": "text", "text": "secret 1" }])
    );
    assert_eq!(dispatch["isError"], false);
    assert!(
        dispatch["time"]["end"].as_f64().unwrap() >= dispatch["time"]["start"].as_f64().unwrap()
    );
    // Ends are announced as they settle, the hook's answer included: the first may be
    // shaped after the second, so the logged copies are compared by dispatch id.
    let mut dispatches: Vec<&Value> = dispatches.iter().collect();
    dispatches.sort_by_key(|d| d["params"]["id"].as_str().unwrap().to_owned());
    let contents: Vec<&Value> = dispatches.iter().map(|d| &d["params"]["content"]).collect();
    assert_eq!(
        contents,
        [
            &json!([{ "type": "text", "text": "redacted" }]),
            &json!([{ "type": "text", "text": "secret 2" }]),
        ]
    );

    // Unsubscribed: the stage is the built-in bound alone again.
    let response = host.request("hooks/unsubscribe", json!({ "subscription": subscription }));
    assert_eq!(response["result"], Value::Null, "{response}");
    let (_, dispatches) = run(&mut host, "return await tools.echo({ n: 3 });", |request| {
        assert_eq!(request["method"], "client/executeTool");
        json!({ "value": "three" })
    });
    assert_eq!(
        dispatches[0]["params"]["content"],
        json!([{ "type": "text", "text": "three" }])
    );
    let finished = host.finish_all();
    assert!(
        finished.stderr.contains(&format!(
            "tools/code-dispatch-log hook \"{subscription}\" failed"
        )),
        "{}",
        finished.stderr
    );
}
