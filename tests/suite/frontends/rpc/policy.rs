//! Built-in policy over the wire, through the real binary: Claude Code permission rules
//! (also for Code Mode sub-calls), enforced timeouts, retries of idempotent tools, per-tool
//! metrics, and the client-side classification and rendering seams.

#![allow(clippy::unwrap_used)]

use crate::support::policy as policy_support;

use policy_support::{Framing, Host, Reply, echo_spec};
use serde_json::{Value, json};

fn ok(text: &str) -> Value {
    json!({ "isError": false, "value": text, "content": [{ "type": "text", "text": text }] })
}

/// The result without the permission record a denial by the rules carries in
/// `meta.permission` (checked here to be a denial's record; `policy::approvals` checks what it says).
fn record_aside(mut outcome: Value) -> Value {
    if let Some(meta) = outcome.as_object_mut().and_then(|o| o.remove("meta")) {
        assert_eq!(meta["permission"]["decision"], "deny", "{meta}");
        assert_eq!(outcome["isError"], true, "{outcome}");
    }
    outcome
}

fn failed(message: &str) -> Value {
    json!({
        "isError": true,
        "error": { "message": message },
        "content": [{ "type": "text", "text": format!("Error: {message}") }]
    })
}

fn timed_out(name: &str, ms: u64) -> Value {
    let message = format!("tool \"{name}\" timed out after {ms} ms");
    json!({
        "isError": true,
        "error": { "message": message, "info": { "name": "HarnessError", "code": "TOOL_TIMEOUT" } },
        "content": [{ "type": "text", "text": format!("Error: {message}") }]
    })
}

/// A client tool taking one string argument `key` and returning a string.
fn string_tool(name: &str, key: &str) -> Value {
    json!({
        "name": name,
        "description": format!("The {name} tool."),
        "parameters": { key: { "type": "string", "required": true } },
        "output": { "schema": { "type": "string" } }
    })
}

/// Echoes the call's only argument; approves once; allows every hook; silent otherwise.
fn obliging(request: &Value) -> Reply {
    let arguments = &request["params"]["arguments"];
    match request["method"].as_str().unwrap_or_default() {
        "client/executeTool" => {
            let first = arguments
                .as_object()
                .and_then(|o| o.values().next().cloned());
            Reply::Result(json!({ "value": first.unwrap_or(Value::Null) }))
        }
        "client/approve" => Reply::Result(json!({ "outcome": "allowed-once" })),
        "hooks/preExecute" => Reply::Result(json!({ "kind": "allow" })),
        _ => Reply::Silent,
    }
}

fn methods(requests: &[Value]) -> Vec<String> {
    requests
        .iter()
        .map(|r| {
            let params = &r["params"];
            let name = params["name"]
                .as_str()
                .or(params["execution"]["name"].as_str())
                .unwrap_or_default();
            format!("{} {name}", r["method"].as_str().unwrap_or_default())
        })
        .collect()
}

fn call(name: &str, arguments: Value) -> Value {
    json!({ "callId": "c", "name": name, "arguments": arguments })
}

/// A host with `bash`, `read`, `read_image` and `other` registered under `permissions`.
fn permission_host(capabilities: Value, permissions: Value) -> Host {
    let config = json!({ "permissions": permissions });
    let mut host = Host::initialized(Framing::Ndjson, capabilities, config);
    let tools = [
        string_tool("bash", "command"),
        string_tool("read", "file_path"),
        string_tool("read_image", "file_path"),
        string_tool("other", "text"),
    ];
    for tool in tools {
        let registered = host.request("tools/register", json!({ "tool": tool }));
        assert!(
            registered["result"]["registration"].is_string(),
            "{registered}"
        );
    }
    host
}

fn claude_code_rules(default: &str) -> Value {
    json!({
        "allow": ["Bash(git status)", "Read"],
        "ask": ["Bash(git push:*)"],
        "deny": ["Bash(rm:*)", "Read(secrets/**)"],
        "default": default
    })
}

#[test]
fn permission_rules_decide_over_the_wire_in_claude_code_spelling() {
    // A bash denial also names the rule's place and the part it refused.
    let denied_by = |tool: &str, rule: &str| {
        let part = if tool == "bash" {
            " (deny[0] in initialize.config): `rm -rf /`"
        } else {
            ""
        };
        failed(&format!(
            "tool \"{tool}\" is denied by permission rule {rule}{part}"
        ))
    };
    let asks = "permission rule Bash(git push:*) requires approval for tool \"bash\"";
    // (tool, arguments, without an approver, with one)
    let cases = [
        (
            "bash",
            json!({ "command": "git status" }),
            (ok("git status"), vec!["client/executeTool bash"]),
            (ok("git status"), vec!["client/executeTool bash"]),
        ),
        (
            "bash",
            json!({ "command": "rm -rf /" }),
            (denied_by("bash", "Bash(rm:*)"), vec![]),
            (denied_by("bash", "Bash(rm:*)"), vec![]),
        ),
        (
            "bash",
            json!({ "command": "git status && rm -rf /" }),
            (denied_by("bash", "Bash(rm:*)"), vec![]),
            (denied_by("bash", "Bash(rm:*)"), vec![]),
        ),
        (
            "bash",
            json!({ "command": "git push origin main" }),
            (failed(asks), vec![]),
            (
                ok("git push origin main"),
                vec!["client/approve bash", "client/executeTool bash"],
            ),
        ),
        (
            "bash",
            json!({ "command": "ls" }),
            (
                failed("tool \"bash\" is denied by the default permission: no rule allows `ls`"),
                vec![],
            ),
            (
                failed("tool \"bash\" is denied by the default permission: no rule allows `ls`"),
                vec![],
            ),
        ),
        (
            "read",
            json!({ "file_path": "src/lib.rs" }),
            (ok("src/lib.rs"), vec!["client/executeTool read"]),
            (ok("src/lib.rs"), vec!["client/executeTool read"]),
        ),
        (
            "read",
            json!({ "file_path": "secrets/key.pem" }),
            (denied_by("read", "Read(secrets/**)"), vec![]),
            (denied_by("read", "Read(secrets/**)"), vec![]),
        ),
        (
            "read_image",
            json!({ "file_path": "secrets/face.png" }),
            (denied_by("read_image", "Read(secrets/**)"), vec![]),
            (denied_by("read_image", "Read(secrets/**)"), vec![]),
        ),
        (
            "other",
            json!({ "text": "x" }),
            (
                failed("tool \"other\" is denied by the default permission"),
                vec![],
            ),
            (
                failed("tool \"other\" is denied by the default permission"),
                vec![],
            ),
        ),
    ];
    let mut without = permission_host(json!({ "executeTools": true }), claude_code_rules("deny"));
    let mut with = permission_host(
        json!({ "executeTools": true, "approval": true }),
        claude_code_rules("deny"),
    );
    for (tool, arguments, alone, approved) in cases {
        for (host, (expected, requests)) in [(&mut without, alone), (&mut with, approved)] {
            let (outcome, seen) = host.execute(call(tool, arguments.clone()), obliging);
            let outcome = record_aside(outcome);
            assert_eq!(outcome, expected, "{tool} {arguments}");
            assert_eq!(methods(&seen), requests, "{tool} {arguments}");
        }
    }
    let (_, seen) = with.execute(call("bash", json!({ "command": "git push" })), obliging);
    assert_eq!(
        seen[0]["params"],
        json!({ "execution": { "token": seen[0]["params"]["execution"]["token"], "callId": "c",
                "name": "bash", "arguments": { "command": "git push" } }, "reason": asks,
                "suggestedRule": "Bash(git push:*)",
                "decision": { "decision": "ask", "parts": [{ "kind": "command", "text": "git push",
                    "decision": "ask", "rule": { "list": "ask", "index": 0,
                    "rule": "Bash(git push:*)", "origin": "initialize.config" } }] } })
    );
    assert_eq!(without.finish(), 0);
    assert_eq!(with.finish(), 0);
}

#[test]
fn a_call_matching_no_rule_follows_the_default() {
    let cases = [
        (json!({ "deny": ["Bash"] }), ok("x")),
        (json!({ "deny": ["Bash"], "default": "allow" }), ok("x")),
        (
            json!({ "deny": ["Bash"], "default": "ask" }),
            failed("tool \"other\" requires approval, but no approver is connected"),
        ),
        (
            json!({ "default": "deny" }),
            failed("tool \"other\" is denied by the default permission"),
        ),
        (
            json!({ "allow": ["other"], "deny": ["other"] }),
            failed("tool \"other\" is denied by permission rule other"),
        ),
        (
            json!({ "allow": ["other"], "ask": ["other"], "default": "deny" }),
            failed("permission rule other requires approval for tool \"other\""),
        ),
    ];
    for (permissions, expected) in cases {
        let mut host = permission_host(json!({ "executeTools": true }), permissions.clone());
        let (outcome, _) = host.execute(call("other", json!({ "text": "x" })), obliging);
        let outcome = record_aside(outcome);
        assert_eq!(outcome, expected, "{permissions}");
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn an_invalid_rule_fails_initialize_naming_it() {
    let mut host = Host::spawn(Framing::Ndjson);
    let response = host.request(
        "initialize",
        json!({ "protocolVersion": "1", "config": { "permissions": { "deny": ["Bash(ls"] } } }),
    );
    assert_eq!(
        response["error"],
        json!({ "code": -32602,
                "message": "invalid params: config.permissions.deny[0]: rule \"Bash(ls\" lacks a closing parenthesis" })
    );
    assert_eq!(host.finish(), 0);
}

#[test]
fn permissions_run_before_client_hooks_and_a_denial_spares_them() {
    let capabilities = json!({ "executeTools": true, "hooks": true });
    let mut host = permission_host(capabilities, claude_code_rules("allow"));
    let subscribed = host.request(
        "hooks/subscribe",
        json!({ "event": "tools/pre-execute", "order": -1000 }),
    );
    assert_eq!(subscribed["result"]["subscription"], "hook:1");
    let (outcome, seen) = host.execute(call("bash", json!({ "command": "rm x" })), obliging);
    let outcome = record_aside(outcome);
    assert_eq!(
        outcome,
        failed(
            "tool \"bash\" is denied by permission rule Bash(rm:*) (deny[0] in initialize.config): `rm x`"
        )
    );
    assert_eq!(methods(&seen), Vec::<String>::new());
    let (outcome, seen) = host.execute(call("bash", json!({ "command": "git status" })), obliging);
    let outcome = record_aside(outcome);
    assert_eq!(outcome, ok("git status"));
    assert_eq!(
        methods(&seen),
        ["hooks/preExecute bash", "client/executeTool bash"]
    );
    assert_eq!(host.finish(), 0);
}

#[test]
fn a_denied_code_mode_sub_call_is_a_caught_tool_call_error() {
    let config = json!({ "tools": { "mode": "code" }, "permissions": { "deny": ["Bash(rm:*)"] } });
    let mut host = Host::initialized(Framing::Ndjson, json!({ "executeTools": true }), config);
    host.request(
        "tools/register",
        json!({ "tool": string_tool("bash", "command") }),
    );
    let code = r#"
        const seen = [];
        try {
            await tools.bash({ command: "rm -rf /" });
        } catch (e) {
            seen.push([e instanceof ToolCallError, e.name, e.toolName, e.message]);
        }
        seen.push(await tools.bash({ command: "ls" }));
        return seen;
    "#;
    let program = json!({ "callId": "r", "name": "run_code",
                          "arguments": { "code": code, "description": "probe" } });
    let (outcome, seen) = host.execute(program, obliging);
    let outcome = record_aside(outcome);
    let denial = "tool \"bash\" is denied by permission rule Bash(rm:*) (deny[0] in initialize.config): `rm -rf /`";
    assert_eq!(
        outcome["value"],
        json!({ "logs": [], "result": [[true, "ToolCallError", "bash", denial], "ls"] }),
        "{outcome}"
    );
    assert_eq!(methods(&seen), ["client/executeTool bash"]);
    let dispatched = host.next_with_method("tools/codeDispatch");
    assert_eq!(dispatched["params"]["id"], "r:code:1");
    assert_eq!(
        dispatched["params"]["content"],
        json!([{ "type": "text", "text": format!("Error: {denial}") }])
    );
    assert_eq!(dispatched["params"]["isError"], true);
    assert_eq!(host.finish(), 0);
}

#[test]
fn an_enforced_timeout_is_tool_timeout_and_the_client_is_told_to_stop() {
    let config = json!({ "pipeline": { "timeout": { "enforce": true, "defaultMs": 40 } } });
    let mut host = Host::initialized(Framing::Lsp, json!({ "executeTools": true }), config);
    let mut declared = echo_spec("declared");
    declared["timeoutMs"] = json!(30);
    host.request("tools/register", json!({ "tool": declared }));
    host.request("tools/register", json!({ "tool": echo_spec("defaulted") }));
    for (name, ms) in [("declared", 30), ("defaulted", 40)] {
        let (outcome, seen) = host.execute(call(name, json!({ "text": "x" })), |_| Reply::Silent);
        let outcome = record_aside(outcome);
        assert_eq!(outcome, timed_out(name, ms));
        assert_eq!(methods(&seen), [format!("client/executeTool {name}")]);
        let cancel = host.next_with_method("$/cancelRequest");
        assert_eq!(cancel["params"], json!({ "id": seen[0]["id"] }), "{name}");
        // The late answer is ignored.
        host.answer(&seen[0], json!({ "value": "late" }));
    }
    // The host keeps serving (a request with no deadline to race on a loaded machine).
    let schemas = host.request("tools/schemas", json!({}));
    assert_eq!(
        schemas["result"].as_array().map(Vec::len),
        Some(2),
        "{schemas}"
    );
    assert_eq!(host.finish(), 0);
}

/// Fails the first `failures` attempts of each call, then echoes.
fn flaky(failures: usize) -> impl FnMut(&Value) -> Reply {
    let mut attempts = 0;
    move |request| {
        attempts += 1;
        if attempts <= failures {
            Reply::Error(-32000, format!("attempt {attempts} failed"))
        } else {
            obliging(request)
        }
    }
}

#[test]
fn retries_repeat_only_idempotent_tools_and_stop_at_max_attempts() {
    let config = json!({ "pipeline": { "retry": { "maxAttempts": 3, "backoffMs": 1 } } });
    let mut host = Host::initialized(Framing::Ndjson, json!({ "executeTools": true }), config);
    let mut idempotent = echo_spec("idempotent");
    idempotent["idempotent"] = json!(true);
    host.request("tools/register", json!({ "tool": idempotent }));
    host.request("tools/register", json!({ "tool": echo_spec("plain") }));
    let cases = [
        ("idempotent", 2, ok("x"), 3),
        ("idempotent", 5, failed("attempt 3 failed"), 3),
        ("plain", 2, failed("attempt 1 failed"), 1),
        ("plain", 0, ok("x"), 1),
    ];
    for (name, failures, expected, attempts) in cases {
        let (outcome, seen) = host.execute(call(name, json!({ "text": "x" })), flaky(failures));
        let outcome = record_aside(outcome);
        assert_eq!(outcome, expected, "{name} {failures}");
        assert_eq!(
            methods(&seen),
            vec![format!("client/executeTool {name}"); attempts],
            "{name} {failures}"
        );
        let tokens: Vec<&Value> = seen.iter().map(|r| &r["params"]["token"]).collect();
        assert!(
            tokens.iter().all(|t| *t == tokens[0]),
            "one execution: {tokens:?}"
        );
    }
    assert_eq!(host.finish(), 0);
}

#[test]
fn retries_never_follow_a_timeout_a_cancellation_or_a_denial() {
    let config = json!({ "pipeline": { "retry": { "maxAttempts": 3, "backoffMs": 1 } },
                         "permissions": { "deny": ["denied"] } });
    let mut host = Host::initialized(Framing::Ndjson, json!({ "executeTools": true }), config);
    for (name, timeout) in [("slow", Some(30)), ("hung", None), ("denied", None)] {
        let mut spec = echo_spec(name);
        spec["idempotent"] = json!(true);
        if let Some(ms) = timeout {
            spec["timeoutMs"] = json!(ms);
        }
        host.request("tools/register", json!({ "tool": spec }));
    }
    let (outcome, seen) = host.execute(call("slow", json!({ "text": "x" })), |_| Reply::Silent);
    let outcome = record_aside(outcome);
    assert_eq!(outcome, timed_out("slow", 30));
    assert_eq!(methods(&seen), ["client/executeTool slow"]);

    host.start_execute("cancelled", call("hung", json!({ "text": "x" })));
    let pending = host.next_request();
    host.send(
        &json!({ "jsonrpc": "2.0", "method": "$/cancelRequest", "params": { "id": "cancelled" } }),
    );
    let (response, seen) = host.drive(&json!("cancelled"), |_| Reply::Silent);
    assert_eq!(
        response["result"]["error"],
        json!({ "message": "tool call aborted", "info": { "name": "HarnessError", "code": "ABORTED" } })
    );
    assert_eq!(pending["method"], "client/executeTool");
    assert_eq!(methods(&seen), Vec::<String>::new());

    let (outcome, seen) = host.execute(call("denied", json!({ "text": "x" })), obliging);
    let outcome = record_aside(outcome);
    assert_eq!(
        outcome,
        failed("tool \"denied\" is denied by permission rule denied")
    );
    assert_eq!(methods(&seen), Vec::<String>::new());
    assert_eq!(host.finish(), 0);
}

#[test]
fn metrics_count_dispatched_calls_and_errors_per_tool() {
    let config = json!({ "pipeline": { "retry": { "maxAttempts": 2, "backoffMs": 1 } },
                         "permissions": { "deny": ["Bash(rm:*)"] } });
    let mut host = Host::initialized(Framing::Ndjson, json!({ "executeTools": true }), config);
    let before = host.request("tools/metrics", json!({}));
    assert_eq!(before["result"], json!([]));
    let mut idempotent = echo_spec("idempotent");
    idempotent["idempotent"] = json!(true);
    host.request("tools/register", json!({ "tool": echo_spec("echo") }));
    host.request("tools/register", json!({ "tool": idempotent }));
    host.request(
        "tools/register",
        json!({ "tool": string_tool("bash", "command") }),
    );
    let text = json!({ "text": "x" });
    host.execute(call("echo", text.clone()), obliging);
    host.execute(call("echo", text.clone()), obliging);
    host.execute(call("echo", text.clone()), flaky(1));
    host.execute(call("idempotent", text.clone()), flaky(1));
    host.execute(call("bash", json!({ "command": "rm x" })), obliging);
    host.execute(call("bash", json!({ "command": 5 })), obliging);
    let metrics = host.request("tools/metrics", json!({}))["result"].clone();
    let counts: Vec<(Value, Value, Value)> = metrics
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["name"].clone(), m["calls"].clone(), m["errors"].clone()))
        .collect();
    assert_eq!(
        counts,
        [
            (json!("echo"), json!(3), json!(1)),
            (json!("idempotent"), json!(1), json!(0)),
        ]
    );
    for tool in metrics.as_array().unwrap() {
        let keys: Vec<&String> = tool.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["name", "calls", "errors", "p50Ms", "p99Ms"]);
        let (p50, p99) = (
            tool["p50Ms"].as_f64().unwrap(),
            tool["p99Ms"].as_f64().unwrap(),
        );
        assert!(0.0 <= p50 && p50 <= p99, "{tool}");
    }
    assert_eq!(host.finish(), 0);
}

#[test]
fn client_classification_is_parallel_only_for_exactly_true() {
    let mut host = Host::initialized(Framing::Ndjson, json!({ "executeTools": true }), json!({}));
    let mut spec = echo_spec("maybe");
    spec["concurrencySafe"] = json!("ask");
    let registered = host.request("tools/register", json!({ "tool": spec }));
    let registration = registered["result"]["registration"].clone();
    let cases = [
        (Reply::Result(json!(true)), "parallel"),
        (Reply::Result(json!(false)), "exclusive"),
        (Reply::Result(json!("true")), "exclusive"),
        (Reply::Result(json!(1)), "exclusive"),
        (Reply::Result(json!({ "parallel": true })), "exclusive"),
        (Reply::Result(json!(null)), "exclusive"),
        (Reply::Error(-32000, "no idea".into()), "exclusive"),
    ];
    for (id, (reply, mode)) in cases.into_iter().enumerate() {
        let id = json!(format!("mode{id}"));
        host.send(
            &json!({ "jsonrpc": "2.0", "id": id, "method": "tools/executionMode",
                           "params": { "name": "maybe", "arguments": { "text": "x" } } }),
        );
        let (response, seen) = host.drive(&id, |_| reply.clone());
        assert_eq!(response["result"], mode, "{reply:?}");
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0]["method"], "client/classify");
        assert_eq!(seen[0]["params"]["registration"], registration);
        assert_eq!(seen[0]["params"]["arguments"], json!({ "text": "x" }));
    }
    assert_eq!(host.finish(), 0);
}

#[test]
fn classified_parallel_calls_overlap_in_a_batch() {
    let mut host = Host::initialized(Framing::Ndjson, json!({ "executeTools": true }), json!({}));
    let mut spec = echo_spec("maybe");
    spec["concurrencySafe"] = json!("ask");
    host.request("tools/register", json!({ "tool": spec }));
    let calls = json!([
        { "callId": "a", "name": "maybe", "arguments": { "text": "a" } },
        { "callId": "b", "name": "maybe", "arguments": { "text": "b" } }
    ]);
    host.send(
        &json!({ "jsonrpc": "2.0", "id": "batch", "method": "tools/executeBatch",
                       "params": { "calls": calls } }),
    );
    // Both bodies start before either is answered: only a parallel classification allows it.
    let mut bodies = Vec::new();
    while bodies.len() < 2 {
        let request = host.next_request();
        match request["method"].as_str() {
            Some("client/classify") => host.answer(&request, json!(true)),
            Some("client/executeTool") => bodies.push(request),
            other => panic!("unexpected {other:?}"),
        }
    }
    for body in &bodies {
        host.answer(
            body,
            json!({ "value": body["params"]["arguments"]["text"] }),
        );
    }
    let response = host.response_to(&json!("batch"));
    assert_eq!(response["result"], json!([ok("a"), ok("b")]));
    assert_eq!(host.finish(), 0);
}

#[test]
fn client_rendering_supplies_content_and_its_failure_is_a_normalized_error() {
    let capabilities = json!({ "executeTools": true, "hooks": true });
    let mut host = Host::initialized(Framing::Ndjson, capabilities, json!({}));
    let mut spec = echo_spec("fancy");
    spec["render"] = json!("client");
    let registered = host.request("tools/register", json!({ "tool": spec }));
    let registration = registered["result"]["registration"].clone();
    let shout = |request: &Value| {
        let text = request["params"]["value"]
            .as_str()
            .unwrap_or_default()
            .to_uppercase();
        Reply::Result(json!([{ "type": "text", "text": text }]))
    };
    let (outcome, seen) = host.execute(call("fancy", json!({ "text": "hi" })), |r| {
        if r["method"] == "client/render" {
            shout(r)
        } else {
            obliging(r)
        }
    });
    let outcome = record_aside(outcome);
    assert_eq!(
        outcome,
        json!({ "isError": false, "value": "hi", "content": [{ "type": "text", "text": "HI" }] })
    );
    assert_eq!(
        methods(&seen),
        ["client/executeTool fancy", "client/render fancy"]
    );
    assert_eq!(
        seen[1]["params"],
        json!({ "registration": registration, "name": "fancy", "arguments": { "text": "hi" }, "value": "hi" })
    );

    // (answer, what the message ends with after `client/render failed for tool "fancy": `)
    let failures = [
        (
            Reply::Error(-32000, "renderer crashed".into()),
            "renderer crashed (code -32000)",
        ),
        (
            Reply::Result(json!("HI")),
            "invalid type: string \"HI\", expected a sequence",
        ),
        (
            Reply::Result(json!([5])),
            "data did not match any variant of untagged enum ContentBlock",
        ),
    ];
    for (reply, detail) in failures {
        let (outcome, _) = host.execute(call("fancy", json!({ "text": "hi" })), |r| {
            if r["method"] == "client/render" {
                reply.clone()
            } else {
                obliging(r)
            }
        });
        let outcome = record_aside(outcome);
        let message = outcome["error"]["message"].as_str().unwrap_or_default();
        let prefix = "client/render failed for tool \"fancy\": ";
        assert!(
            message.starts_with(prefix) && message.contains(detail),
            "{reply:?}: {message}"
        );
        assert_eq!(outcome, failed(message), "{reply:?}");
    }

    // Content the tool supplies itself is not rendered again.
    let (outcome, seen) = host.execute(call("fancy", json!({ "text": "hi" })), |_| {
        Reply::Result(json!({ "value": "hi", "content": [{ "type": "text", "text": "own" }] }))
    });
    let outcome = record_aside(outcome);
    assert_eq!(
        outcome,
        json!({ "isError": false, "value": "hi", "content": [{ "type": "text", "text": "own" }] })
    );
    assert_eq!(methods(&seen), ["client/executeTool fancy"]);

    // A post-execute value replacement is rendered by the client again.
    host.request("hooks/subscribe", json!({ "event": "tools/post-execute" }));
    let (outcome, seen) = host.execute(
        call("fancy", json!({ "text": "hi" })),
        |r| match r["method"].as_str() {
            Some("client/render") => shout(r),
            Some("hooks/postExecute") => Reply::Result(json!({ "kind": "accept", "value": "bye" })),
            _ => obliging(r),
        },
    );
    let outcome = record_aside(outcome);
    assert_eq!(
        outcome,
        json!({ "isError": false, "value": "bye", "content": [{ "type": "text", "text": "BYE" }] })
    );
    assert_eq!(
        methods(&seen),
        [
            "client/executeTool fancy",
            "client/render fancy",
            "hooks/postExecute fancy",
            "client/render fancy"
        ]
    );
    assert_eq!(host.finish(), 0);
}
