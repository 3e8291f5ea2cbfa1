//! A stdio server that breaks its transport, through the real binary (no `timeoutMs`
//! anywhere): an answer over the 16 MiB limit of one message fails its call at once naming
//! the size while the server keeps serving (a 15 MB one is delivered and spilled; one whose
//! id cannot be read resets the connection and the server is restarted); a server
//! that closes its stdout but keeps running (ignoring SIGTERM) is killed, restarted with
//! backoff, and `mcp/status` tells why.

#![allow(clippy::unwrap_used, clippy::print_stderr)]

use crate::support::mcp::{
    Binary, PATIENCE, Watchdog, all_running, descendants, hostile, processes,
};
use dsh_tools_protocol::{McpServerState, McpServerStatus};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// `tools/execute` of `mcp__h__<tool>`: the value of a success or the message of a failure.
fn call(host: &mut Binary, tool: &str, arguments: Value) -> Result<Value, String> {
    let answer = host.request(
        "tools/execute",
        json!({ "callId": "c", "name": format!("mcp__h__{tool}"), "arguments": arguments }),
    );
    let result = &answer["result"];
    match result["isError"].as_bool() {
        Some(false) => Ok(result.clone()),
        _ => Err(result["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned()),
    }
}

fn status(all: &[McpServerStatus]) -> &McpServerStatus {
    all.iter().find(|s| s.server == "h").unwrap()
}

/// The pid of the host's server process (the host runs it in a pid namespace of its own,
/// so the server cannot tell it).
fn pid(host: &mut Binary) -> u32 {
    let servers: Vec<(u32, String)> = descendants(host.pid())
        .into_iter()
        .filter(|(_, command)| command.contains("hostile_server.py"))
        .collect();
    assert_eq!(servers.len(), 1, "{servers:?}");
    servers[0].0
}

#[test]
fn an_answer_over_the_line_limit_fails_its_call_at_once_naming_the_size() {
    let mut host = Binary::serve(json!({ "mcpServers": { "h": hostile(&[]) } }));
    host.wait_for_status(all_running);
    let before = pid(&mut host);
    // Without the fix the call is pending forever: the watchdog then kills the host.
    let watchdog = Watchdog::arm(host.pid(), PATIENCE);
    for id_first in [false, true] {
        let started = Instant::now();
        let failed = call(
            &mut host,
            "huge",
            json!({ "bytes": 17 * 1024 * 1024, "idFirst": id_first }),
        );
        let took = started.elapsed();
        let message = failed.unwrap_err();
        assert!(
            message.starts_with(
                "MCP server \"h\" answered the call to \"huge\" but the answer was 1782"
            ) && message.contains(
                " bytes (17.0 MiB), over the 16 MiB limit of one MCP message, and was dropped"
            ),
            "{message}"
        );
        eprintln!("17 MiB answer (id first: {id_first}) failed in {took:?}");
        assert!(took < Duration::from_secs(5), "took {took:?}");
    }
    drop(watchdog);
    let all = host.wait_for_status(|all| status(all).last_error.is_some());
    let last_error = status(&all).last_error.clone().unwrap();
    assert!(
        last_error.starts_with("the server answered request ")
            && last_error.contains(
                " bytes (17.0 MiB), over the 16 MiB limit of one MCP message; it was dropped"
            ),
        "{last_error}"
    );
    assert_eq!(status(&all).state, McpServerState::Running);
    // The same process keeps serving: a notification over the limit is dropped alone, and
    // an answer under it (15 MB) is delivered whole and spilled.
    let after = call(
        &mut host,
        "huge_notification",
        json!({ "bytes": 17 * 1024 * 1024 }),
    );
    assert_eq!(after.map(|r| r["value"].clone()), Ok(json!("after")));
    let delivered = call(&mut host, "huge", json!({ "bytes": 15_000_000 })).unwrap();
    assert_eq!(
        delivered["meta"]["spill"]["bytes"], 15_000_000,
        "{:?}",
        delivered["meta"]
    );
    assert_eq!(pid(&mut host), before);
    let all = host.wait_for_status(|_| true);
    let last_error = status(&all).last_error.clone().unwrap();
    assert!(
        last_error.starts_with("the server sent a request or notification of "),
        "{last_error}"
    );
    // An over-long answer whose id cannot be read matches no call: the connection is reset
    // and the server restarted.
    let failed = call(
        &mut host,
        "huge",
        json!({ "bytes": 17 * 1024 * 1024, "noId": true }),
    );
    assert_eq!(
        failed,
        Err("MCP server \"h\" closed the connection during the call to \"huge\"".into())
    );
    let all = host.wait_for_status(|all| {
        let status = status(all);
        status.state == McpServerState::Running
            && status
                .last_error
                .as_deref()
                .is_some_and(|e| e.contains("without a readable id"))
    });
    let last_error = status(&all).last_error.clone().unwrap();
    assert!(
        last_error.starts_with("the server sent a message of ")
            && last_error.ends_with(" without a readable id, over the 16 MiB limit of one MCP message; the connection was reset; the server was stopped"),
        "{last_error}"
    );
    assert_ne!(pid(&mut host), before);
    assert_eq!(
        call(&mut host, "echo", json!({ "message": "again" })).map(|r| r["value"].clone()),
        Ok(json!("again"))
    );
}

#[test]
fn a_server_that_closes_stdout_but_keeps_running_is_killed_and_restarted() {
    let mut host = Binary::serve(json!({ "mcpServers": { "h": hostile(&["--stubborn"]) } }));
    host.wait_for_status(all_running);
    let first = pid(&mut host);
    let failed = call(&mut host, "close_stdout", json!({}));
    assert_eq!(
        failed,
        Err("MCP server \"h\" closed the connection during the call to \"close_stdout\"".into())
    );
    let all = host.wait_for_status(|all| {
        let status = status(all);
        status.state == McpServerState::Running && status.last_error.is_some()
    });
    assert_eq!(
        status(&all).last_error.as_deref(),
        Some(
            format!(
                "the server closed its stdout but kept running (pid {first}); it was stopped (stderr: hostile: closed stdout)"
            )
            .as_str()
        )
    );
    assert!(
        !processes().contains_key(&first),
        "the old server is still there (or unreaped)"
    );
    let second = pid(&mut host);
    assert_ne!(second, first);
    assert_eq!(
        call(&mut host, "echo", json!({ "message": "back" })).map(|r| r["value"].clone()),
        Ok(json!("back"))
    );
}
