//! What real servers never do on demand, through `tests/mcp-servers/fixture_server.py`:
//! tool names peers have broken on, schemas from the wild, paginated and malformed
//! listings, protocol errors, observable cancellation, list changes, crashes, and servers
//! that refuse or hang at startup.

#![allow(clippy::unwrap_used)]

use crate::support::mcp as mcp_common;

use dsh_tools::code_mode::CodeMode;
use dsh_tools::tool::{HarnessCode, Signal, ToolExecutionInput};
use dsh_tools_protocol::{McpServerState, PresentationMode};
use mcp_common::{Host, fixture, outcome, scratch};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const EXOTIC: [&str; 15] = [
    "a.b",
    "with space",
    "dash-ed",
    "café",
    "工具",
    "emoji🎉",
    "__proto__",
    "constructor",
    "toString",
    "then",
    "quote\"back\\slash",
    "slash/colon:x",
    "0digit",
    "Echo",
    "echo",
];

/// Every `ToolArgsMap` key of the SDK, as written (quoted or bare), with the name it means.
fn sdk_keys(sdk: &str) -> Vec<(String, String)> {
    let start = sdk.find("interface ToolArgsMap {").unwrap();
    let end = start + sdk[start..].find("\n}").unwrap();
    let mut keys = Vec::new();
    for line in sdk[start..end].lines().skip(1) {
        let Some(rest) = line.strip_prefix("  ") else {
            continue;
        };
        if rest.starts_with([' ', '}', '*']) || rest.starts_with("/**") {
            continue;
        }
        if rest.starts_with('"') {
            let name: String = serde_json::Deserializer::from_str(rest)
                .into_iter::<String>()
                .next()
                .unwrap()
                .unwrap();
            let literal = serde_json::to_string(&name).unwrap();
            assert!(rest.starts_with(&format!("{literal}: ")), "{rest}");
            keys.push((literal, name));
        } else {
            let name = rest.split(':').next().unwrap().to_string();
            keys.push((name.clone(), name));
        }
    }
    keys
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exotic_names_work_natively_and_in_code_mode_exactly_as_the_sdk_shows_them() {
    let host = Host::start(PresentationMode::Both, json!({ "fixture": fixture(&[]) })).await;
    let sdk = CodeMode::sdk(&host.runtime, None);
    let keys = sdk_keys(&sdk);
    let registered = host.registered("fixture");
    let named: Vec<String> = keys.iter().map(|(_, name)| name.clone()).collect();
    assert_eq!(named, registered, "discovery and the SDK agree");
    for tool in EXOTIC {
        let name = format!("mcp__fixture__{tool}");
        let (literal, _) = keys.iter().find(|(_, n)| *n == name).unwrap();
        let access = if literal.starts_with('"') {
            format!("tools[{literal}]")
        } else {
            format!("tools.{literal}")
        };
        let expected = json!(format!("called {tool} with {{\"k\": 1}}"));
        let native = host.call(&name, json!({ "k": 1 })).await;
        assert_eq!(outcome(&native), Ok(expected.clone()), "{name}");
        let program = format!("return await {access}({{ k: 1 }});");
        let coded = host.run(&program).await;
        assert_eq!(
            outcome(&coded),
            Ok(json!({ "logs": [], "result": expected })),
            "{program}"
        );
    }
    let quoted = keys
        .iter()
        .find(|(_, n)| n == "mcp__fixture__quote\"back\\slash")
        .unwrap();
    assert_eq!(quoted.0, r#""mcp__fixture__quote\"back\\slash""#);
    let bare = keys
        .iter()
        .find(|(_, n)| n == "mcp__fixture____proto__")
        .unwrap();
    assert_eq!(bare.0, "mcp__fixture____proto__");
    host.mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wild_schemas_and_listings_degrade_per_tool_and_never_fail_the_server() {
    let host = Host::start(PresentationMode::Native, json!({ "fixture": fixture(&[]) })).await;
    let status = host.status("fixture");
    assert_eq!(status.state, McpServerState::Running);
    assert_eq!(
        status.warnings,
        [
            "tool \"ref_defs\": inputSchema goes beyond the SDK's schema subset at inputSchema.properties.tree; that part is typed `unknown` and the server validates arguments",
            "tool \"any_of\": inputSchema goes beyond the SDK's schema subset at inputSchema.properties.v; that part is typed `unknown` and the server validates arguments",
            "tool \"any_of\": outputSchema goes beyond the enforced subset (outputSchema.properties.v: unsupported keyword \"anyOf\"); its structured output is passed on unchecked",
            "tool \"all_of\": inputSchema goes beyond the SDK's schema subset at inputSchema; that part is typed `unknown` and the server validates arguments",
            "tool \"no_input_schema\": has no inputSchema; its arguments are untyped",
            "tool \"bool_schema\": inputSchema is not an object; its arguments are untyped",
            "a listed tool has no usable name and was skipped: {\"name\":5,\"inputSchema\":{\"type\":\"object\"}}",
            "tool \"echo\" is listed more than once; the first listing is used",
        ]
    );
    let mut expected: Vec<String> = EXOTIC
        .iter()
        .chain(&[
            "ref_defs",
            "any_of",
            "all_of",
            "no_properties",
            "empty_schema",
            "no_input_schema",
            "bool_schema",
            "structured",
            "fail",
            "protocol_error",
            "sleep",
            "sleeping",
            "cancellations",
            "add_tool",
            "remove_tool",
            "crash",
            "fetch",
        ])
        .map(|t| format!("mcp__fixture__{t}"))
        .collect();
    expected.sort();
    assert_eq!(status.tools, expected, "every page was listed");
    let sdk = CodeMode::sdk(&host.runtime, None);
    for line in [
        "\n  mcp__fixture__ref_defs: {\n    tree?: unknown;",
        "\n  mcp__fixture__all_of: unknown;",
        "\n  mcp__fixture__any_of: {\n    v?: unknown;",
        "\n  mcp__fixture__empty_schema: JsonValue;",
    ] {
        assert!(sdk.contains(line), "{line:?} in {sdk}");
    }
    // An output schema beyond the enforced subset keeps its type in the SDK (arguments and
    // output both render the object, `v` as `unknown`).
    assert_eq!(
        sdk.matches("\n  mcp__fixture__any_of: {\n    v?: unknown;")
            .count(),
        2,
        "{sdk}"
    );
    for (tool, arguments) in [
        (
            "ref_defs",
            json!({ "tree": { "value": 1, "children": [{ "value": 2 }] } }),
        ),
        ("all_of", json!({ "x": "y" })),
        ("no_properties", json!({})),
        ("empty_schema", json!({})),
        ("no_input_schema", json!({})),
        ("bool_schema", json!({})),
    ] {
        let result = host
            .call(&format!("mcp__fixture__{tool}"), arguments.clone())
            .await;
        let text = format!("called {tool} with {}", python_json(&arguments));
        assert_eq!(outcome(&result), Ok(json!(text)), "{tool}");
    }
    let any_of = host.call("mcp__fixture__any_of", json!({ "v": 3 })).await;
    assert_eq!(outcome(&any_of), Ok(json!({ "v": 3 })));
    host.mcp.shutdown().await;
}

/// `json.dumps(value, sort_keys=True)` for the small values above.
fn python_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let inner: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{}: {}", serde_json::to_string(k).unwrap(), python_json(v)))
                .collect();
            format!("{{{}}}", inner.join(", "))
        }
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(python_json).collect();
            format!("[{}]", inner.join(", "))
        }
        other => other.to_string(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_errors_and_protocol_errors_are_normalized() {
    let host = Host::start(PresentationMode::Native, json!({ "fixture": fixture(&[]) })).await;
    let structured = host.call("mcp__fixture__structured", json!({})).await;
    assert_eq!(outcome(&structured).err(), None);
    assert_eq!(
        dsh_tools::json::render_compact(structured.value().unwrap()),
        r#"{"n":1.5,"count":12345}"#
    );
    assert_eq!(structured.text(), "n is 1.50");
    let failed = host.call("mcp__fixture__fail", json!({})).await;
    assert_eq!(
        outcome(&failed),
        Err("the fixture failed on purpose".into())
    );
    assert_eq!(failed.text(), "Error: the fixture failed on purpose");
    let rejected = host.call("mcp__fixture__protocol_error", json!({})).await;
    assert_eq!(
        outcome(&rejected),
        Err("MCP server \"fixture\" rejected the call to \"protocol_error\" (error -32042): the fixture rejects this call".into())
    );
    let not_an_object = host.call("mcp__fixture__echo", json!([1])).await;
    assert_eq!(
        outcome(&not_an_object),
        Err("MCP tool \"echo\" takes a JSON object of arguments".into())
    );
    host.mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aborts_and_deadlines_reach_the_server_as_notifications_cancelled() {
    let mut config = fixture(&[]);
    config["timeoutMs"] = json!(1500);
    let host = Host::start(PresentationMode::Native, json!({ "fixture": config })).await;
    let dispatched = host.probe_dispatches();
    let token = CancellationToken::new();
    let call = ToolExecutionInput::new("c1", "mcp__fixture__sleep", json!({}))
        .with_signal(Signal::new(token.clone()));
    let runtime = host.runtime.clone();
    let running = tokio::spawn(async move { runtime.execute(call).await });
    dispatched.notified().await;
    let held = host
        .call("mcp__fixture__sleeping", json!({ "count": 1 }))
        .await;
    let held: Vec<Value> = serde_json::from_str(held.value().unwrap().as_str().unwrap()).unwrap();
    token.cancel();
    let aborted = running.await.unwrap();
    assert_eq!(aborted.code(), Some(HarnessCode::Aborted));
    let timed_out = host.call("mcp__fixture__sleep", json!({})).await;
    assert_eq!(
        outcome(&timed_out),
        Err("tool \"mcp__fixture__sleep\" timed out after 1500 ms".into())
    );
    let held_both = host
        .call("mcp__fixture__sleeping", json!({ "count": 2 }))
        .await;
    let held_both: Vec<Value> =
        serde_json::from_str(held_both.value().unwrap().as_str().unwrap()).unwrap();
    let seen = host
        .call("mcp__fixture__cancellations", json!({ "count": 2 }))
        .await;
    let cancelled: Vec<Value> =
        serde_json::from_str(seen.value().unwrap().as_str().unwrap()).unwrap();
    assert_eq!(held.len(), 1);
    assert_eq!(
        cancelled, held_both,
        "both held requests were cancelled, in order"
    );
    host.mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changed_re_lists_and_keeps_unchanged_registrations() {
    let host = Host::start(PresentationMode::Native, json!({ "fixture": fixture(&[]) })).await;
    let registration = |name: &str| {
        host.runtime
            .registry()
            .resolve(name, None)
            .map(|t| t.registration.to_string())
    };
    let echo_before = registration("mcp__fixture__echo");
    let added = host
        .call("mcp__fixture__add_tool", json!({ "name": "late.tool" }))
        .await;
    assert_eq!(outcome(&added), Ok(json!("added")));
    host.wait_for("fixture", |s| {
        s.tools.iter().any(|t| t == "mcp__fixture__late.tool")
    })
    .await;
    let late = host.call("mcp__fixture__late.tool", json!({})).await;
    assert_eq!(outcome(&late), Ok(json!("called late.tool")));
    assert_eq!(registration("mcp__fixture__echo"), echo_before);
    host.call("mcp__fixture__remove_tool", json!({ "name": "late.tool" }))
        .await;
    host.wait_for("fixture", |s| {
        !s.tools.iter().any(|t| t == "mcp__fixture__late.tool")
    })
    .await;
    assert_eq!(registration("mcp__fixture__late.tool"), None);
    host.mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_that_cannot_start_or_crash_for_good_fail_naming_the_server() {
    let marker = scratch("once").join("started");
    let host = Host::start(
        PresentationMode::Native,
        json!({
            "missing": { "command": "definitely-not-a-command" },
            "refusing": fixture(&["--refuse"]),
            "once": fixture(&["--once", marker.to_str().unwrap()]),
        }),
    )
    .await;
    host.wait_for("missing", |s| s.state == McpServerState::Failed)
        .await;
    assert_eq!(
        host.status("missing").last_error.as_deref(),
        Some("could not start `definitely-not-a-command`: No such file or directory (os error 2)")
    );
    host.wait_for("refusing", |s| s.state == McpServerState::Failed)
        .await;
    assert_eq!(
        host.status("refusing").last_error.as_deref(),
        Some(
            "the server exited with exit status: 2 before it was ready (stderr: fixture: refusing to start)"
        )
    );
    assert_eq!(host.status("once").state, McpServerState::Running);
    let crashed = host.call("mcp__once__crash", json!({})).await;
    assert_eq!(
        outcome(&crashed),
        Err("MCP server \"once\" closed the connection during the call to \"crash\"".into())
    );
    host.wait_for("once", |s| s.state == McpServerState::Failed)
        .await;
    let expected = "the server exited with exit status: 2 before it was ready (stderr: fixture: refusing to start again)";
    assert_eq!(host.status("once").last_error.as_deref(), Some(expected));
    let after = host.call("mcp__once__echo", json!({})).await;
    assert_eq!(
        outcome(&after),
        Err(format!(
            "MCP server \"once\" failed and was not restarted again: {expected}"
        ))
    );
    host.mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_hangs_at_startup_is_abandoned_and_reaped() {
    let mut hang = fixture(&["--hang"]);
    hang["timeoutMs"] = json!(100);
    hang["env"] = json!({ "DSH_TEST_TAG": "hang" });
    let host = Host::start(
        PresentationMode::Native,
        json!({ "hang": hang, "ok": fixture(&[]) }),
    )
    .await;
    let hanging = mcp_common::descendants_with_env("DSH_TEST_TAG=hang");
    let status = host.status("hang");
    assert_eq!(status.state, McpServerState::Restarting);
    assert_eq!(
        status.last_error.as_deref(),
        Some("the server did not complete the MCP handshake and tools/list within 10000 ms")
    );
    let echo = host.call("mcp__ok__echo", json!({})).await;
    assert_eq!(outcome(&echo), Ok(json!("called echo with {}")));
    host.mcp.shutdown().await;
    assert_eq!(mcp_common::still_alive(&hanging), []);
    assert_eq!(mcp_common::descendants_with_env("DSH_TEST_TAG=hang"), []);
}

/// `startupTimeoutMs` (Codex's `startup_timeout_sec`) is the startup deadline exactly, below
/// the 10 s floor `timeoutMs` gets.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_startup_timeout_is_the_handshake_deadline_exactly() {
    let mut hang = fixture(&["--hang"]);
    hang["startupTimeoutMs"] = json!(1500);
    hang["env"] = json!({ "DSH_TEST_TAG": "hang-startup" });
    let host = Host::start(PresentationMode::Native, json!({ "hang": hang })).await;
    let status = host.status("hang");
    assert_eq!(status.state, McpServerState::Restarting);
    assert_eq!(
        status.last_error.as_deref(),
        Some("the server did not complete the MCP handshake and tools/list within 1500 ms")
    );
    let hanging = mcp_common::descendants_with_env("DSH_TEST_TAG=hang-startup");
    host.mcp.shutdown().await;
    assert_eq!(mcp_common::still_alive(&hanging), []);
}
