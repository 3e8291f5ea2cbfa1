//! Client hooks and approval over the wire, through the real binary: subscription order and
//! scope, every pre-execute / approval / guard / post-execute decision path, and every way a
//! hook can fail (error, garbage, timeout, disconnect), each failing the call closed.

#![allow(clippy::unwrap_used)]

use crate::support::policy as policy_support;

use policy_support::{Framing, Host, Reply, echo_spec};
use serde_json::{Value, json};

/// What a scripted client answers: the first rule whose key is the request's method, or its
/// method and subscription (`"hooks/guard hook:2"`), wins. Without a rule, hooks allow,
/// abstain or accept, `client/executeTool` echoes `text`, and anything else stays silent.
fn script(rules: Vec<(&'static str, Reply)>) -> impl FnMut(&Value) -> Reply {
    move |request| {
        let method = request["method"].as_str().unwrap_or_default();
        let keyed = format!(
            "{method} {}",
            request["params"]["subscription"].as_str().unwrap_or("")
        );
        if let Some((_, reply)) = rules
            .iter()
            .find(|(key, _)| *key == method || *key == keyed)
        {
            return reply.clone();
        }
        match method {
            "hooks/preExecute" => Reply::Result(json!({ "kind": "allow" })),
            "hooks/guard" => Reply::Result(json!({})),
            "hooks/postExecute" => Reply::Result(json!({ "kind": "accept" })),
            "client/executeTool" => {
                Reply::Result(json!({ "value": request["params"]["arguments"]["text"] }))
            }
            _ => Reply::Silent,
        }
    }
}

/// `"<method> [<subscription>] <tool>"`: one host→client request, for transcripts.
fn summary(request: &Value) -> String {
    let params = &request["params"];
    let method = request["method"].as_str().unwrap_or_default();
    let name = params["execution"]["name"]
        .as_str()
        .or(params["name"].as_str())
        .unwrap_or_default();
    match params["subscription"].as_str() {
        Some(subscription) => format!("{method} {subscription} {name}"),
        None => format!("{method} {name}"),
    }
}

fn summaries(requests: &[Value]) -> Vec<String> {
    requests.iter().map(summary).collect()
}

fn result(reply: Value) -> Reply {
    Reply::Result(reply)
}

fn ok(text: &str) -> Value {
    json!({ "isError": false, "value": text, "content": [{ "type": "text", "text": text }] })
}

fn failed(message: &str) -> Value {
    json!({
        "isError": true,
        "error": { "message": message },
        "content": [{ "type": "text", "text": format!("Error: {message}") }]
    })
}

fn echo(call_id: &str) -> Value {
    json!({ "callId": call_id, "name": "echo", "arguments": { "text": "hi" } })
}

/// A host with `echo` registered and the given capabilities (`executeTools` and `hooks` on).
fn host_with(approval: bool, config: Value) -> Host {
    let capabilities = json!({ "executeTools": true, "hooks": true, "approval": approval });
    let mut host = Host::initialized(Framing::Ndjson, capabilities, config);
    let registered = host.request("tools/register", json!({ "tool": echo_spec("echo") }));
    assert_eq!(
        registered["result"]["registration"], "tool:1",
        "{registered}"
    );
    host
}

fn subscribe(host: &mut Host, params: Value) -> String {
    let response = host.request("hooks/subscribe", params);
    response["result"]["subscription"]
        .as_str()
        .unwrap_or_else(|| panic!("{response}"))
        .to_string()
}

#[test]
fn hooks_run_lower_order_first_and_see_the_whole_execution() {
    let mut host = host_with(false, json!({}));
    let subscriptions = [
        ("tools/pre-execute", 10),
        ("tools/pre-execute", -5),
        ("tools/pre-execute", 0),
        ("tools/guard", 1),
        ("tools/guard", -1),
        ("tools/post-execute", 2),
        ("tools/post-execute", 1),
    ];
    for (event, order) in subscriptions {
        subscribe(&mut host, json!({ "event": event, "order": order }));
    }
    subscribe(&mut host, json!({ "event": "tools/pre-execute" }));
    let (outcome, requests) = host.execute(echo("c1"), script(vec![]));
    assert_eq!(outcome, ok("hi"));
    assert_eq!(
        summaries(&requests),
        [
            "hooks/preExecute hook:2 echo",
            "hooks/preExecute hook:3 echo",
            "hooks/preExecute hook:8 echo",
            "hooks/preExecute hook:1 echo",
            "hooks/guard hook:5 echo",
            "hooks/guard hook:4 echo",
            "client/executeTool echo",
            "hooks/postExecute hook:7 echo",
            "hooks/postExecute hook:6 echo",
        ]
    );
    let execution =
        json!({ "token": "t1", "callId": "c1", "name": "echo", "arguments": { "text": "hi" } });
    assert_eq!(
        requests[0]["params"],
        json!({ "subscription": "hook:2", "execution": execution })
    );
    assert_eq!(
        requests[4]["params"],
        json!({ "subscription": "hook:5", "execution": execution })
    );
    assert_eq!(
        requests[7]["params"],
        json!({ "subscription": "hook:7", "execution": execution, "result": ok("hi") })
    );
    assert_eq!(host.finish(), 0);
}

#[test]
fn a_later_post_hook_sees_what_an_earlier_one_replaced() {
    let mut host = host_with(false, json!({}));
    subscribe(
        &mut host,
        json!({ "event": "tools/post-execute", "order": 1 }),
    );
    subscribe(
        &mut host,
        json!({ "event": "tools/post-execute", "order": 2 }),
    );
    let rules = vec![(
        "hooks/postExecute hook:1",
        result(json!({ "kind": "accept", "value": "first" })),
    )];
    let (outcome, requests) = host.execute(echo("c1"), script(rules));
    assert_eq!(outcome, ok("first"));
    assert_eq!(requests[2]["params"]["result"], ok("first"));
    assert_eq!(host.finish(), 0);
}

#[test]
fn agent_scoped_hooks_see_only_that_agents_calls_including_its_run_code_sub_calls() {
    let mut host = host_with(false, json!({}));
    for agent in ["a", "b"] {
        let opened = host.request("agents/open", json!({ "agent": agent }));
        assert_eq!(opened["result"], Value::Null, "{opened}");
    }
    let presented = host.request("tools/presentAs", json!({ "agent": "a", "mode": "code" }));
    assert!(
        presented["result"]["registration"].is_string(),
        "{presented}"
    );
    subscribe(
        &mut host,
        json!({ "event": "tools/pre-execute", "agent": "a" }),
    );
    subscribe(&mut host, json!({ "event": "tools/guard", "agent": "a" }));
    subscribe(
        &mut host,
        json!({ "event": "tools/post-execute", "agent": "a" }),
    );

    for agent in [None, Some("b")] {
        let mut call = echo("c");
        if let Some(agent) = agent {
            call["agent"] = json!(agent);
        }
        let (outcome, requests) = host.execute(call, script(vec![]));
        assert_eq!(outcome, ok("hi"), "{agent:?}");
        assert_eq!(
            summaries(&requests),
            ["client/executeTool echo"],
            "{agent:?}"
        );
    }

    // Under `code`, a direct call is refused before any policy sees it.
    let mut direct = echo("d");
    direct["agent"] = json!("a");
    let (outcome, requests) = host.execute(direct, script(vec![]));
    assert_eq!(
        outcome["error"]["message"],
        "unknown tool \"echo\": only `run_code` is callable directly — call `echo` from inside a `run_code` program instead"
    );
    assert_eq!(summaries(&requests), Vec::<String>::new());

    let program = json!({ "callId": "r", "name": "run_code", "agent": "a", "arguments": {
        "code": "return await tools.echo({ text: \"sub\" });", "description": "echo once" } });
    let (outcome, requests) = host.execute(program, script(vec![]));
    assert_eq!(
        outcome["value"],
        json!({ "logs": [], "result": "sub" }),
        "{outcome}"
    );
    assert_eq!(
        summaries(&requests),
        [
            "hooks/preExecute hook:1 run_code",
            "hooks/guard hook:2 run_code",
            "hooks/preExecute hook:1 echo",
            "hooks/guard hook:2 echo",
            "client/executeTool echo",
            "hooks/postExecute hook:3 echo",
            "hooks/postExecute hook:3 run_code",
        ]
    );
    let outer = &requests[0]["params"]["execution"];
    assert_eq!(outer["agent"], "a");
    assert_eq!(
        requests[2]["params"]["execution"],
        json!({ "token": requests[2]["params"]["execution"]["token"], "callId": "r:code:1",
                "name": "echo", "arguments": { "text": "sub" }, "agent": "a", "parent": outer["token"] })
    );
    assert_ne!(requests[2]["params"]["execution"]["token"], outer["token"]);
    assert_eq!(host.finish(), 0);
}

#[test]
fn unsubscribing_stops_a_hook_and_a_second_unsubscribe_is_an_error() {
    let mut host = host_with(false, json!({}));
    let subscription = subscribe(&mut host, json!({ "event": "tools/pre-execute" }));
    let deny = vec![(
        "hooks/preExecute",
        result(json!({ "kind": "deny", "reason": "no" })),
    )];
    let (outcome, _) = host.execute(echo("c1"), script(deny.clone()));
    assert_eq!(outcome, failed("no"));
    let unsubscribed = host.request("hooks/unsubscribe", json!({ "subscription": subscription }));
    assert_eq!(unsubscribed["result"], Value::Null, "{unsubscribed}");
    let (outcome, requests) = host.execute(echo("c2"), script(deny));
    assert_eq!(outcome, ok("hi"));
    assert_eq!(summaries(&requests), ["client/executeTool echo"]);
    let again = host.request("hooks/unsubscribe", json!({ "subscription": subscription }));
    assert_eq!(
        again["error"],
        json!({ "code": -32803, "message": "unknown subscription \"hook:1\"",
                "data": { "code": "UNKNOWN_SUBSCRIPTION" } })
    );
    assert_eq!(host.finish(), 0);
}

#[test]
fn subscribing_needs_the_hooks_capability_and_an_open_agent() {
    let mut host = Host::initialized(Framing::Lsp, json!({ "executeTools": true }), json!({}));
    let refused = host.request("hooks/subscribe", json!({ "event": "tools/pre-execute" }));
    assert_eq!(
        refused["error"],
        json!({ "code": -32803,
                "message": "hooks/subscribe needs the hooks client capability (declare capabilities.hooks in initialize)",
                "data": { "code": "CLIENT_CAPABILITY" } })
    );
    assert_eq!(host.finish(), 0);

    let mut host = host_with(false, json!({}));
    let unknown = host.request(
        "hooks/subscribe",
        json!({ "event": "tools/guard", "agent": "ghost" }),
    );
    assert_eq!(
        unknown["error"],
        json!({ "code": -32803, "message": "unknown agent \"ghost\" (open it with agents/open first)",
                "data": { "code": "UNKNOWN_AGENT" } })
    );
    let bad_event = host.request("hooks/subscribe", json!({ "event": "tools/result" }));
    assert_eq!(bad_event["error"]["code"], -32602, "{bad_event}");
    assert_eq!(host.finish(), 0);
}

/// One decision path: the client's answers, the requests it expects, the call's result.
struct Path {
    name: &'static str,
    approval: bool,
    rules: Vec<(&'static str, Reply)>,
    requests: &'static [&'static str],
    outcome: Value,
}

#[test]
fn every_pre_execute_approval_and_guard_decision_path() {
    let allow = || result(json!({ "kind": "allow" }));
    let ask = |reason: Option<&str>| match reason {
        Some(reason) => result(json!({ "kind": "ask", "reason": reason })),
        None => result(json!({ "kind": "ask" })),
    };
    let approve = |outcome: &str| ("client/approve", result(json!({ "outcome": outcome })));
    let paths = vec![
        Path {
            name: "allow",
            approval: true,
            rules: vec![("hooks/preExecute", allow())],
            requests: &[
                "hooks/preExecute hook:1 echo",
                "hooks/guard hook:2 echo",
                "client/executeTool echo",
            ],
            outcome: ok("hi"),
        },
        Path {
            name: "deny",
            approval: true,
            rules: vec![(
                "hooks/preExecute",
                result(json!({ "kind": "deny", "reason": "not today" })),
            )],
            requests: &["hooks/preExecute hook:1 echo"],
            outcome: failed("not today"),
        },
        Path {
            name: "ask, approved",
            approval: true,
            rules: vec![
                ("hooks/preExecute", ask(Some("sure?"))),
                approve("allowed-once"),
            ],
            requests: &[
                "hooks/preExecute hook:1 echo",
                "client/approve echo",
                "hooks/guard hook:2 echo",
                "client/executeTool echo",
            ],
            outcome: ok("hi"),
        },
        Path {
            name: "ask, rejected",
            approval: true,
            rules: vec![
                ("hooks/preExecute", ask(Some("sure?"))),
                approve("rejected"),
            ],
            requests: &["hooks/preExecute hook:1 echo", "client/approve echo"],
            outcome: failed("the user rejected tool \"echo\""),
        },
        Path {
            name: "ask, cancelled",
            approval: true,
            rules: vec![("hooks/preExecute", ask(None)), approve("cancelled")],
            requests: &["hooks/preExecute hook:1 echo", "client/approve echo"],
            outcome: failed("approval for tool \"echo\" was cancelled"),
        },
        Path {
            name: "ask, approver answers garbage",
            approval: true,
            rules: vec![("hooks/preExecute", ask(None)), approve("allowed-forever")],
            requests: &["hooks/preExecute hook:1 echo", "client/approve echo"],
            outcome: failed("approval for tool \"echo\" was cancelled"),
        },
        Path {
            name: "ask, approver answers an error",
            approval: true,
            rules: vec![
                ("hooks/preExecute", ask(None)),
                (
                    "client/approve",
                    Reply::Error(-32000, "dialog crashed".into()),
                ),
            ],
            requests: &["hooks/preExecute hook:1 echo", "client/approve echo"],
            outcome: failed("approval for tool \"echo\" was cancelled"),
        },
        Path {
            name: "ask without an approver, with a reason",
            approval: false,
            rules: vec![("hooks/preExecute", ask(Some("sure?")))],
            requests: &["hooks/preExecute hook:1 echo"],
            outcome: failed("sure?"),
        },
        Path {
            name: "ask without an approver, without a reason",
            approval: false,
            rules: vec![("hooks/preExecute", ask(None))],
            requests: &["hooks/preExecute hook:1 echo"],
            outcome: failed("tool \"echo\" requires approval, but no approver is connected"),
        },
        Path {
            name: "guard deny after an allow",
            approval: true,
            rules: vec![
                ("hooks/preExecute", allow()),
                ("hooks/guard", result(json!({ "deny": "guarded" }))),
            ],
            requests: &["hooks/preExecute hook:1 echo", "hooks/guard hook:2 echo"],
            outcome: failed("guarded"),
        },
        Path {
            name: "guard deny after an approval",
            approval: true,
            rules: vec![
                ("hooks/preExecute", ask(None)),
                approve("allowed-once"),
                ("hooks/guard", result(json!({ "deny": "guarded" }))),
            ],
            requests: &[
                "hooks/preExecute hook:1 echo",
                "client/approve echo",
                "hooks/guard hook:2 echo",
            ],
            outcome: failed("guarded"),
        },
    ];
    for path in paths {
        let mut host = host_with(path.approval, json!({}));
        subscribe(&mut host, json!({ "event": "tools/pre-execute" }));
        subscribe(&mut host, json!({ "event": "tools/guard" }));
        let reason = path.rules.iter().find_map(|(key, reply)| match reply {
            Reply::Result(answer) if *key == "hooks/preExecute" => answer.get("reason").cloned(),
            _ => None,
        });
        let (outcome, requests) = host.execute(echo("c1"), script(path.rules));
        assert_eq!(outcome, path.outcome, "{}", path.name);
        assert_eq!(summaries(&requests), path.requests, "{}", path.name);
        if let Some(approve) = requests.iter().find(|r| r["method"] == "client/approve") {
            let execution = json!({ "token": "t1", "callId": "c1", "name": "echo", "arguments": { "text": "hi" } });
            // No rule is configured: no decision record, the tool's name as the rule to add.
            let mut expected = json!({ "execution": execution, "suggestedRule": "echo" });
            if let Some(reason) = reason {
                expected["reason"] = reason;
            }
            assert_eq!(approve["params"], expected, "{}", path.name);
        }
        let observed = host.next_with_method("tools/result");
        assert_eq!(observed["params"]["result"], path.outcome, "{}", path.name);
        assert_eq!(host.finish(), 0, "{}", path.name);
    }
}

#[test]
fn a_deny_or_a_guard_denial_is_final_whatever_comes_later() {
    let mut host = host_with(true, json!({}));
    subscribe(
        &mut host,
        json!({ "event": "tools/pre-execute", "order": 0 }),
    );
    subscribe(
        &mut host,
        json!({ "event": "tools/pre-execute", "order": 1 }),
    );
    subscribe(&mut host, json!({ "event": "tools/guard", "order": 0 }));
    subscribe(&mut host, json!({ "event": "tools/guard", "order": 1 }));
    let cases = [
        (
            "an ask before a deny: the deny wins and nobody is asked to approve",
            vec![
                ("hooks/preExecute hook:1", result(json!({ "kind": "ask" }))),
                (
                    "hooks/preExecute hook:2",
                    result(json!({ "kind": "deny", "reason": "no" })),
                ),
            ],
            vec![
                "hooks/preExecute hook:1 echo",
                "hooks/preExecute hook:2 echo",
            ],
            failed("no"),
        ),
        (
            "a deny stops the waterfall",
            vec![(
                "hooks/preExecute hook:1",
                result(json!({ "kind": "deny", "reason": "no" })),
            )],
            vec!["hooks/preExecute hook:1 echo"],
            failed("no"),
        ),
        (
            "the first guard denial is final: a later guard is not asked",
            vec![("hooks/guard hook:3", result(json!({ "deny": "first" })))],
            vec![
                "hooks/preExecute hook:1 echo",
                "hooks/preExecute hook:2 echo",
                "hooks/guard hook:3 echo",
            ],
            failed("first"),
        ),
        (
            "a later guard denies after an earlier one abstained",
            vec![("hooks/guard hook:4", result(json!({ "deny": "second" })))],
            vec![
                "hooks/preExecute hook:1 echo",
                "hooks/preExecute hook:2 echo",
                "hooks/guard hook:3 echo",
                "hooks/guard hook:4 echo",
            ],
            failed("second"),
        ),
    ];
    for (name, rules, expected, outcome) in cases {
        let (got, requests) = host.execute(echo("c"), script(rules));
        assert_eq!(got, outcome, "{name}");
        assert_eq!(summaries(&requests), expected, "{name}");
    }
    assert_eq!(host.finish(), 0);
}

fn context(source: &str) -> Value {
    json!({ "role": "user", "content": format!("from {source}"), "source": source })
}

#[test]
fn post_execute_decisions_follow_the_seed() {
    let tool_answer =
        json!({ "value": "raw", "meta": { "m": 1 }, "additionalContexts": [context("tool")] });
    let with_contexts = |mut value: Value, contexts: Vec<Value>| {
        value["additionalContexts"] = json!(contexts);
        value
    };
    let raw = json!({ "isError": false, "value": "raw", "content": [{ "type": "text", "text": "raw" }],
                      "meta": { "m": 1 }, "additionalContexts": [context("tool")] });
    let cases = vec![
        (
            "accept unchanged",
            tool_answer.clone(),
            json!({ "kind": "accept" }),
            raw.clone(),
        ),
        (
            "accept with contexts: tool-deferred first",
            tool_answer.clone(),
            json!({ "kind": "accept", "additionalContexts": [context("hook")] }),
            with_contexts(raw.clone(), vec![context("tool"), context("hook")]),
        ),
        (
            "content replacement keeps value and meta",
            tool_answer.clone(),
            json!({ "kind": "accept", "content": [{ "type": "text", "text": "shown" }] }),
            json!({ "isError": false, "value": "raw", "content": [{ "type": "text", "text": "shown" }],
                    "meta": { "m": 1 }, "additionalContexts": [context("tool")] }),
        ),
        (
            "value replacement is revalidated and re-rendered",
            tool_answer.clone(),
            json!({ "kind": "accept", "value": "new", "additionalContexts": [context("hook")] }),
            json!({ "isError": false, "value": "new", "content": [{ "type": "text", "text": "new" }],
                    "additionalContexts": [context("tool"), context("hook")] }),
        ),
        (
            "an invalid replacement value is INVALID_TOOL_OUTPUT",
            tool_answer.clone(),
            json!({ "kind": "accept", "value": 5 }),
            json!({ "isError": true,
                    "error": { "message": "tool \"echo\" returned invalid output: \"value\" must be a string",
                               "info": { "name": "HarnessError", "code": "INVALID_TOOL_OUTPUT" } },
                    "content": [{ "type": "text", "text": "Error: tool \"echo\" returned invalid output: \"value\" must be a string" }],
                    "additionalContexts": [context("tool")] }),
        ),
        (
            "replacing both is refused",
            tool_answer.clone(),
            json!({ "kind": "accept", "value": "new", "content": [{ "type": "text", "text": "x" }] }),
            with_contexts(
                failed("tools/post-execute accept decision cannot replace both value and content"),
                vec![context("tool")],
            ),
        ),
        (
            "block with text keeps only its own contexts",
            tool_answer.clone(),
            json!({ "kind": "block", "feedback": "redacted", "additionalContexts": [context("hook")] }),
            with_contexts(failed("redacted"), vec![context("hook")]),
        ),
        (
            "block with blocks shows them, their text the message",
            tool_answer.clone(),
            json!({ "kind": "block", "feedback": [{ "type": "text", "text": "hidden" }] }),
            json!({ "isError": true, "error": { "message": "hidden" },
                    "content": [{ "type": "text", "text": "hidden" }] }),
        ),
    ];
    for (name, answer, decision, expected) in cases {
        let mut host = host_with(false, json!({}));
        subscribe(&mut host, json!({ "event": "tools/post-execute" }));
        let rules = vec![
            ("client/executeTool", result(answer)),
            ("hooks/postExecute", result(decision)),
        ];
        let (outcome, requests) = host.execute(echo("c1"), script(rules));
        assert_eq!(outcome, expected, "{name}");
        assert_eq!(
            summaries(&requests),
            ["client/executeTool echo", "hooks/postExecute hook:1 echo"],
            "{name}"
        );
        assert_eq!(requests[1]["params"]["result"], raw, "{name}");
        assert_eq!(host.finish(), 0, "{name}");
    }
}

#[test]
fn post_execute_sees_failures_and_cannot_give_them_a_value() {
    let cases = [
        (
            json!({ "kind": "accept", "value": "rescued" }),
            failed("tools/post-execute cannot replace the value of a failed result"),
        ),
        (
            json!({ "kind": "accept", "content": [{ "type": "text", "text": "softened" }] }),
            json!({ "isError": true, "error": { "message": "boom" },
                    "content": [{ "type": "text", "text": "softened" }] }),
        ),
    ];
    for (decision, expected) in cases {
        let mut host = host_with(false, json!({}));
        subscribe(&mut host, json!({ "event": "tools/post-execute" }));
        let rules = vec![
            ("client/executeTool", Reply::Error(-32000, "boom".into())),
            ("hooks/postExecute", result(decision)),
        ];
        let (outcome, requests) = host.execute(echo("c1"), script(rules));
        assert_eq!(outcome, expected);
        assert_eq!(requests[1]["params"]["result"], failed("boom"));
        assert_eq!(host.finish(), 0);
    }
}

/// The event, its request method and the stage name in fail-closed messages.
const EVENTS: [(&str, &str, &str); 3] = [
    (
        "tools/pre-execute",
        "hooks/preExecute",
        "tools/pre-execute hook",
    ),
    ("tools/guard", "hooks/guard", "tools/guard"),
    (
        "tools/post-execute",
        "hooks/postExecute",
        "tools/post-execute hook",
    ),
];

/// Which requests a call makes when its only hook (of `event`) fails.
fn failing_transcript(method: &str) -> Vec<String> {
    if method == "hooks/postExecute" {
        vec![
            "client/executeTool echo".into(),
            format!("{method} hook:1 echo"),
        ]
    } else {
        vec![format!("{method} hook:1 echo")]
    }
}

#[test]
fn a_hook_that_errors_or_answers_garbage_fails_the_call_closed() {
    let crashed = || Reply::Error(-32000, "hook crashed".into());
    let garbage = |answer: Value| Reply::Result(answer);
    let cases: Vec<(&str, Reply, &str)> = vec![
        ("hooks/preExecute", crashed(), "hook crashed (code -32000)"),
        (
            "hooks/preExecute",
            garbage(json!("allow")),
            "invalid answer: invalid type: string \"allow\", expected internally tagged enum PreToolDecision at line 1 column 7",
        ),
        (
            "hooks/preExecute",
            garbage(json!(null)),
            "invalid answer: invalid type: null, expected internally tagged enum PreToolDecision at line 1 column 4",
        ),
        (
            "hooks/preExecute",
            garbage(json!({ "kind": "maybe" })),
            "invalid answer: kind: unknown variant `maybe`, expected one of `allow`, `deny`, `ask` at line 1 column 15",
        ),
        (
            "hooks/preExecute",
            garbage(json!({ "kind": "deny" })),
            "invalid answer: missing field `reason`",
        ),
        (
            "hooks/preExecute",
            garbage(json!({ "kind": "allow", "why": 1 })),
            "invalid answer: why: unknown field `why`, expected `kind` at line 1 column 21",
        ),
        (
            "hooks/preExecute",
            garbage(json!({ "kind": "allow", "reason": "x" })),
            "invalid answer: reason: unknown field `reason`, expected `kind` at line 1 column 24",
        ),
        (
            "hooks/preExecute",
            garbage(json!({ "kind": "deny", "reason": "x", "why": 1 })),
            "invalid answer: unknown field `why`, expected `reason`",
        ),
        (
            "hooks/preExecute",
            garbage(json!({ "kind": "ask", "why": 1 })),
            "invalid answer: unknown field `why`, expected `reason`",
        ),
        ("hooks/guard", crashed(), "hook crashed (code -32000)"),
        (
            "hooks/guard",
            garbage(json!("allow")),
            "invalid answer: invalid type: string \"allow\", expected struct GuardDecision at line 1 column 7",
        ),
        (
            "hooks/guard",
            garbage(json!(null)),
            "invalid answer: invalid type: null, expected struct GuardDecision at line 1 column 4",
        ),
        (
            "hooks/guard",
            garbage(json!({ "deny": 5 })),
            "invalid answer: deny: invalid type: integer `5`, expected a string at line 1 column 9",
        ),
        (
            "hooks/guard",
            garbage(json!({ "allow": true })),
            "invalid answer: allow: unknown field `allow`, expected `deny` at line 1 column 8",
        ),
        ("hooks/postExecute", crashed(), "hook crashed (code -32000)"),
        (
            "hooks/postExecute",
            garbage(json!("allow")),
            "invalid answer: invalid type: string \"allow\", expected internally tagged enum PostToolDecision at line 1 column 7",
        ),
        (
            "hooks/postExecute",
            garbage(json!(null)),
            "invalid answer: invalid type: null, expected internally tagged enum PostToolDecision at line 1 column 4",
        ),
        (
            "hooks/postExecute",
            garbage(json!({ "kind": "keep" })),
            "invalid answer: kind: unknown variant `keep`, expected `accept` or `block` at line 1 column 14",
        ),
        (
            "hooks/postExecute",
            garbage(json!({ "kind": "block" })),
            "invalid answer: missing field `feedback`",
        ),
        (
            "hooks/postExecute",
            garbage(json!({ "kind": "accept", "content": "text" })),
            "invalid answer: invalid type: string \"text\", expected a sequence",
        ),
        (
            "hooks/postExecute",
            garbage(json!({ "kind": "accept", "why": 1 })),
            "invalid answer: unknown field `why`, expected one of `content`, `value`, `structuredContent`, `additionalContexts`",
        ),
        (
            "hooks/postExecute",
            garbage(json!({ "kind": "block", "feedback": "x", "why": 1 })),
            "invalid answer: unknown field `why`, expected `feedback` or `additionalContexts`",
        ),
    ];
    for (method, reply, detail) in cases {
        let (event, _, stage) = EVENTS.iter().find(|(_, m, _)| *m == method).unwrap();
        let mut host = host_with(false, json!({}));
        subscribe(&mut host, json!({ "event": event }));
        let (outcome, requests) = host.execute(echo("c1"), script(vec![(method, reply.clone())]));
        let message = format!("{stage} \"hook:1\" failed: {detail}");
        assert_eq!(outcome, failed(&message), "{method} {reply:?}");
        assert_eq!(
            summaries(&requests),
            failing_transcript(method),
            "{method} {reply:?}"
        );
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn a_hook_that_does_not_answer_in_time_fails_closed_and_is_told_to_stop() {
    for (event, method, stage) in EVENTS {
        let mut host = host_with(false, json!({ "pipeline": { "hookTimeoutMs": 50 } }));
        subscribe(&mut host, json!({ "event": event }));
        let (outcome, requests) = host.execute(echo("c1"), script(vec![(method, Reply::Silent)]));
        assert_eq!(
            outcome,
            failed(&format!(
                "{stage} \"hook:1\" failed: no answer within 50 ms"
            )),
            "{event}"
        );
        assert_eq!(summaries(&requests), failing_transcript(method), "{event}");
        let hook_request = requests.last().unwrap();
        let cancel = host.next_with_method("$/cancelRequest");
        assert_eq!(
            cancel["params"],
            json!({ "id": hook_request["id"] }),
            "{event}"
        );
        // A late answer is ignored, and the host keeps serving (without the hook, so that
        // no deadline is raced on a loaded machine).
        host.answer(hook_request, json!({ "kind": "allow" }));
        let unsubscribed = host.request("hooks/unsubscribe", json!({ "subscription": "hook:1" }));
        assert_eq!(unsubscribed["result"], Value::Null, "{event}");
        let (outcome, _) = host.execute(echo("c2"), script(vec![]));
        assert_eq!(outcome, ok("hi"), "{event}");
        assert_eq!(host.finish(), 0, "{event}");
    }
}

#[test]
fn a_client_that_disconnects_while_a_hook_is_pending_fails_closed_and_the_host_exits_0() {
    for (event, method, _) in EVENTS {
        let mut host = host_with(false, json!({}));
        subscribe(&mut host, json!({ "event": event }));
        host.start_execute("run", echo("c1"));
        let mut executed = 0;
        loop {
            let request = host.next_request();
            if request["method"] == "client/executeTool" {
                executed += 1;
                host.answer(&request, json!({ "value": "hi" }));
            } else {
                assert_eq!(request["method"], method, "{event}");
                break;
            }
        }
        host.close_input();
        let rest = host.rest();
        assert!(
            rest.iter().all(|m| m["method"] != "client/executeTool"),
            "{event}: {rest:?}"
        );
        let response = rest
            .iter()
            .find(|m| m["id"] == "run")
            .unwrap_or_else(|| panic!("{event}: {rest:?}"));
        // EOF aborts in-flight calls, and a hook that failed because of that abort reports
        // the cancellation: before dispatch as such, after it by replacing the success.
        let (code, message) = match method {
            "hooks/postExecute" => ("ABORTED", "tool call aborted"),
            _ => (
                "ABORTED_BEFORE_DISPATCH",
                "tool call aborted before dispatch",
            ),
        };
        let aborted = json!({
            "isError": true,
            "error": { "message": message, "info": { "name": "HarnessError", "code": code } },
            "content": [{ "type": "text", "text": format!("Error: {message}") }]
        });
        assert_eq!(response["result"], aborted, "{event}");
        assert_eq!(
            executed,
            usize::from(method == "hooks/postExecute"),
            "{event}"
        );
        assert_eq!(host.finish(), 0, "{event}");
    }
}

#[test]
fn a_null_replacement_value_replaces_the_value_and_is_validated() {
    let mut host = host_with(false, json!({}));
    let any = json!({ "name": "any", "description": "Any JSON.",
        "parameters": { "text": { "type": "string", "required": true } },
        "output": { "schema": { "type": "json" } } });
    host.request("tools/register", json!({ "tool": any }));
    subscribe(&mut host, json!({ "event": "tools/post-execute" }));
    let null = vec![(
        "hooks/postExecute",
        result(json!({ "kind": "accept", "value": null })),
    )];
    let call = json!({ "callId": "c1", "name": "any", "arguments": { "text": "hi" } });
    let (outcome, _) = host.execute(call, script(null.clone()));
    assert_eq!(
        outcome,
        json!({ "isError": false, "value": null, "content": [{ "type": "text", "text": "null" }] })
    );
    let (outcome, _) = host.execute(echo("c2"), script(null));
    assert_eq!(
        outcome["error"],
        json!({ "message": "tool \"echo\" returned invalid output: \"value\" must be a string",
                "info": { "name": "HarnessError", "code": "INVALID_TOOL_OUTPUT" } })
    );
    assert_eq!(host.finish(), 0);
}
