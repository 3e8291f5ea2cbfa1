//! Deferred MCP tools: an ingested server's `deferTools: true` over the wire protocol, and
//! `dsh-tools mcp` serving deferred tools to the official Python MCP client, which sees them
//! only once a `search_tools` call loaded them (announced by
//! `notifications/tools/list_changed`), natively and in Code Mode.

#![allow(clippy::unwrap_used)]

use crate::support::discovery::{section, tool_names};
use crate::support::mcp::{Binary, all_running, fixture, python_client, time};
use serde_json::{Value, json};

fn servers() -> Value {
    let mut time = time();
    time["deferTools"] = json!(true);
    json!({ "time": time, "fixture": fixture(&[]) })
}

#[test]
fn a_server_with_defer_tools_keeps_its_tools_out_of_the_prompt_until_a_search() {
    let mut host = Binary::serve(json!({ "mcpServers": servers() }));
    host.wait_for_status(all_running);
    let prompt = host.request("tools/prompt", json!({}))["result"].clone();
    let names = tool_names(&prompt);
    assert!(
        names.contains(&"mcp__fixture__echo".to_string()),
        "{names:?}"
    );
    assert!(names.contains(&"search_tools".to_string()), "{names:?}");
    assert!(
        !names.iter().any(|n| n.starts_with("mcp__time__")),
        "{names:?}"
    );
    let deferred = section(&prompt, "tools:deferred").unwrap();
    assert!(
        deferred.ends_with("\n- mcp__time__convert_time\n- mcp__time__get_current_time"),
        "{deferred}"
    );

    host.inbox.clear();
    let search = host.request(
        "tools/execute",
        json!({ "callId": "s", "name": "search_tools", "arguments": { "query": "current time in a timezone" } }),
    );
    assert_eq!(
        search["result"]["value"]["tools"][0]["name"], "mcp__time__get_current_time",
        "{search}"
    );
    host.request("mcp/status", json!({}));
    assert!(
        host.inbox
            .iter()
            .any(|m| m["method"] == "tools/listChanged" && m["params"] == json!({})),
        "{:?}",
        host.inbox
    );
    let prompt = host.request("tools/prompt", json!({}))["result"].clone();
    assert!(
        tool_names(&prompt).contains(&"mcp__time__get_current_time".to_string()),
        "{prompt}"
    );
    let called = host.request(
        "tools/execute",
        json!({ "callId": "c", "name": "mcp__time__convert_time", "arguments": { "source_timezone": "UTC", "time": "12:00", "target_timezone": "UTC" } }),
    );
    assert_eq!(
        called["result"]["isError"], false,
        "deferred, yet callable: {called}"
    );
}

fn names(tools: &Value) -> Vec<String> {
    tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn dsh_tools_mcp_lists_deferred_tools_once_a_search_loads_them() {
    let config = json!({ "mcpServers": servers() });
    let report = python_client(
        "discovery-native",
        "native",
        &config,
        json!({
            "calls": [
                { "name": "search_tools", "arguments": { "query": "convert a time between timezones", "limit": 1 } },
                { "name": "mcp__time__get_current_time", "arguments": { "timezone": "UTC" } }
            ],
            "relist": true
        }),
    );
    let before = names(&report["tools"]);
    assert!(before.contains(&"search_tools".to_string()), "{before:?}");
    assert!(before.contains(&"mcp__fixture__echo".to_string()));
    assert!(
        !before.iter().any(|n| n.starts_with("mcp__time__")),
        "{before:?}"
    );
    let calls = report["calls"].as_array().unwrap();
    assert_eq!(calls[0]["isError"], false, "{}", calls[0]);
    assert_eq!(
        calls[0]["structuredContent"]["tools"][0]["name"],
        "mcp__time__convert_time"
    );
    assert_eq!(calls[1]["isError"], false, "callable before it is listed");
    assert!(
        report["listChangedNotifications"].as_u64().unwrap() >= 1,
        "{report}"
    );
    let after = names(&report["toolsAfter"]);
    assert_eq!(
        after.last().map(String::as_str),
        Some("mcp__time__convert_time")
    );
    assert!(
        !after.contains(&"mcp__time__get_current_time".to_string()),
        "{after:?}"
    );
}

#[test]
fn dsh_tools_mcp_in_code_mode_declares_what_a_program_found() {
    let config = json!({ "mcpServers": servers() });
    let program = r#"
        const found = await tools.search_tools({ query: "select:mcp__time__get_current_time" });
        const now = await tools.mcp__time__get_current_time({ timezone: "UTC" });
        return [found.tools[0].name, now.timezone];
    "#;
    let report = python_client(
        "discovery-code",
        "code",
        &config,
        json!({
            "calls": [{ "name": "run_code", "arguments": { "code": program, "description": "search, then call" } }],
            "relist": true
        }),
    );
    let description = |tools: &Value| tools[0]["description"].as_str().unwrap().to_string();
    let before = description(&report["tools"]);
    assert!(
        before.contains("\n- mcp__time__get_current_time — "),
        "{before}"
    );
    assert!(
        !before.contains("\n  mcp__time__get_current_time: {"),
        "{before}"
    );
    let call = &report["calls"][0];
    assert_eq!(
        call["structuredContent"]["result"],
        json!(["mcp__time__get_current_time", "UTC"]),
        "{call}"
    );
    assert!(
        report["listChangedNotifications"].as_u64().unwrap() >= 1,
        "{report}"
    );
    let after = description(&report["toolsAfter"]);
    assert!(
        after.contains("\n  mcp__time__get_current_time: {"),
        "{after}"
    );
    assert!(
        !after.contains("\n- mcp__time__get_current_time — "),
        "{after}"
    );
}
