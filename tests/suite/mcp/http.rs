//! Ingestion over Streamable HTTP, through the real binary: `server-everything` in its
//! `streamableHttp` mode behind a loopback proxy that requires a bearer token, called
//! natively and from Code Mode, its `list_changed` followed; the token (from `${VAR}` in a header, or `bearerTokenEnv`)
//! never shows in `mcp/status`; a session the server forgets is re-initialized; a killed
//! server is reconnected; an unreachable URL, a
//! refused token, an HTML answer and a TLS failure each fail that server naming it while
//! another works; a deadline aborts a call with `notifications/cancelled`; the log never
//! shows a header value or token.

#![allow(clippy::unwrap_used)]

use crate::support::http::{Everything, HttpHost, Mode, Proxy, eventually, free_port};
use crate::support::mcp::{Binary, all_running};
use dsh_tools_protocol::{McpServerState, McpServerStatus, McpTransport};
use serde_json::{Value, json};
use std::sync::atomic::Ordering;

const TOKEN: &str = "tok-7f3a9c2e5b";

/// `tools/execute` of `name` and its wire result.
fn execute(host: &mut Binary, name: &str, arguments: Value) -> Value {
    let answer = host.request(
        "tools/execute",
        json!({ "callId": "c", "name": name, "arguments": arguments }),
    );
    answer["result"].clone()
}

/// The value of a success or the message of a failure.
fn outcome(result: &Value) -> Result<Value, String> {
    match result["isError"].as_bool() {
        Some(false) => Ok(result["value"].clone()),
        _ => Err(result["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned()),
    }
}

fn status_of<'a>(status: &'a [McpServerStatus], server: &str) -> &'a McpServerStatus {
    status.iter().find(|s| s.server == server).unwrap()
}

#[test]
fn an_http_server_behind_a_bearer_proxy_is_called_natively_and_from_code_mode() {
    let everything = Everything::start();
    let proxy = Proxy::start(TOKEN, everything.port);
    let config = json!({
        "tools": { "mode": "both" },
        "mcpServers": {
            "ev": { "url": proxy.url(), "headers": { "Authorization": "Bearer ${EV_TOKEN}", "X-Team": "team-${EV_TEAM}" } },
            "ev2": { "url": proxy.url(), "bearerTokenEnv": "EV_TOKEN", "tools": { "allow": ["echo"] } }
        }
    });
    let mut host = Binary::serve_with_env(config, &[("EV_TOKEN", TOKEN), ("EV_TEAM", "blue")]);
    let status = host.wait_for_status(all_running);
    let ev = status_of(&status, "ev");
    assert_eq!(ev.transport, McpTransport::Http);
    assert!(ev.tools.iter().any(|t| t == "mcp__ev__get-sum"), "{ev:?}");
    assert_eq!(status_of(&status, "ev2").tools, ["mcp__ev2__echo"]);
    // server-everything registers a tool once initialized and announces it with
    // notifications/tools/list_changed (on the session's GET stream): the re-list has it.
    host.wait_for_status(|all| {
        status_of(all, "ev")
            .tools
            .iter()
            .any(|t| t == "mcp__ev__simulate-research-query")
    });
    let echo = execute(&mut host, "mcp__ev__echo", json!({ "message": "hi" }));
    assert_eq!(outcome(&echo), Ok(json!("Echo: hi")));
    let echo = execute(&mut host, "mcp__ev2__echo", json!({ "message": "two" }));
    assert_eq!(outcome(&echo), Ok(json!("Echo: two")));
    let program = r#"
        const sum = await tools["mcp__ev__get-sum"]({ a: 40, b: 2 });
        const echoed = await tools.mcp__ev2__echo({ message: sum });
        return { sum, echoed };
    "#;
    let run = execute(
        &mut host,
        "run_code",
        json!({ "code": program, "description": "two HTTP servers" }),
    );
    assert_eq!(
        outcome(&run).map(|v| v["result"].clone()),
        Ok(
            json!({ "sum": "The sum of 40 and 2 is 42.", "echoed": "Echo: The sum of 40 and 2 is 42." })
        )
    );
    // A session the server forgets mid-use (404) is re-initialized and the call retried.
    proxy.expire_next_session();
    let echo = execute(&mut host, "mcp__ev__echo", json!({ "message": "again" }));
    assert_eq!(outcome(&echo), Ok(json!("Echo: again")));
    assert_eq!(proxy.expired.load(Ordering::SeqCst), 1);
    assert!(proxy.authorized.load(Ordering::SeqCst) > 0);
    assert_eq!(proxy.refused.load(Ordering::SeqCst), 0);
    let raw = host.request("mcp/status", json!({})).to_string();
    assert!(raw.contains("\"transport\":\"http\""), "{raw}");
    for secret in [TOKEN, "team-blue"] {
        assert!(!raw.contains(secret), "{raw}");
    }
}

#[test]
fn a_killed_http_server_fails_its_calls_naming_it_and_is_reconnected() {
    let mut everything = Everything::start();
    let proxy = Proxy::start(TOKEN, everything.port);
    let config =
        json!({ "mcpServers": { "ev": { "url": proxy.url(), "bearerTokenEnv": "EV_TOKEN" } } });
    let mut host = Binary::serve_with_env(config, &[("EV_TOKEN", TOKEN)]);
    host.wait_for_status(all_running);
    everything.kill();
    let failed = execute(&mut host, "mcp__ev__echo", json!({ "message": "gone" }));
    let message = outcome(&failed).unwrap_err();
    assert!(message.contains("MCP server \"ev\""), "{message}");
    assert!(!message.contains(TOKEN), "{message}");
    let restarted = Everything::start();
    proxy.set_upstream(restarted.port);
    let echoed = eventually("the reconnected server to answer", || {
        let result = execute(&mut host, "mcp__ev__echo", json!({ "message": "back" }));
        outcome(&result).ok()
    });
    assert_eq!(echoed, json!("Echo: back"));
    let status = host.wait_for_status(all_running);
    let last_error = status_of(&status, "ev")
        .last_error
        .clone()
        .unwrap_or_default();
    assert!(!last_error.contains(TOKEN), "{last_error}");
}

#[test]
fn a_deadline_aborts_an_http_call_with_notifications_cancelled_and_the_server_stays_usable() {
    let everything = Everything::start();
    let proxy = Proxy::start(TOKEN, everything.port);
    let config = json!({ "mcpServers": { "ev": { "url": proxy.url(), "bearerTokenEnv": "EV_TOKEN", "timeoutMs": 500 } } });
    let mut host = Binary::serve_with_env(config, &[("EV_TOKEN", TOKEN)]);
    host.wait_for_status(all_running);
    let started = std::time::Instant::now();
    let slow = execute(
        &mut host,
        "mcp__ev__trigger-long-running-operation",
        json!({ "duration": 30, "steps": 30 }),
    );
    assert!(outcome(&slow).is_err(), "{slow}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{slow}"
    );
    eventually("notifications/cancelled to reach the server", || {
        (proxy.cancellations.load(Ordering::SeqCst) >= 1).then_some(())
    });
    let echo = execute(&mut host, "mcp__ev__echo", json!({ "message": "after" }));
    assert_eq!(outcome(&echo), Ok(json!("Echo: after")));
}

#[test]
fn unreachable_refused_and_html_servers_fail_naming_themselves_while_another_works() {
    let everything = Everything::start();
    let good = Proxy::start(TOKEN, everything.port);
    let wrong_token = Proxy::start("another-token-value", everything.port);
    let html = Proxy::start(TOKEN, everything.port);
    html.set_mode(Mode::Html);
    let dead = format!("http://127.0.0.1:{}/mcp", free_port());
    let config = json!({ "mcpServers": {
        "good": { "url": good.url(), "bearerTokenEnv": "EV_TOKEN" },
        "refused": { "url": wrong_token.url(), "bearerTokenEnv": "EV_TOKEN" },
        "html": { "url": html.url(), "bearerTokenEnv": "EV_TOKEN" },
        "dead": { "url": dead, "bearerTokenEnv": "EV_TOKEN", "timeoutMs": 2000 },
        "tls": { "url": format!("https://127.0.0.1:{}/mcp", everything.port) },
        "unset": { "url": good.url(), "bearerTokenEnv": "NOT_SET_ANYWHERE" }
    } });
    let mut host = Binary::serve_with_env(config, &[("EV_TOKEN", TOKEN)]);
    let status = host.wait_for_status(|all| {
        all.iter().all(|s| match s.server.as_str() {
            "good" => s.state == McpServerState::Running,
            _ => s.last_error.is_some(),
        })
    });
    let error = |server: &str| status_of(&status, server).last_error.clone().unwrap();
    let refused = error("refused");
    assert!(refused.contains("answered 401 Unauthorized"), "{refused}");
    let html_error = error("html");
    assert!(html_error.contains("text/html"), "{html_error}");
    let dead_error = error("dead");
    assert!(
        dead_error.starts_with(&format!("could not connect to {dead}"))
            && dead_error.contains("Connection refused"),
        "{dead_error}"
    );
    let tls_error = error("tls");
    assert!(
        tls_error.starts_with(&format!(
            "could not connect to https://127.0.0.1:{}/mcp",
            everything.port
        )) && tls_error.contains("corrupt message"),
        "{tls_error}"
    );
    assert_eq!(
        error("unset"),
        "bearerTokenEnv: the environment variable NOT_SET_ANYWHERE is unset or empty"
    );
    assert_eq!(status_of(&status, "unset").state, McpServerState::Failed);
    let raw = host.request("mcp/status", json!({})).to_string();
    assert!(!raw.contains(TOKEN), "{raw}");
    let echo = execute(
        &mut host,
        "mcp__good__echo",
        json!({ "message": "still here" }),
    );
    assert_eq!(outcome(&echo), Ok(json!("Echo: still here")));
}

#[test]
fn secrets_stay_out_of_the_log_while_servers_fail_and_work() {
    let everything = Everything::start();
    let good = Proxy::start(TOKEN, everything.port);
    let refused = Proxy::start("another-token-value", everything.port);
    let config = json!({ "mcpServers": {
        "good": { "url": good.url(), "headers": { "Authorization": "Bearer ${EV_TOKEN}", "X-Key": "${EV_KEY}" } },
        "refused": { "url": refused.url(), "headers": { "Authorization": "Bearer ${EV_TOKEN}", "X-Key": "${EV_KEY}" } }
    } });
    let env = [("EV_TOKEN", TOKEN), ("EV_KEY", "key-91b2c3d4")];
    let mut host = HttpHost::start_with_env("http-secrets", &config, &[], &env);
    host.wait_for_line("[refused] could not connect to");
    let report = host.python(json!({ "sessions": 1, "steps": [
        { "session": 0, "op": "call", "name": "mcp__good__echo", "arguments": { "message": "logged?" } }
    ] }));
    assert_eq!(report["steps"][0]["isError"], json!(false), "{report}");
    for line in &host.seen {
        assert!(
            !line.contains(TOKEN) && !line.contains("key-91b2c3d4"),
            "{line}"
        );
    }
}
