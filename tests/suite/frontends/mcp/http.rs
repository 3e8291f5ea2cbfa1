//! `dsh-tools mcp --http`, through the real binary: the official Python MCP client over
//! Streamable HTTP lists, calls and runs code; two sessions open at once have their own
//! agent scopes (a tool `search_tools` loads in one is listed, and announced with
//! `notifications/tools/list_changed`, there only), closed with their sessions; no or a wrong token is 401, a foreign Origin 403, an oversized body
//! 413, a non-loopback bind refused without `--http-allow-remote`; an idle session
//! expires; SIGTERM ends the server; 50 concurrent clients × 20 calls are all answered.

#![allow(clippy::unwrap_used)]

use crate::support::http::{HttpHost, INITIALIZE};
use crate::support::mcp::scratch;
use serde_json::{Value, json};

/// A host with the fs built-ins over a root holding `note.txt`, `grep` deferred.
fn config(name: &str) -> Value {
    let root = scratch(&format!("{name}-root"));
    std::fs::write(root.join("note.txt"), "hello over http\n").unwrap();
    json!({
        "tools": { "mode": "both", "deferred": ["grep"] },
        "builtins": { "fs": { "root": root.to_str().unwrap() } }
    })
}

fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|block| block["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_python_client_lists_calls_and_runs_code_over_http() {
    let host = HttpHost::start("http-basic", &config("http-basic"), &[]);
    let program = r#"const read = await tools.read({ file_path: "note.txt" }); return read;"#;
    let report = host.python(json!({ "sessions": 1, "steps": [
        { "session": 0, "op": "list" },
        { "session": 0, "op": "call", "name": "read", "arguments": { "file_path": "note.txt" } },
        { "session": 0, "op": "call", "name": "run_code", "arguments": { "code": program, "description": "read over http" } },
        { "session": 0, "op": "call", "name": "no_such_tool", "arguments": {} }
    ] }));
    assert_eq!(report["servers"], json!(["dsh-tools"]));
    let listed = &report["steps"][0];
    for name in ["read", "write", "search_tools", "run_code"] {
        assert!(
            listed.as_array().unwrap().contains(&json!(name)),
            "{listed}"
        );
    }
    assert!(
        !listed.as_array().unwrap().contains(&json!("grep")),
        "{listed}"
    );
    let read = &report["steps"][1];
    assert_eq!(read["isError"], json!(false), "{read}");
    assert!(text_of(read).contains("hello over http"), "{read}");
    let run = &report["steps"][2];
    assert_eq!(run["isError"], json!(false), "{run}");
    assert!(text_of(run).contains("hello over http"), "{run}");
    let unknown = &report["steps"][3];
    assert_eq!(
        unknown["error"]["message"],
        json!("unknown tool \"no_such_tool\"")
    );
}

#[test]
fn two_sessions_at_once_have_their_own_scopes_closed_with_them() {
    let mut host = HttpHost::start("http-scopes", &config("http-scopes"), &[]);
    // (Listing first gives the client's GET stream, where the announcement comes, time to
    // open: rmcp drops what a session announces before that.)
    let report = host.python(json!({ "sessions": 2, "steps": [
        { "session": 0, "op": "list" },
        { "session": 0, "op": "call", "name": "search_tools", "arguments": { "query": "select:grep" } },
        { "session": 0, "op": "list" },
        { "session": 1, "op": "list" },
        { "session": 0, "op": "call", "name": "grep", "arguments": { "pattern": "hello" } },
        { "session": 0, "op": "waitListChanged" }
    ] }));
    let steps = report["steps"].as_array().unwrap();
    assert!(
        !steps[0].as_array().unwrap().contains(&json!("grep")),
        "{}",
        steps[0]
    );
    assert_eq!(steps[1]["isError"], json!(false), "{}", steps[1]);
    assert!(
        steps[2].as_array().unwrap().contains(&json!("grep")),
        "{}",
        steps[2]
    );
    assert!(
        !steps[3].as_array().unwrap().contains(&json!("grep")),
        "{}",
        steps[3]
    );
    assert_eq!(steps[4]["isError"], json!(false), "{}", steps[4]);
    assert!(text_of(&steps[4]).contains("note.txt"), "{}", steps[4]);
    // The load changed session 0's listing only, and only session 0 was told.
    assert_eq!(steps[5], json!(1));
    assert_eq!(report["listChanged"], json!([1, 0]));
    // The client deleted both sessions on exit: their scopes are closed.
    for agent in ["mcp-http-1", "mcp-http-2"] {
        host.wait_for_line(&format!("MCP session opened agent scope {agent}"));
        host.wait_for_line(&format!("MCP session closed agent scope {agent}"));
    }
}

#[test]
fn tokens_origins_body_size_and_the_bind_address_are_enforced() {
    let host = HttpHost::start(
        "http-auth",
        &config("http-auth"),
        &["--http-max-body", "4096"],
    );
    let bearer = host.bearer();
    let (status, answer) = host.post("/mcp", &[], INITIALIZE);
    assert_eq!(status, 401, "{answer}");
    assert!(
        answer.to_lowercase().contains("www-authenticate: bearer"),
        "{answer}"
    );
    let (status, _) = host.post("/mcp", &[("Authorization", "Bearer wrong")], INITIALIZE);
    assert_eq!(status, 401);
    let (status, _) = host.post("/mcp", &[("Authorization", &host.token)], INITIALIZE);
    assert_eq!(status, 401, "a token without the Bearer scheme");
    let evil = [
        ("Authorization", bearer.as_str()),
        ("Origin", "http://evil.example"),
    ];
    let (status, answer) = host.post("/mcp", &evil, INITIALIZE);
    assert_eq!(status, 403, "{answer}");
    let own_origin = format!("http://127.0.0.1:{}", host.port);
    let own = [
        ("Authorization", bearer.as_str()),
        ("Origin", own_origin.as_str()),
    ];
    let (status, answer) = host.post("/mcp", &own, INITIALIZE);
    assert_eq!(status, 200, "{answer}");
    assert!(answer.contains("\"serverInfo\""), "{answer}");
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(8192)
    );
    let (status, answer) = host.post("/mcp", &[("Authorization", bearer.as_str())], &big);
    assert_eq!(status, 413, "{answer}");
    let (status, _) = host.post(
        "/elsewhere",
        &[("Authorization", bearer.as_str())],
        INITIALIZE,
    );
    assert_eq!(status, 404);
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
        .args(["mcp", "--http", "0.0.0.0:0"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("--http-allow-remote"), "{stderr}");
    let unset = std::process::Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
        .args([
            "mcp",
            "--http",
            "127.0.0.1:0",
            "--http-token-env",
            "DSH_TEST_NO_SUCH_TOKEN",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!unset.status.success());
    let stderr = String::from_utf8_lossy(&unset.stderr);
    assert!(stderr.contains("DSH_TEST_NO_SUCH_TOKEN"), "{stderr}");
}

#[test]
fn an_idle_session_expires_and_closes_its_scope() {
    let mut host = HttpHost::start(
        "http-idle",
        &config("http-idle"),
        &["--http-idle-secs", "1"],
    );
    let bearer = host.bearer();
    let (status, answer) = host.post("/mcp", &[("Authorization", bearer.as_str())], INITIALIZE);
    assert_eq!(status, 200, "{answer}");
    let session = answer
        .lines()
        .find_map(|line| {
            line.to_lowercase()
                .strip_prefix("mcp-session-id:")
                .map(|v| v.trim().to_owned())
        })
        .unwrap();
    host.wait_for_line("MCP session opened agent scope mcp-http-1");
    host.wait_for_line("MCP session closed agent scope mcp-http-1");
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let headers = [
        ("Authorization", bearer.as_str()),
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let (status, answer) = host.post("/mcp", &headers, ping);
    assert_eq!(status, 404, "{answer}");
    assert_eq!(host.terminate(), Some(0), "SIGTERM ends the server cleanly");
}

#[test]
fn fifty_concurrent_clients_making_twenty_calls_each_are_all_answered() {
    let host = HttpHost::start("http-load", &config("http-load"), &[]);
    let report = host.python(json!({ "load": {
        "clients": 50, "calls": 20, "name": "read", "arguments": { "file_path": "note.txt" }
    } }));
    assert_eq!(report, json!({ "answered": 1000, "failed": [] }));
}
