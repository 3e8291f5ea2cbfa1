//! The registry served over MCP (`dsh-tools mcp`) and driven by a client this project did
//! not write: the official Python `mcp` package (installed by `.ci/setup`). Also the
//! ingestion seen over this project's own wire protocol: `mcp/status` and `tools/listChanged`.

#![allow(clippy::unwrap_used)]

use crate::support::mcp as mcp_common;

use mcp_common::{Binary, all_running, fixture, time};
use serde_json::{Value, json};

/// Runs the Python MCP client against `dsh-tools mcp --mode <mode>` and returns its report.
fn python_client(mode: &str, calls: Value) -> Value {
    let config = json!({ "mcpServers": { "time": time(), "fixture": fixture(&[]) } });
    mcp_common::python_client(
        &format!("serve-{mode}"),
        mode,
        &config,
        json!({ "calls": calls }),
    )
}

fn names(report: &Value) -> Vec<String> {
    report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

fn tool<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap()
}

fn text(text: &str) -> Value {
    json!([{ "type": "text", "text": text }])
}

#[test]
fn native_mode_lists_and_calls_every_tool_with_its_exact_name() {
    let report = python_client(
        "native",
        json!([
            { "name": "mcp__time__get_current_time", "arguments": { "timezone": "UTC" } },
            { "name": "mcp__fixture__with space", "arguments": { "k": 1 } },
            { "name": "mcp__fixture__工具", "arguments": {} },
            { "name": "mcp__time__get_current_time", "arguments": { "timezone": "Nope/Zone" } },
            { "name": "run_code", "arguments": { "code": "return 1", "description": "x" } },
        ]),
    );
    assert_eq!(report["server"], "dsh-tools");
    assert_eq!(report["listChanged"], true);
    let listed = names(&report);
    assert!(!listed.contains(&"run_code".to_string()), "{listed:?}");
    for name in [
        "mcp__time__convert_time",
        "mcp__time__get_current_time",
        "mcp__fixture__with space",
        "mcp__fixture__quote\"back\\slash",
        "mcp__fixture__emoji🎉",
    ] {
        assert!(listed.contains(&name.to_string()), "{name} in {listed:?}");
    }
    let current = tool(&report, "mcp__time__get_current_time");
    assert_eq!(
        current["outputSchema"]["required"],
        json!(["timezone", "datetime", "day_of_week", "is_dst"])
    );
    assert_eq!(current["inputSchema"]["required"], json!(["timezone"]));
    assert_eq!(
        tool(&report, "mcp__fixture__echo")["outputSchema"],
        Value::Null
    );
    let calls = report["calls"].as_array().unwrap();
    assert_eq!(calls[0]["isError"], false);
    assert_eq!(calls[0]["structuredContent"]["timezone"], "UTC");
    assert_eq!(
        calls[1],
        json!({ "isError": false, "content": text("called with space with {\"k\": 1}"), "structuredContent": null })
    );
    assert_eq!(
        calls[2],
        json!({ "isError": false, "content": text("called 工具 with {}"), "structuredContent": null })
    );
    assert_eq!(
        calls[3],
        json!({ "isError": true, "content": text("Error: Error executing tool get_current_time: Invalid timezone: 'No time zone found with key Nope/Zone'"), "structuredContent": null })
    );
    assert_eq!(
        calls[4],
        json!({ "error": { "code": -32602, "message": "unknown tool \"run_code\"" } })
    );
}

/// Structured tools keep their `outputSchema` and `structuredContent` when re-served, both
/// server-everything's (zod's `$schema` on every node, inside the enforced subset once
/// annotations are) and mcp-server-time's `convert_time` (`$defs` and `$ref`: beyond the
/// subset, served as written and checked by the client, not the host).
#[test]
fn structured_tools_of_real_servers_keep_structured_content_when_re_served() {
    let config =
        json!({ "mcpServers": { "everything": mcp_common::everything(), "time": time() } });
    let report = mcp_common::python_client(
        "serve-structured",
        "native",
        &config,
        json!({ "calls": [
            { "name": "mcp__everything__get-structured-content", "arguments": { "location": "Chicago" } },
            { "name": "mcp__time__convert_time", "arguments": { "source_timezone": "UTC", "time": "12:00", "target_timezone": "UTC" } },
        ] }),
    );
    let weather = tool(&report, "mcp__everything__get-structured-content");
    assert_eq!(
        weather["outputSchema"]["$schema"],
        "http://json-schema.org/draft-07/schema#"
    );
    assert_eq!(
        weather["outputSchema"]["required"],
        json!(["temperature", "conditions", "humidity"])
    );
    let convert = tool(&report, "mcp__time__convert_time");
    assert!(convert["outputSchema"]["$defs"].is_object(), "{convert}");
    let calls = report["calls"].as_array().unwrap();
    assert_eq!(calls[0]["isError"], false, "{}", calls[0]);
    assert_eq!(
        calls[0]["structuredContent"],
        json!({ "temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82 })
    );
    assert_eq!(calls[1]["isError"], false, "{}", calls[1]);
    assert_eq!(
        calls[1]["structuredContent"]["time_difference"], "+0.0h",
        "{}",
        calls[1]
    );
}

#[test]
fn code_mode_exposes_run_code_with_the_sdk_over_every_ingested_server() {
    let program = r#"
        const now = await tools.mcp__time__get_current_time({ timezone: "UTC" });
        const echoed = await tools["mcp__fixture__with space"]({ zone: now.timezone });
        console.log("zone", now.timezone);
        return echoed;
    "#;
    let report = python_client(
        "code",
        json!([
            { "name": "run_code", "arguments": { "code": program, "description": "combine two servers" } },
            { "name": "mcp__time__get_current_time", "arguments": { "timezone": "UTC" } },
        ]),
    );
    assert_eq!(names(&report), ["run_code"]);
    let run_code = tool(&report, "run_code");
    let description = run_code["description"].as_str().unwrap();
    for expected in [
        "## Writing code for run_code",
        "```ts",
        "\n  mcp__time__get_current_time: {\n",
        "\n  \"mcp__fixture__with space\": {\n",
    ] {
        assert!(
            description.contains(expected),
            "{expected:?} in {description}"
        );
    }
    assert_eq!(
        run_code["inputSchema"]["required"],
        json!(["code", "description"])
    );
    let calls = report["calls"].as_array().unwrap();
    assert_eq!(
        calls[0],
        json!({
            "isError": false,
            "content": text("zone UTC\ncalled with space with {\"zone\": \"UTC\"}"),
            "structuredContent": { "logs": ["zone UTC"], "result": "called with space with {\"zone\": \"UTC\"}" }
        })
    );
    assert_eq!(
        calls[1],
        json!({
            "isError": true,
            "content": text("Error: unknown tool \"mcp__time__get_current_time\": only `run_code` is callable directly — call `mcp__time__get_current_time` from inside a `run_code` program instead"),
            "structuredContent": null
        })
    );
}

#[test]
fn both_mode_lists_native_tools_and_run_code() {
    let report = python_client(
        "both",
        json!([
            { "name": "mcp__fixture__a.b", "arguments": {} },
            { "name": "run_code", "arguments": { "code": "return await tools[\"mcp__fixture__a.b\"]({})", "description": "x" } },
        ]),
    );
    let listed = names(&report);
    assert_eq!(listed.last().map(String::as_str), Some("run_code"));
    assert!(listed.contains(&"mcp__fixture__a.b".to_string()));
    let calls = report["calls"].as_array().unwrap();
    assert_eq!(calls[0]["content"], text("called a.b with {}"));
    assert_eq!(
        calls[1]["structuredContent"]["result"],
        "called a.b with {}"
    );
}

#[test]
fn the_wire_protocol_reports_mcp_status_and_announces_list_changes() {
    let mut host = Binary::serve(json!({
        "mcpServers": {
            "time": time(),
            "fixture": fixture(&[]),
            "missing": { "command": "definitely-not-a-command" },
            "off": { "command": "x", "enabled": false }
        }
    }));
    let status = host.wait_for_status(|s| {
        s.iter()
            .filter(|s| s.server == "time" || s.server == "fixture")
            .all(|s| s.state == dsh_tools_protocol::McpServerState::Running)
    });
    let time_status = status.iter().find(|s| s.server == "time").unwrap();
    assert_eq!(
        serde_json::to_value(time_status).unwrap(),
        json!({
            "server": "time",
            "transport": "stdio",
            "state": "running",
            "tools": ["mcp__time__convert_time", "mcp__time__get_current_time"],
            "warnings": ["tool \"convert_time\": outputSchema goes beyond the enforced subset (outputSchema: unsupported keyword \"$defs\"); its structured output is passed on unchecked"]
        })
    );
    let servers: Vec<&str> = status.iter().map(|s| s.server.as_str()).collect();
    assert_eq!(servers, ["fixture", "missing", "off", "time"]);
    assert!(
        host.inbox
            .iter()
            .any(|m| m["method"] == "tools/listChanged")
    );
    host.inbox.clear();
    let added = host.request(
        "tools/execute",
        json!({ "callId": "c1", "name": "mcp__fixture__add_tool", "arguments": { "name": "fresh" } }),
    );
    assert_eq!(added["result"]["value"], "added");
    host.wait_for_status(|s| {
        s.iter()
            .any(|s| s.tools.iter().any(|t| t == "mcp__fixture__fresh"))
    });
    assert!(
        host.inbox
            .iter()
            .any(|m| m["method"] == "tools/listChanged")
    );
    let schemas = host.request("tools/schemas", json!({}));
    let listed: Vec<&str> = schemas["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(listed.contains(&"mcp__fixture__fresh"), "{listed:?}");
    let called = host.request(
        "tools/execute",
        json!({ "callId": "c2", "name": "mcp__time__get_current_time", "arguments": { "timezone": "UTC" } }),
    );
    assert_eq!(called["result"]["isError"], false);
    assert_eq!(called["result"]["value"]["timezone"], "UTC");
    assert!(!all_running(&host.wait_for_status(|_| true)));
    host.request("shutdown", json!(null));
    host.send(&json!({ "jsonrpc": "2.0", "method": "exit" }));
    assert_eq!(host.wait(), Some(0));
}
