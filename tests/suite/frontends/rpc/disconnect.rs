//! A client that closes only its read end (the host's stdout) has disconnected: the first
//! write that fails ends the host as EOF would, killing what it started.

use crate::support::mcp::descendants;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn line(message: serde_json::Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(&message).unwrap();
    bytes.push(b'\n');
    bytes
}

#[test]
fn a_closed_stdout_ends_the_host_and_its_bash_command() {
    let cwd = std::env::temp_dir();
    let mut host = Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
        .args(["serve", "--framing", "ndjson"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = host.stdin.take().unwrap();
    let mut stdout = BufReader::new(host.stdout.take().unwrap());
    stdin
        .write_all(&line(
            serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": { "protocolVersion": "1", "capabilities": {},
                "config": { "builtins": { "bash": { "cwd": cwd.to_string_lossy() } } } } }),
        ))
        .unwrap();
    let mut answer = String::new();
    while !answer.contains("\"id\":1") {
        answer.clear();
        assert!(
            stdout.read_line(&mut answer).unwrap() > 0,
            "the host closed its stdout"
        );
    }
    assert!(answer.contains("\"result\""), "{answer}");
    stdin
        .write_all(&line(
            serde_json::json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/execute",
            "params": { "callId": "sleeper", "name": "bash",
                "arguments": { "command": "sleep 300" } } }),
        ))
        .unwrap();
    // Wait (bounded) for the command to be running, then close the read end only.
    let deadline = Instant::now() + Duration::from_secs(30);
    let sleeper = loop {
        if let Some(found) = descendants(host.id())
            .into_iter()
            .find(|(_, c)| c.contains("sleep 300"))
        {
            break found;
        }
        assert!(Instant::now() < deadline, "bash never started");
        std::thread::sleep(Duration::from_millis(10));
    };
    drop(stdout);
    // The answer to this request is the write that fails.
    let closed = Instant::now();
    stdin
        .write_all(&line(
            serde_json::json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {} }),
        ))
        .unwrap();
    let status = loop {
        if let Some(status) = host.try_wait().unwrap() {
            break status;
        }
        if closed.elapsed() > Duration::from_secs(10) {
            host.kill().unwrap();
            panic!("the host kept running after its stdout was closed");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(
        closed.elapsed() < Duration::from_secs(2),
        "exit took {:?}",
        closed.elapsed()
    );
    assert_eq!(status.code(), Some(0));
    let alive = std::fs::read_to_string(format!("/proc/{}/stat", sleeper.0))
        .is_ok_and(|stat| !stat.contains(") Z "));
    assert!(!alive, "{sleeper:?} outlived the host");
}
