//! Offline validation against the providers' own SDK types: `tools/prompt` output for the
//! 80-tool catalog (every DSL construct, raw schemas, a deferred tool) in every format, and
//! tool-result blocks (text, image, error), are handed to
//! `tests/providers/check_sdk_types.py`, which builds the official `anthropic`, `openai`
//! and `google-genai` request objects from them and checks OpenAI's strict-mode rules one
//! by one (the SDKs are pinned in `tests/mcp-servers/requirements.txt`, installed by
//! `.ci/setup`).

#![allow(clippy::unwrap_used)]

use super::catalog::{dsl_tools, raw_tools};
use crate::support::discovery::{Client, deferred_spec};
use crate::support::mcp::installed;
use serde_json::{Map, Value, json};
use std::process::Command;

const FORMATS: [&str; 5] = [
    "anthropic",
    "openai-responses",
    "openai-chat",
    "gemini",
    "mcp",
];

#[test]
fn prompts_and_results_validate_against_the_official_sdk_types() {
    let mut client = Client::new(json!({}));
    let mut tools = dsl_tools();
    tools.extend(raw_tools(20));
    tools.push(deferred_spec(
        "archive_issue",
        "Archive an issue.",
        json!({ "id": { "type": "integer", "required": true } }),
    ));
    assert!(tools.len() >= 80);
    for tool in &tools {
        client.register(tool.clone(), None);
    }
    let mut prompts = Map::new();
    for format in FORMATS {
        let response = client.request("tools/prompt", json!({ "format": format }));
        prompts.insert(format.into(), response["result"].clone());
    }
    let native = client.request(
        "tools/prompt",
        json!({ "format": "anthropic", "nativeToolSearch": "bm25" }),
    )["result"]
        .clone();
    let mut results = Map::new();
    let image = json!({ "type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png" });
    for format in FORMATS {
        let mut blocks = Vec::new();
        for (call, content) in [
            ("text", json!([{ "type": "text", "text": "hi" }])),
            (
                "image",
                json!([{ "type": "text", "text": "a picture" }, image]),
            ),
        ] {
            let params = json!({ "callId": call, "name": "tool_00_string", "arguments": { "a": "x" }, "format": format });
            let response = client.wire.request_answering(
                "tools/execute",
                params,
                |_| json!({ "value": "hi", "content": content }),
            );
            blocks.push(response["result"]["providerResult"].clone());
        }
        let failing =
            json!({ "callId": "error", "name": "no_such_tool", "arguments": {}, "format": format });
        blocks.push(client.request("tools/execute", failing)["result"]["providerResult"].clone());
        results.insert(format.into(), Value::Array(blocks));
    }
    let input = json!({ "prompts": prompts, "native": native, "results": results });
    let dir = tempfile_dir();
    let path = dir.join("prompts.json");
    std::fs::write(&path, serde_json::to_vec(&input).unwrap()).unwrap();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/providers/check_sdk_types.py"
    );
    let output = Command::new(installed(".venv/bin/python"))
        .arg(script)
        .arg(&path)
        .output()
        .expect("the Python venv of .ci/setup");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Kept on failure, to run the script on it by hand.
    assert!(
        output.status.success(),
        "{stdout}\n{stderr}\n(input: {})",
        path.display()
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert!(stdout.trim_end().ends_with("OK"), "{stdout}");
    assert!(stdout.contains("strict rules hold on"), "{stdout}");
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("dsh-providers-sdk-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
