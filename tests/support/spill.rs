//! Helpers of the spill suites: a host whose spill directory is a test's own, and readers of
//! what a spilled result says (its preview, its `meta.spill`, the path in its marker).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use super::wire::{Framing, Host};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The default threshold (`spill.thresholdBytes`).
pub const THRESHOLD: usize = 40_000;

/// The line a spilled text ends with.
pub const READ_MORE: &str = dsh_tools::spill::preview::READ_MORE;

/// A host serving client tools, with `spill.dir` at `dir` and `extra` merged into its
/// config.
pub fn host_spilling_into(dir: &Path, capabilities: Value, extra: Value) -> Host {
    let mut config = json!({ "spill": { "dir": dir.display().to_string() } });
    dsh_tools::config::merge(&mut config, extra);
    let mut capabilities_with_tools = json!({ "executeTools": true });
    dsh_tools::config::merge(&mut capabilities_with_tools, capabilities);
    Host::initialized(Framing::Ndjson, capabilities_with_tools, config)
}

/// A client tool returning any string, registered on `host`.
pub fn register_text_tool(host: &mut Host, name: &str) {
    let response = host.request(
        "tools/register",
        json!({ "tool": {
            "name": name,
            "description": "Returns the text it is given by the test.",
            "inputSchema": { "type": "object" },
            "output": { "schema": { "type": "string" } },
            "concurrencySafe": true
        } }),
    );
    assert!(response["result"]["registration"].is_string(), "{response}");
}

/// Calls `name` and answers its `client/executeTool` with `value`; returns the result.
pub fn call_answering(host: &mut Host, call_id: &str, name: &str, value: &str) -> Value {
    let response = host.request_answering(
        "tools/execute",
        json!({ "callId": call_id, "name": name, "arguments": {} }),
        |_| json!({ "value": value }),
    );
    response["result"].clone()
}

/// The text of a result's single text block.
pub fn text_of(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text block: {result}"))
        .to_owned()
}

/// `meta.spill` as `(path, bytes)`.
pub fn spill_meta(result: &Value) -> (PathBuf, u64) {
    let spill = &result["meta"]["spill"];
    let path = spill["path"]
        .as_str()
        .unwrap_or_else(|| panic!("no meta.spill: {result}"));
    (PathBuf::from(path), spill["bytes"].as_u64().unwrap())
}

/// The file a spill marker names (`... is saved in <path> ...]`).
pub fn marker_path(text: &str) -> PathBuf {
    let after = text
        .split(" is saved in ")
        .nth(1)
        .unwrap_or_else(|| panic!("no spill marker in {text:?}"));
    PathBuf::from(after.split(" ...]").next().unwrap())
}

/// Numbered lines `prefix <i>` for `0..count`, one per line.
pub fn numbered_lines(prefix: &str, count: usize) -> String {
    (0..count).map(|i| format!("{prefix} {i}\n")).collect()
}

/// `seq from to` as bash prints it.
pub fn seq(from: u64, to: u64) -> Vec<u8> {
    (from..=to)
        .flat_map(|i| format!("{i}\n").into_bytes())
        .collect()
}
