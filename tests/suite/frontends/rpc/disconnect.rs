//! A client that closes only its read end (the host's stdout) has disconnected: the first
//! write that fails ends the host as EOF would, killing what it started.

use crate::support::mcp::descendants;
use crate::support::raw::RawHost;
use serde_json::json;
use std::time::{Duration, Instant};

#[test]
fn a_closed_stdout_ends_the_host_and_its_bash_command() {
    let cwd = std::env::temp_dir();
    let mut host =
        RawHost::initialized(json!({ "builtins": { "bash": { "cwd": cwd.to_string_lossy() } } }));
    host.send(&json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/execute",
        "params": { "callId": "sleeper", "name": "bash", "arguments": { "command": "sleep 300" } } }));
    // Wait (bounded) for the command to be running, then close the read end only.
    let deadline = Instant::now() + Duration::from_secs(30);
    let sleeper = loop {
        if let Some(found) = descendants(host.pid())
            .into_iter()
            .find(|(_, c)| c.contains("sleep 300"))
        {
            break found;
        }
        assert!(Instant::now() < deadline, "bash never started");
        std::thread::sleep(Duration::from_millis(10));
    };
    let RawHost {
        mut child,
        mut stdin,
        stdout,
    } = host;
    drop(stdout);
    // The answer to this request is the write that fails.
    let closed = Instant::now();
    std::io::Write::write_all(
        &mut stdin,
        b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\",\"params\":{}}\n",
    )
    .unwrap();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if closed.elapsed() > Duration::from_secs(30) {
            child.kill().unwrap();
            panic!("the host kept running after its stdout was closed");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    // At the first failed write, not at some later event; a busy machine may slow the exit.
    assert!(
        closed.elapsed() < Duration::from_secs(7),
        "exit took {:?}",
        closed.elapsed()
    );
    assert_eq!(status.code(), Some(0));
    let alive = std::fs::read_to_string(format!("/proc/{}/stat", sleeper.0))
        .is_ok_and(|stat| !stat.contains(") Z "));
    assert!(!alive, "{sleeper:?} outlived the host");
}
