//! `capabilities.codeDispatchEvents` through the real binary: `full` (the default) sends each
//! sub-call's start, end and `tools/result` with arguments and content; `summary` sends start
//! and end with ids, tool, timing and `isError` only and no sub-call `tools/result`; `none`
//! sends nothing per sub-call. The outer `run_code` result and its `tools/result` are the
//! same in all three.

use crate::support::code::{Framing, Host, echo_spec, with_method};
use serde_json::{Value, json};

const PROGRAM: &str = "const a = await tools.echo({ text: 'one' });\n\
    let failed = false;\n\
    try { await tools.echo({ text: 'boom' }); } catch { failed = true; }\n\
    return [a, failed];";

/// Runs [`PROGRAM`] in a host whose client declared `events` (absent: the default); returns
/// the outer result and every message that came before it.
fn run_with(events: Option<&str>) -> (Value, Vec<Value>) {
    let mut capabilities = json!({ "executeTools": true });
    if let Some(events) = events {
        capabilities["codeDispatchEvents"] = json!(events);
    }
    let mut host = Host::initialized(
        Framing::Ndjson,
        capabilities,
        json!({ "tools": { "mode": "code" }, "codeRuntime": { "poolSize": 1 } }),
    );
    host.register(echo_spec("echo"));
    let id = json!("run");
    host.send_request(
        id.clone(),
        "tools/execute",
        json!({ "callId": "c", "name": "run_code",
            "arguments": { "code": PROGRAM, "description": "events" } }),
    );
    let (response, mut transcript) = host.serve_until(&id, |call| {
        let text = call["arguments"]["text"].clone();
        Some(if text == "boom" {
            Err("no".to_owned())
        } else {
            Ok(json!({ "value": text }))
        })
    });
    // The outer call's own `tools/result` may follow its response.
    assert_eq!(host.finish(), 0);
    transcript.retain(|message| message.get("method").is_some());
    (response["result"].clone(), transcript)
}

fn sub_call_results(transcript: &[Value]) -> usize {
    with_method(transcript, "tools/result")
        .into_iter()
        .filter(|message| message["params"]["execution"]["parent"].is_string())
        .count()
}

fn keys(message: &Value) -> Vec<String> {
    let mut keys: Vec<String> = message["params"]
        .as_object()
        .map(|params| params.keys().cloned().collect())
        .unwrap_or_default();
    keys.sort();
    keys
}

#[test]
fn full_dispatch_events_are_the_default_and_carry_arguments_and_content() {
    for events in [None, Some("full")] {
        let (result, transcript) = run_with(events);
        assert_eq!(result["value"]["result"], json!(["one", true]), "{result}");
        let starts = with_method(&transcript, "tools/codeDispatchStart");
        let ends = with_method(&transcript, "tools/codeDispatch");
        assert_eq!((starts.len(), ends.len()), (2, 2), "{transcript:?}");
        assert_eq!(starts[0]["params"]["arguments"], json!({ "text": "one" }));
        assert_eq!(ends[0]["params"]["content"][0]["text"], json!("one"));
        assert_eq!(ends[1]["params"]["isError"], json!(true));
        assert_eq!(sub_call_results(&transcript), 2, "{transcript:?}");
    }
}

#[test]
fn summary_dispatch_events_carry_ids_tool_timing_and_outcome_only() {
    let (result, transcript) = run_with(Some("summary"));
    assert_eq!(result["value"]["result"], json!(["one", true]), "{result}");
    let starts = with_method(&transcript, "tools/codeDispatchStart");
    let ends = with_method(&transcript, "tools/codeDispatch");
    assert_eq!((starts.len(), ends.len()), (2, 2), "{transcript:?}");
    for start in &starts {
        assert_eq!(keys(start), ["id", "name", "parent", "time"], "{start}");
    }
    for end in &ends {
        assert_eq!(
            keys(end),
            ["id", "isError", "name", "parent", "time"],
            "{end}"
        );
        assert!(end["params"]["time"]["end"].as_f64() >= end["params"]["time"]["start"].as_f64());
    }
    assert_eq!(ends[0]["params"]["id"], json!("c:code:1"));
    assert_eq!(ends[0]["params"]["name"], json!("echo"));
    assert_eq!(
        (&ends[0]["params"]["isError"], &ends[1]["params"]["isError"]),
        (&json!(false), &json!(true))
    );
    assert_eq!(sub_call_results(&transcript), 0, "{transcript:?}");
}

#[test]
fn no_dispatch_events_leave_only_the_run_itself() {
    let (result, transcript) = run_with(Some("none"));
    assert_eq!(result["value"]["result"], json!(["one", true]), "{result}");
    assert!(with_method(&transcript, "tools/codeDispatchStart").is_empty());
    assert!(with_method(&transcript, "tools/codeDispatch").is_empty());
    assert_eq!(sub_call_results(&transcript), 0, "{transcript:?}");
}

#[test]
fn an_unknown_dispatch_detail_is_refused_at_initialize() {
    let mut host = crate::support::wire::Host::spawn(Framing::Ndjson);
    let response = host.request(
        "initialize",
        json!({ "protocolVersion": "1",
            "capabilities": { "codeDispatchEvents": "some" } }),
    );
    assert_eq!(response["error"]["code"], json!(-32602), "{response}");
    assert!(
        response["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("codeDispatchEvents")
                || message.contains("unknown variant")),
        "{response}"
    );
}
