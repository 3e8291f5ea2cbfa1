//! Ingestion against real MCP servers installed from npm and PyPI by `.ci/setup`:
//! `@modelcontextprotocol/server-everything`, `@modelcontextprotocol/server-filesystem`
//! and `mcp-server-time`. Listing, calls, structured output, error results, cancellation,
//! deadlines, list changes, a crash and its restart, and Code Mode across two servers.

#![allow(clippy::unwrap_used)]

use crate::support::mcp as mcp_common;

use dsh_tools::code_mode::CodeMode;
use dsh_tools::tool::{HarnessCode, Signal, ToolExecutionInput};
use dsh_tools_protocol::{McpServerState, PresentationMode};
use mcp_common::{Host, everything, filesystem, outcome, scratch, time};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const CONVERT_TIME_WARNING: &str = "tool \"convert_time\": outputSchema goes beyond the enforced subset (outputSchema: unsupported keyword \"$defs\"); its structured output is passed on unchecked";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_servers_are_listed_with_exact_names_and_per_tool_warnings() {
    let root = scratch("fs-list");
    let host = Host::start(
        PresentationMode::Native,
        json!({
            "time": time(),
            "everything": everything(),
            "fs": filesystem(root.to_str().unwrap()),
            "off": { "command": "nonexistent", "enabled": false },
            "only": { "command": time()["command"], "args": time()["args"], "tools": { "deny": ["convert_time"] } }
        }),
    )
    .await;
    let time_status = host.status("time");
    assert_eq!(time_status.state, McpServerState::Running);
    assert_eq!(
        time_status.tools,
        ["mcp__time__convert_time", "mcp__time__get_current_time"]
    );
    assert_eq!(time_status.warnings, [CONVERT_TIME_WARNING]);
    assert_eq!(time_status.last_error, None);
    assert_eq!(host.registered("time"), time_status.tools);
    assert_eq!(host.status("only").tools, ["mcp__only__get_current_time"]);
    assert_eq!(host.status("off").state, McpServerState::Disabled);
    for expected in [
        "mcp__everything__echo",
        "mcp__everything__get-sum",
        "mcp__everything__get-structured-content",
        "mcp__everything__trigger-long-running-operation",
    ] {
        assert!(
            host.status("everything")
                .tools
                .iter()
                .any(|t| t == expected),
            "{expected}"
        );
    }
    for expected in ["mcp__fs__read_text_file", "mcp__fs__write_file"] {
        assert!(
            host.status("fs").tools.iter().any(|t| t == expected),
            "{expected}"
        );
    }
    // server-everything registers a tool once initialized and announces it with
    // notifications/tools/list_changed: the re-list registers it.
    host.wait_for("everything", |s| {
        s.tools
            .iter()
            .any(|t| t == "mcp__everything__simulate-research-query")
    })
    .await;
    let sdk = CodeMode::sdk(&host.runtime, None);
    assert!(sdk.contains("\n  \"mcp__everything__get-sum\": {"), "{sdk}");
    assert!(sdk.contains("\n  mcp__time__get_current_time: {"), "{sdk}");
    host.mcp.shutdown().await;
    assert_eq!(host.status("time").state, McpServerState::Stopped);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_return_text_structured_values_and_error_results() {
    let root = scratch("fs-calls");
    std::fs::write(root.join("note.txt"), "hello from disk").unwrap();
    let root_text = root.canonicalize().unwrap().to_string_lossy().into_owned();
    let host = Host::start(
        PresentationMode::Native,
        json!({ "time": time(), "everything": everything(), "fs": filesystem(&root_text) }),
    )
    .await;
    let echo = host
        .call("mcp__everything__echo", json!({ "message": "hi" }))
        .await;
    assert_eq!(outcome(&echo), Ok(json!("Echo: hi")));
    assert_eq!(echo.text(), "Echo: hi");
    let sum = host
        .call("mcp__everything__get-sum", json!({ "a": 2, "b": 3.5 }))
        .await;
    assert_eq!(outcome(&sum), Ok(json!("The sum of 2 and 3.5 is 5.5.")));
    let weather = host
        .call(
            "mcp__everything__get-structured-content",
            json!({ "location": "Chicago" }),
        )
        .await;
    assert_eq!(
        outcome(&weather),
        Ok(json!({ "temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82 }))
    );
    let now = host
        .call("mcp__time__get_current_time", json!({ "timezone": "UTC" }))
        .await;
    let value = outcome(&now).unwrap();
    assert_eq!(
        (value["timezone"].clone(), value["is_dst"].clone()),
        (json!("UTC"), json!(false))
    );
    let converted = host
        .call(
            "mcp__time__convert_time",
            json!({ "source_timezone": "UTC", "time": "12:00", "target_timezone": "UTC" }),
        )
        .await;
    assert_eq!(
        outcome(&converted).unwrap()["time_difference"],
        json!("+0.0h")
    );
    let bad_zone = host
        .call(
            "mcp__time__get_current_time",
            json!({ "timezone": "Nope/Zone" }),
        )
        .await;
    assert_eq!(
        outcome(&bad_zone),
        Err("Error executing tool get_current_time: Invalid timezone: 'No time zone found with key Nope/Zone'".into())
    );
    assert_eq!(bad_zone.code(), None);
    let file = host
        .call(
            "mcp__fs__read_text_file",
            json!({ "path": format!("{root_text}/note.txt") }),
        )
        .await;
    assert_eq!(outcome(&file), Ok(json!({ "content": "hello from disk" })));
    let outside = host
        .call(
            "mcp__fs__read_text_file",
            json!({ "path": "/etc/hostname" }),
        )
        .await;
    let message = outcome(&outside).unwrap_err();
    assert!(message.contains("Access denied"), "{message}");
    let image = host
        .call("mcp__everything__get-tiny-image", json!({}))
        .await;
    let kinds: Vec<String> = image
        .content
        .iter()
        .map(|b| {
            serde_json::to_value(b).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(kinds, ["text", "image", "text"]);
    host.mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_get_their_env_and_cwd_and_nothing_else_of_the_host() {
    let root = scratch("fs-cwd").canonicalize().unwrap();
    let mut scoped = everything();
    scoped["env"] = json!({ "DSH_GIVEN": "yes" });
    let mut relative = filesystem(".");
    relative["cwd"] = json!(root.to_str().unwrap());
    let host = Host::start(
        PresentationMode::Native,
        json!({ "everything": scoped, "fs": relative }),
    )
    .await;
    let env = host.call("mcp__everything__get-env", json!({})).await;
    let env: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(env.value().unwrap().as_str().unwrap()).unwrap();
    let mut names: Vec<&str> = env.keys().map(String::as_str).collect();
    names.sort();
    let mut expected: Vec<&str> = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"]
        .into_iter()
        .filter(|name| std::env::var_os(name).is_some())
        .chain(["DSH_GIVEN"])
        .collect();
    expected.sort();
    assert_eq!(names, expected);
    assert_eq!(env["DSH_GIVEN"], "yes");
    let allowed = host
        .call("mcp__fs__list_allowed_directories", json!({}))
        .await;
    assert_eq!(
        outcome(&allowed),
        Ok(json!({ "content": format!("Allowed directories:\n{}", root.display()) }))
    );
    host.mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_and_deadlines_abort_the_call_and_leave_the_server_usable() {
    let mut slow = everything();
    slow["timeoutMs"] = json!(700);
    let host = Host::start(
        PresentationMode::Native,
        json!({ "everything": everything(), "slow": slow }),
    )
    .await;
    let dispatched = host.probe_dispatches();
    let token = CancellationToken::new();
    let call = ToolExecutionInput::new(
        "c1",
        "mcp__everything__trigger-long-running-operation",
        json!({ "duration": 30, "steps": 30 }),
    )
    .with_signal(Signal::new(token.clone()));
    let runtime = host.runtime.clone();
    let running = tokio::spawn(async move { runtime.execute(call).await });
    dispatched.notified().await;
    token.cancel();
    let aborted = tokio::time::timeout(std::time::Duration::from_secs(10), running)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outcome(&aborted), Err("tool call aborted".into()));
    assert_eq!(aborted.code(), Some(HarnessCode::Aborted));
    let timed_out = host
        .call(
            "mcp__slow__trigger-long-running-operation",
            json!({ "duration": 30, "steps": 30 }),
        )
        .await;
    assert_eq!(
        outcome(&timed_out),
        Err("tool \"mcp__slow__trigger-long-running-operation\" timed out after 700 ms".into())
    );
    assert_eq!(timed_out.code(), Some(HarnessCode::ToolTimeout));
    let echo = host
        .call("mcp__everything__echo", json!({ "message": "still here" }))
        .await;
    assert_eq!(outcome(&echo), Ok(json!("Echo: still here")));
    host.mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_server_is_restarted_and_its_tools_work_again() {
    let mut tagged = time();
    tagged["env"] = json!({ "DSH_TEST_TAG": "crash-me" });
    let host = Host::start(PresentationMode::Native, json!({ "time": tagged })).await;
    let registrations_before = host.runtime.registry().visible(None).len();
    let pid = mcp_common::descendant_with_env("DSH_TEST_TAG=crash-me");
    // SAFETY: signalling a child process of this test.
    unsafe {
        libc::kill(pid as i32, libc::SIGKILL);
    }
    host.wait_for("time", |s| {
        s.state == McpServerState::Running
            && s.last_error.as_deref() == Some("the server was killed by signal 9")
    })
    .await;
    assert_ne!(
        mcp_common::descendant_with_env("DSH_TEST_TAG=crash-me"),
        pid
    );
    assert_eq!(
        host.runtime.registry().visible(None).len(),
        registrations_before
    );
    let now = host
        .call("mcp__time__get_current_time", json!({ "timezone": "UTC" }))
        .await;
    assert_eq!(outcome(&now).unwrap()["timezone"], json!("UTC"));
    host.mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_code_mode_program_combines_tools_of_two_servers() {
    let host = Host::start(
        PresentationMode::Code,
        json!({ "time": time(), "everything": everything() }),
    )
    .await;
    let program = r#"
        const now = await tools.mcp__time__get_current_time({ timezone: "UTC" });
        const sum = await tools["mcp__everything__get-sum"]({ a: 40, b: 2 });
        const echoed = await tools["mcp__everything__echo"]({ message: `${now.timezone} ${now.is_dst}` });
        try {
            await tools.mcp__time__get_current_time({ timezone: "Nope/Zone" });
        } catch (e) {
            console.log(e.toolName, e instanceof ToolCallError);
        }
        return { echoed, sum };
    "#;
    let result = host.run(program).await;
    assert_eq!(
        outcome(&result),
        Ok(json!({
            "logs": ["mcp__time__get_current_time true"],
            "result": { "echoed": "Echo: UTC false", "sum": "The sum of 40 and 2 is 42." }
        }))
    );
    let direct = host
        .call("mcp__everything__echo", json!({ "message": "x" }))
        .await;
    assert_eq!(direct.code(), Some(HarnessCode::UnknownTool));
    host.mcp.shutdown().await;
}
