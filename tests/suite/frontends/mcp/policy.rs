//! The full pipeline applies to calls that arrive through `dsh-tools mcp`, driven by the
//! official Python MCP client: permission rules (a deny, and an ask with no approver),
//! enforced timeouts (a server's `timeoutMs`, and `pipeline.timeout.defaultMs`), and the
//! metrics, read back as the `dsh-tools://metrics` resource.

#![allow(clippy::unwrap_used)]

use crate::support::mcp as mcp_common;

use mcp_common::{fixture, python_client};
use serde_json::{Value, json};

const METRICS: &str = "dsh-tools://metrics";

fn text(text: &str) -> Value {
    json!([{ "type": "text", "text": text }])
}

fn succeeded(text_: &str) -> Value {
    json!({ "isError": false, "content": text(text_), "structuredContent": null })
}

fn failed(message: &str) -> Value {
    json!({ "isError": true, "content": text(&format!("Error: {message}")), "structuredContent": null })
}

/// The metrics resource as `(name, calls, errors)` rows, checking each row's shape and
/// that its percentiles are ordered.
fn metrics(report: &Value) -> Vec<(String, u64, u64)> {
    assert_eq!(report["resourceList"], json!([METRICS]), "{report}");
    let texts = report["resources"][METRICS].as_array().unwrap();
    assert_eq!(texts.len(), 1, "{report}");
    let table: Value = serde_json::from_str(texts[0].as_str().unwrap()).unwrap();
    table
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            let keys: Vec<&String> = row.as_object().unwrap().keys().collect();
            assert_eq!(keys, ["name", "calls", "errors", "p50Ms", "p99Ms"], "{row}");
            let (p50, p99) = (
                row["p50Ms"].as_f64().unwrap(),
                row["p99Ms"].as_f64().unwrap(),
            );
            assert!(0.0 <= p50 && p50 <= p99, "{row}");
            (
                row["name"].as_str().unwrap().to_string(),
                row["calls"].as_u64().unwrap(),
                row["errors"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The p50 of `name` in the metrics resource (ms).
fn median_ms(report: &Value, name: &str) -> f64 {
    let texts = report["resources"][METRICS].as_array().unwrap();
    let table: Value = serde_json::from_str(texts[0].as_str().unwrap()).unwrap();
    let row = table
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["name"] == name);
    row.unwrap()["p50Ms"].as_f64().unwrap()
}

#[test]
fn native_calls_over_mcp_meet_permissions_the_default_timeout_and_metrics() {
    let config = json!({
        "mcpServers": { "fixture": fixture(&[]) },
        "pipeline": { "timeout": { "enforce": true, "defaultMs": 1000 } },
        "permissions": {
            "deny": ["mcp__fixture__no_properties"],
            "ask": ["mcp__fixture__empty_schema"]
        }
    });
    let calls = json!([
        { "name": "mcp__fixture__dash-ed", "arguments": {} },
        { "name": "mcp__fixture__no_properties", "arguments": {} },
        { "name": "mcp__fixture__empty_schema", "arguments": {} },
        { "name": "mcp__fixture__sleep", "arguments": {} },
        { "name": "mcp__fixture__fail", "arguments": {} },
        { "name": "mcp__fixture__dash-ed", "arguments": { "again": true } },
    ]);
    let report = python_client(
        "serve-policy-native",
        "native",
        &config,
        json!({ "calls": calls, "resources": [METRICS] }),
    );
    assert_eq!(
        report["calls"],
        json!([
            succeeded("called dash-ed with {}"),
            failed(
                "tool \"mcp__fixture__no_properties\" is denied by permission rule mcp__fixture__no_properties"
            ),
            failed(
                "permission rule mcp__fixture__empty_schema requires approval for tool \"mcp__fixture__empty_schema\", \
                 but no one could be asked: the MCP client did not declare form elicitation"
            ),
            failed("tool \"mcp__fixture__sleep\" timed out after 1000 ms"),
            failed("the fixture failed on purpose"),
            succeeded("called dash-ed with {\"again\": true}"),
        ])
    );
    // Denied calls never reach dispatch, so only dispatched calls are counted; the timed-out
    // call is an error that lasted at least its deadline.
    assert_eq!(
        metrics(&report),
        [
            ("mcp__fixture__dash-ed".to_string(), 2, 0),
            ("mcp__fixture__fail".to_string(), 1, 1),
            ("mcp__fixture__sleep".to_string(), 1, 1),
        ]
    );
    assert!(
        median_ms(&report, "mcp__fixture__sleep") >= 1000.0,
        "{report}"
    );
}

#[test]
fn code_mode_sub_calls_over_mcp_meet_permissions_tool_timeouts_and_metrics() {
    // The server's `timeoutMs` becomes each of its tools' own; `run_code` declares none.
    let mut server = fixture(&[]);
    server["timeoutMs"] = json!(1000);
    let config = json!({
        "mcpServers": { "fixture": server },
        "pipeline": { "timeout": { "enforce": true } },
        "permissions": { "deny": ["mcp__fixture__no_properties"] }
    });
    let program = r#"
        const first = await tools["mcp__fixture__dash-ed"]({});
        for (const name of ["mcp__fixture__no_properties", "mcp__fixture__sleep"]) {
            try {
                await tools[name]({});
            } catch (error) {
                console.log(`${error.toolName}: ${error.message}`);
            }
        }
        return first;
    "#;
    let calls = json!([
        { "name": "run_code", "arguments": { "code": program, "description": "policy" } },
    ]);
    let report = python_client(
        "serve-policy-code",
        "code",
        &config,
        json!({ "calls": calls, "resources": [METRICS] }),
    );
    let logs = [
        "mcp__fixture__no_properties: tool \"mcp__fixture__no_properties\" is denied by permission rule mcp__fixture__no_properties",
        "mcp__fixture__sleep: tool \"mcp__fixture__sleep\" timed out after 1000 ms",
    ];
    assert_eq!(
        report["calls"],
        json!([{
            "isError": false,
            "content": text(&format!("{}\n{}\ncalled dash-ed with {{}}", logs[0], logs[1])),
            "structuredContent": { "logs": logs, "result": "called dash-ed with {}" }
        }])
    );
    assert_eq!(
        metrics(&report),
        [
            ("mcp__fixture__dash-ed".to_string(), 1, 0),
            ("mcp__fixture__sleep".to_string(), 1, 1),
            ("run_code".to_string(), 1, 0),
        ]
    );
}
