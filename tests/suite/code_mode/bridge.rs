//! Code Mode's binding bridge through the real binary: correlation ids and parents, dispatch
//! events, scheduling (submission order, the `maxParallelSubCalls` bound, exclusive
//! barriers), abandonment and cancellation at settlement, deferred contexts, live logs and
//! the `code` presentation's routing.
//!
//! Scheduling is proven from the order of the host's output, never from timing: the test
//! client holds `client/executeTool` requests unanswered to see how many are outstanding at
//! once, and the host's single writer queues `tools/result` of a sub-call before the call
//! frees its place, so a call that starts in a freed place is preceded by that result.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::code as code_support;

use code_support::{FRAMINGS, Framing, Host, any_spec, echo_spec, with_method};
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// The dispatch number of a sub-call id `<call>:code:<n>`.
fn number(call: &str, id: &Value) -> u64 {
    id.as_str()
        .and_then(|id| id.strip_prefix(&format!("{call}:code:")))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{id} is not a dispatch id of {call}"))
}

/// The dispatch number a message is about, if it is a sub-call message of `call`.
fn about(call: &str, message: &Value) -> Option<(String, u64)> {
    let method = message["method"].as_str()?;
    let id = match method {
        "client/executeTool" => &message["params"]["callId"],
        "tools/result" => &message["params"]["execution"]["callId"],
        "tools/codeDispatchStart" | "tools/codeDispatch" => &message["params"]["id"],
        _ => return None,
    };
    let prefix = format!("{call}:code:");
    id.as_str()?.strip_prefix(&prefix)?;
    Some((method.to_string(), number(call, id)))
}

/// The sub-call messages of `call` in `transcript`, as `(method, n)` in arrival order.
fn sub_call_trace(call: &str, transcript: &[Value]) -> Vec<(String, u64)> {
    transcript.iter().filter_map(|m| about(call, m)).collect()
}

fn trace(entries: &[(&str, u64)]) -> Vec<(String, u64)> {
    entries.iter().map(|(m, n)| (m.to_string(), *n)).collect()
}

#[test]
fn sub_calls_carry_their_dispatch_id_and_the_outer_token_in_both_framings() {
    for framing in FRAMINGS {
        let mut host = Host::code_mode(framing, "code", json!({}));
        host.register(echo_spec("echo"));
        host.send_run_code(
            json!("outer"),
            "run",
            "const a = await tools.echo({ text: 'one' });\nconst b = await tools.echo({ text: 'two' });\nreturn [a, b];",
        );
        let (response, transcript) = host.serve_until(&json!("outer"), |call| {
            Some(Ok(json!({ "value": call["arguments"]["text"] })))
        });
        assert_eq!(
            response["result"]["value"],
            json!({ "logs": [], "result": ["one", "two"] }),
            "{framing:?}"
        );
        // Sequential awaits: each sub-call enters, is executed, settles and is reported
        // before the next one is submitted.
        let expected: Vec<(&str, u64)> = [1, 2]
            .into_iter()
            .flat_map(|n| {
                [
                    ("tools/codeDispatchStart", n),
                    ("client/executeTool", n),
                    ("tools/result", n),
                    ("tools/codeDispatch", n),
                ]
            })
            .collect();
        assert_eq!(
            sub_call_trace("run", &transcript),
            trace(&expected),
            "{framing:?}"
        );
        let results = with_method(&transcript, "tools/result");
        let outer = &results.last().unwrap()["params"]["execution"];
        assert_eq!(outer["callId"], "run");
        assert_eq!(outer.get("parent"), None);
        let token = outer["token"].clone();
        for (n, text) in [(1, "one"), (2, "two")] {
            let id = format!("run:code:{n}");
            let call = with_method(&transcript, "client/executeTool")[n - 1]["params"].clone();
            assert_eq!(call["callId"], id);
            assert_eq!(call["parent"], token);
            assert_eq!(call["name"], "echo");
            assert_eq!(call["arguments"], json!({ "text": text }));
            assert_ne!(call["token"], token, "a sub-call has its own token");
            let result = &results[n - 1]["params"];
            assert_eq!(result["execution"]["callId"], id);
            assert_eq!(result["execution"]["parent"], token);
            assert_eq!(result["execution"]["token"], call["token"]);
            let start =
                with_method(&transcript, "tools/codeDispatchStart")[n - 1]["params"].clone();
            let time = start["time"].as_f64().unwrap();
            assert_eq!(
                start,
                json!({ "id": id, "parent": "run", "name": "echo", "arguments": { "text": text }, "time": start["time"] })
            );
            let end = with_method(&transcript, "tools/codeDispatch")[n - 1]["params"].clone();
            assert_eq!(
                end,
                json!({ "id": id, "parent": "run", "name": "echo", "arguments": { "text": text },
                    "content": [{ "type": "text", "text": text }], "isError": false, "time": end["time"] })
            );
            let (start_ms, end_ms) = (
                end["time"]["start"].as_f64().unwrap(),
                end["time"]["end"].as_f64().unwrap(),
            );
            assert_eq!(start_ms, time, "the pair shares its start");
            assert!(start_ms <= end_ms && start_ms > 1.6e12, "{}", end["time"]);
        }
        assert_eq!(host.finish(), 0);
    }
}

/// Runs `calls` concurrency-safe sub-calls submitted at once under `maxParallelSubCalls:
/// bound` (None: the default), answering only when `bound` are outstanding (or all that are
/// left), and checks that at most `bound` ever overlap and that each call beyond the first
/// `bound` starts only after an earlier one was answered.
fn check_overlap_bound(framing: Framing, bound: Option<u64>, calls: u64) {
    let config = match bound {
        Some(bound) => json!({ "tools": { "maxParallelSubCalls": bound } }),
        None => json!({}),
    };
    let bound = bound.unwrap_or(10);
    let mut host = Host::code_mode(framing, "code", config);
    host.register(any_spec("safe", true));
    let program = format!(
        "const calls = [];\nfor (let i = 1; i <= {calls}; i++) calls.push(tools.safe({{ i }}));\nreturn (await Promise.all(calls)).map((v) => v.i);"
    );
    host.send_run_code(json!("outer"), "run", &program);
    let mut outstanding: Vec<Value> = Vec::new();
    let (mut answered, mut most) = (0u64, 0usize);
    let mut started = BTreeSet::new();
    let response = loop {
        let message = host.next_message();
        if message.get("method").is_none() && message["id"] == "outer" {
            break message;
        }
        match about("run", &message) {
            Some((method, n)) if method == "tools/codeDispatchStart" => {
                started.insert(n);
                // Only a freed place lets a call beyond the first `bound` start, and a place
                // frees when an earlier call's dispatch (the client's answer) has ended.
                assert!(
                    started.len() as u64 <= bound + answered,
                    "call {n} started with {answered} calls answered (bound {bound})"
                );
            }
            Some((method, _)) if method == "client/executeTool" => {
                outstanding.push(message);
                most = most.max(outstanding.len());
                assert!(
                    outstanding.len() as u64 <= bound,
                    "more than {bound} outstanding"
                );
                let left = calls - answered;
                if outstanding.len() as u64 == bound.min(left) {
                    // Answer the newest first: completion order must not matter.
                    let request = outstanding.pop().unwrap();
                    host.answer(&request, json!({ "value": request["params"]["arguments"] }));
                    answered += 1;
                }
            }
            _ => {}
        }
        // Once one was answered, every other outstanding call may be answered too.
        if answered > 0 && calls - answered <= outstanding.len() as u64 {
            for request in outstanding.drain(..) {
                host.answer(&request, json!({ "value": request["params"]["arguments"] }));
                answered += 1;
            }
        }
    };
    let order: Vec<u64> = (1..=calls).collect();
    assert_eq!(
        response["result"]["value"],
        json!({ "logs": [], "result": order })
    );
    assert_eq!(
        most as u64,
        bound.min(calls),
        "the pool filled up to its bound"
    );
    assert_eq!(started, order.into_iter().collect::<BTreeSet<_>>());
    assert_eq!(host.finish(), 0);
}

#[test]
fn concurrency_safe_sub_calls_overlap_up_to_max_parallel_sub_calls() {
    check_overlap_bound(Framing::Ndjson, Some(3), 8);
}

#[test]
fn one_parallel_sub_call_restores_serial_dispatch() {
    check_overlap_bound(Framing::Lsp, Some(1), 4);
}

#[test]
fn the_default_bound_is_ten() {
    check_overlap_bound(Framing::Ndjson, None, 12);
}

/// Submits the calls of `program` at once and expects them to run in `waves`: every call of
/// a wave is outstanding together before any is answered, and no call of a later wave
/// starts before every call of the earlier waves was answered (its dispatch ended).
fn check_waves(program: &str, waves: &[&[u64]]) {
    let mut host = Host::code_mode(Framing::Ndjson, "code", json!({}));
    host.register(any_spec("safe", true));
    host.register(any_spec("exclusive", false));
    host.send_run_code(json!("outer"), "run", program);
    let mut wave = 0;
    let mut outstanding: Vec<Value> = Vec::new();
    let mut answered = BTreeSet::new();
    let mut transcript = Vec::new();
    let response = loop {
        let message = host.next_message();
        if message.get("method").is_none() && message["id"] == "outer" {
            break message;
        }
        transcript.push(message.clone());
        match about("run", &message) {
            Some((method, n)) if method == "tools/codeDispatchStart" => {
                assert!(
                    waves[wave].contains(&n),
                    "call {n} started during wave {wave}"
                );
                let earlier: BTreeSet<u64> = waves[..wave]
                    .iter()
                    .flat_map(|w| w.iter().copied())
                    .collect();
                assert!(
                    earlier.is_subset(&answered),
                    "call {n} started before {earlier:?} were answered"
                );
            }
            Some((method, n)) if method == "client/executeTool" => {
                assert!(
                    waves[wave].contains(&n),
                    "call {n} dispatched during wave {wave}"
                );
                outstanding.push(message);
                if outstanding.len() == waves[wave].len() {
                    for request in outstanding.drain(..).rev() {
                        answered.extend(about("run", &request).map(|(_, n)| n));
                        host.answer(&request, json!({ "value": request["params"]["name"] }));
                    }
                    wave += 1;
                }
            }
            _ => {}
        }
    };
    assert_eq!(wave, waves.len(), "{transcript:#?}");
    let starts: Vec<u64> = with_method(&transcript, "tools/codeDispatchStart")
        .iter()
        .map(|s| number("run", &s["params"]["id"]))
        .collect();
    let all: Vec<u64> = waves.iter().flat_map(|w| w.iter().copied()).collect();
    assert_eq!(starts, all, "calls start in submission order");
    assert_eq!(response["result"]["isError"], false, "{response}");
    assert_eq!(host.finish(), 0);
}

#[test]
fn an_exclusive_sub_call_drains_the_pool_runs_alone_and_bars_later_calls() {
    check_waves(
        "const s = (i) => tools.safe({ i }), x = (i) => tools.exclusive({ i });\nreturn await Promise.all([s(1), s(2), x(3), s(4), s(5), x(6), x(7), s(8)]);",
        &[&[1, 2], &[3], &[4, 5], &[6], &[7], &[8]],
    );
}

#[test]
fn sub_call_contexts_are_deferred_through_the_outer_result_in_dispatch_order() {
    let mut host = Host::code_mode(Framing::Lsp, "code", json!({}));
    host.register(any_spec("a", true));
    host.register(any_spec("b", true));
    host.send_run_code(
        json!("outer"),
        "run",
        "return await Promise.all([tools.a({}), tools.b({})]);",
    );
    let first = host.next_with_method("client/executeTool");
    let second = host.next_with_method("client/executeTool");
    // Settle in reverse dispatch order; the contexts still follow dispatch order.
    for request in [&second, &first] {
        let name = request["params"]["name"].as_str().unwrap().to_string();
        let context =
            json!({ "role": "user", "content": format!("context of {name}"), "source": name });
        host.answer(
            request,
            json!({ "value": name, "additionalContexts": [context] }),
        );
    }
    let response = host.response_to(&json!("outer"));
    assert_eq!(
        response["result"],
        json!({
            "isError": false,
            "value": { "logs": [], "result": ["a", "b"] },
            "content": [{ "type": "text", "text": "[\n  \"a\",\n  \"b\"\n]" }],
            "additionalContexts": [
                { "role": "user", "content": "context of a", "source": "a" },
                { "role": "user", "content": "context of b", "source": "b" }
            ]
        })
    );
    assert_eq!(host.finish(), 0);
}

#[test]
fn settlement_aborts_in_flight_sub_calls_and_abandons_queued_ones_before_answering() {
    let mut host = Host::code_mode(Framing::Ndjson, "code", json!({}));
    host.register(any_spec("hang", true));
    host.register(any_spec("ping", true));
    host.register(any_spec("exclusive", false));
    // 1 hangs, 2 is answered, 3 waits for 1 behind its barrier when the program returns.
    host.send_run_code(
        json!("outer"),
        "run",
        "tools.hang({}).catch(() => {});\nconst pong = tools.ping({});\ntools.exclusive({}).catch(() => {});\nawait pong;\nreturn 'done';",
    );
    let mut hang = None;
    let (response, transcript) =
        host.serve_until(&json!("outer"), |call| match call["name"].as_str() {
            Some("hang") => {
                hang = Some(call["callId"].clone());
                None
            }
            // Answered only once `hang` is in flight, so it surely is when the run settles.
            Some("ping") if hang.is_some() => Some(Ok(json!({ "value": "pong" }))),
            other => panic!("unexpected call {other:?} (hang seen: {})", hang.is_some()),
        });
    assert_eq!(
        response["result"],
        json!({ "isError": false, "value": { "logs": [], "result": "done" },
            "content": [{ "type": "text", "text": "done" }] })
    );
    // Everything of the run, the abort of call 1 included, was written before the answer.
    let hang_request = with_method(&transcript, "client/executeTool")
        .into_iter()
        .find(|r| r["params"]["name"] == "hang")
        .unwrap()
        .clone();
    let cancels = with_method(&transcript, "$/cancelRequest");
    assert_eq!(cancels.len(), 1, "{transcript:#?}");
    assert_eq!(cancels[0]["params"]["id"], hang_request["id"]);
    let ends: Vec<Value> = with_method(&transcript, "tools/codeDispatch")
        .into_iter()
        .map(|e| {
            json!([
                e["params"]["id"],
                e["params"]["isError"],
                e["params"]["content"]
            ])
        })
        .collect();
    let mut ends = ends;
    ends.sort_by_key(|e| e[0].as_str().unwrap().to_string());
    assert_eq!(
        ends,
        vec![
            json!(["run:code:1", true, [{ "type": "text", "text": "Error: tool call aborted" }]]),
            json!(["run:code:2", false, [{ "type": "text", "text": "pong" }]]),
        ]
    );
    // The abandoned call 3 left no trace: no start, no dispatch, no tools/result.
    let numbers: BTreeSet<u64> = sub_call_trace("run", &transcript)
        .iter()
        .map(|(_, n)| *n)
        .collect();
    assert_eq!(numbers, BTreeSet::from([1, 2]), "{transcript:#?}");
    // The host keeps serving runs.
    let after = host.run_code("again", "return 'still serving'");
    assert_eq!(after["value"]["result"], "still serving");
    assert_eq!(host.finish(), 0);
}

#[test]
fn cancelling_the_outer_call_cancels_the_sub_call_at_the_client() {
    for framing in FRAMINGS {
        let mut host = Host::code_mode(framing, "code", json!({}));
        host.register(any_spec("hang", true));
        host.send_run_code(
            json!(41),
            "run",
            "console.log('waiting');\nawait tools.hang({});\nconsole.log('never');",
        );
        let call = host.next_with_method("client/executeTool");
        assert_eq!(call["params"]["callId"], "run:code:1");
        host.send(
            &json!({ "jsonrpc": "2.0", "method": "$/cancelRequest", "params": { "id": 41 } }),
        );
        let forwarded = host.next_with_method("$/cancelRequest");
        assert_eq!(forwarded["params"]["id"], call["id"], "{framing:?}");
        let response = host.response_to(&json!(41));
        assert_eq!(
            response["result"],
            json!({
                "isError": true,
                "error": {
                    "message": "code run failed (abort): run aborted\nCaptured output:\nwaiting",
                    "info": { "name": "CodeRunFailedError", "code": "CODE_RUN_FAILED" }
                },
                "content": [{ "type": "text", "text": "Error: code run failed (abort): run aborted\nCaptured output:\nwaiting" }]
            }),
            "{framing:?}"
        );
        let dispatched = host.next_with_method("tools/codeDispatch");
        assert_eq!(dispatched["params"]["isError"], true);
        assert_eq!(
            dispatched["params"]["content"],
            json!([{ "type": "text", "text": "Error: tool call aborted" }])
        );
        // A late answer to the cancelled request is ignored and the host keeps serving.
        host.answer(&call, json!({ "value": "late" }));
        let after = host.run_code("again", "return 1");
        assert_eq!(after["value"], json!({ "logs": [], "result": 1 }));
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn program_output_streams_live_while_the_run_waits() {
    let mut host = Host::code_mode(Framing::Lsp, "both", json!({}));
    host.register(any_spec("wait", true));
    host.send_run_code(
        json!("outer"),
        "live",
        "console.log('before');\nconsole.warn('still before');\nconst v = await tools.wait({});\nconsole.error('after', v);\nreturn v;",
    );
    let call = host.next_with_method("client/executeTool");
    // The run is still waiting on us, and its first lines already arrived.
    let lines: Vec<Value> = host
        .inbox
        .iter()
        .filter(|m| m["method"] == "code/log")
        .map(|m| m["params"].clone())
        .collect();
    assert_eq!(
        lines,
        vec![
            json!({ "callId": "live", "stream": "log", "text": "before" }),
            json!({ "callId": "live", "stream": "warn", "text": "still before" }),
        ]
    );
    host.inbox.retain(|m| m["method"] != "code/log");
    host.answer(&call, json!({ "value": 7 }));
    let (response, transcript) = host.serve_until(&json!("outer"), |_| None);
    let lines: Vec<Value> = with_method(&transcript, "code/log")
        .iter()
        .map(|m| m["params"].clone())
        .collect();
    assert_eq!(
        lines,
        vec![json!({ "callId": "live", "stream": "error", "text": "after 7" })]
    );
    assert_eq!(
        response["result"]["content"],
        json!([{ "type": "text", "text": "before\nstill before\nafter 7\n7" }])
    );
    assert_eq!(host.finish(), 0);
}

#[test]
fn under_code_a_direct_call_is_routed_back_to_run_code_before_anything_runs() {
    let mut host = Host::code_mode(Framing::Ndjson, "code", json!({}));
    host.register(echo_spec("echo"));
    host.send_request(
        json!("direct"),
        "tools/execute",
        json!({ "callId": "d", "name": "echo", "arguments": { "text": "hi" } }),
    );
    let (response, transcript) =
        host.serve_until(&json!("direct"), |call| panic!("dispatched {call}"));
    let message = "unknown tool \"echo\": only `run_code` is callable directly — call `echo` from inside a `run_code` program instead";
    assert_eq!(
        response["result"],
        json!({
            "isError": true,
            "error": { "message": message, "info": { "name": "HarnessError", "code": "UNKNOWN_TOOL" } },
            "content": [{ "type": "text", "text": format!("Error: {message}") }]
        })
    );
    assert!(with_method(&transcript, "client/executeTool").is_empty());
    // Invalid arguments make no difference: the routing comes first.
    let invalid = host.request(
        "tools/execute",
        json!({ "callId": "e", "name": "echo", "arguments": { "text": 5 } }),
    );
    assert_eq!(invalid["result"]["error"]["message"], message);
    // The same tool from inside a program is a sub-dispatch and is exempt.
    host.send_run_code(
        json!("program"),
        "run",
        "return await tools.echo({ text: 'inside' });",
    );
    let (response, _) = host.serve_until(&json!("program"), |call| {
        Some(Ok(json!({ "value": call["arguments"]["text"] })))
    });
    assert_eq!(
        response["result"]["value"],
        json!({ "logs": [], "result": "inside" })
    );
    assert_eq!(host.finish(), 0);

    // Under `both` the direct call runs.
    let mut host = Host::code_mode(Framing::Ndjson, "both", json!({}));
    host.register(echo_spec("echo"));
    host.send_request(
        json!("direct"),
        "tools/execute",
        json!({ "callId": "d", "name": "echo", "arguments": { "text": "hi" } }),
    );
    let (response, _) = host.serve_until(&json!("direct"), |_| Some(Ok(json!({ "value": "hi" }))));
    assert_eq!(response["result"]["value"], "hi");
    assert_eq!(host.finish(), 0);
}

#[test]
fn run_code_arguments_are_validated_and_a_blank_description_is_refused() {
    let mut host = Host::code_mode(Framing::Lsp, "code", json!({}));
    let cases = [
        (
            json!({ "code": "return 1" }),
            "invalid arguments: missing required property \"description\"",
            Some("INVALID_ARGS"),
        ),
        (
            json!({ "code": 5, "description": "d" }),
            "invalid arguments: \"code\" must be a string",
            Some("INVALID_ARGS"),
        ),
        (
            json!({ "code": "return 1", "description": "" }),
            "invalid description: expected a non-empty string",
            None,
        ),
        (
            json!({ "code": "return 1", "description": " \n\t" }),
            "invalid description: expected a non-empty string",
            None,
        ),
    ];
    for (arguments, message, code) in cases {
        let response = host.request(
            "tools/execute",
            json!({ "callId": "c", "name": "run_code", "arguments": arguments }),
        );
        let result = &response["result"];
        assert_eq!(result["isError"], true, "{response}");
        assert_eq!(result["error"]["message"], message, "{response}");
        assert_eq!(result["error"]["info"]["code"].as_str(), code, "{response}");
        assert_eq!(
            result["content"],
            json!([{ "type": "text", "text": format!("Error: {message}") }])
        );
    }
    assert_eq!(host.finish(), 0);
}

#[test]
fn the_code_prompt_lists_only_run_code_with_the_rule_and_a_deterministic_sdk() {
    let mut host = Host::code_mode(Framing::Ndjson, "code", json!({}));
    host.register(echo_spec("zeta"));
    host.register(echo_spec("alpha"));
    let prompt = host.request("tools/prompt", json!({}))["result"].clone();
    let tools: Vec<&str> = prompt["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["run_code"]);
    let sections: Vec<(&str, i64)> = prompt["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["order"].as_i64().unwrap()))
        .collect();
    assert_eq!(sections, [("tools:code-only", 99), ("tools:sdk", 150)]);
    assert_eq!(
        prompt["sections"][0]["text"],
        "Only `run_code` is callable directly. Every other tool in the SDK below is reachable only from inside a `run_code` program as `await tools.<name>(args)`; calling it directly fails."
    );
    let sdk = prompt["sections"][1]["text"].as_str().unwrap();
    let (alpha, zeta) = (sdk.find("alpha").unwrap(), sdk.find("zeta").unwrap());
    assert!(alpha < zeta, "lexicographic tool order:\n{sdk}");
    assert!(!sdk.contains("run_code:"), "run_code is no binding:\n{sdk}");
    let again = host.request("tools/prompt", json!({}))["result"].clone();
    assert_eq!(again, prompt, "byte-identical for an unchanged tool set");
    assert_eq!(host.finish(), 0);
}
