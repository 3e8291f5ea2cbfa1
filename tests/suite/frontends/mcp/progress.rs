//! `dsh-tools mcp` forwards progress to the official Python MCP client: a `bash` call made
//! with a `progress_callback` (its request carries `_meta.progressToken`) gets the lines
//! it prints as callbacks, in order, with a strictly increasing `progress`, over stdio and
//! over Streamable HTTP, also from a Code Mode sub-call; a call without a token gets none.

#![allow(clippy::unwrap_used)]

use crate::support::http::HttpHost;
use crate::support::mcp::{python_client, scratch};
use serde_json::{Value, json};

const PRINTS: &str = "for i in 1 2 3; do echo line$i; sleep 0.2; done";

fn config(name: &str) -> Value {
    let cwd = scratch(name);
    json!({ "builtins": { "bash": { "cwd": cwd.to_str().unwrap() } } })
}

/// Asserts `call` succeeded and its progress callbacks carry `line1..line3` in order with
/// a strictly increasing progress.
fn assert_lines(call: &Value) {
    assert_eq!(call["isError"], false, "{call}");
    let reports = call["progress"].as_array().unwrap();
    let progress: Vec<f64> = reports.iter().map(|r| r[0].as_f64().unwrap()).collect();
    assert!(
        !progress.is_empty() && progress.windows(2).all(|w| w[0] < w[1]),
        "{call}"
    );
    let text: String = reports.iter().filter_map(|r| r[2].as_str()).collect();
    assert_eq!(text, "line1\nline2\nline3\n", "{call}");
}

#[test]
fn stdio_calls_with_a_progress_token_get_their_output_as_progress() {
    let program = format!("return await tools.bash({{ command: {} }});", json!(PRINTS));
    let report = python_client(
        "mcp-progress",
        "both",
        &config("mcp-progress"),
        json!({ "calls": [
            { "name": "bash", "arguments": { "command": PRINTS }, "progress": true },
            { "name": "run_code", "arguments": { "code": program, "description": "prints" }, "progress": true },
        ] }),
    );
    let calls = report["calls"].as_array().unwrap();
    assert_lines(&calls[0]);
    assert_lines(&calls[1]);
    // The session saw no notifications/progress besides those of the two calls.
    let reported = calls[0]["progress"].as_array().unwrap().len()
        + calls[1]["progress"].as_array().unwrap().len();
    assert_eq!(report["progressNotifications"], reported, "{report}");
    // Without a token: nothing.
    let report = python_client(
        "mcp-no-progress",
        "both",
        &config("mcp-no-progress"),
        json!({ "calls": [{ "name": "bash", "arguments": { "command": PRINTS } }] }),
    );
    assert_eq!(report["calls"][0]["isError"], false, "{report}");
    assert_eq!(report["progressNotifications"], 0, "{report}");
}

#[test]
fn http_calls_with_a_progress_token_get_their_output_as_progress() {
    let host = HttpHost::start("mcp-http-progress", &config("mcp-http-progress"), &[]);
    let report = host.python(json!({ "sessions": 1, "steps": [
        { "session": 0, "op": "call", "name": "bash", "arguments": { "command": PRINTS }, "progress": true },
        { "session": 0, "op": "call", "name": "bash", "arguments": { "command": PRINTS } }
    ] }));
    assert_lines(&report["steps"][0]);
    assert_eq!(report["steps"][1]["isError"], false, "{report}");
    assert!(report["steps"][1].get("progress").is_none(), "{report}");
}
