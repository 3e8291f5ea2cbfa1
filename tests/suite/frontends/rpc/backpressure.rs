//! A client that stops reading while programs flood their logs: the host drops (and counts)
//! observe-only notifications instead of queueing them without bound, its memory stays
//! flat, and every response arrives once the client reads again.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 6;
const CAP: u64 = 1 << 20;

fn line(message: &Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(message).unwrap();
    bytes.push(b'\n');
    bytes
}

/// The host's peak resident memory (VmHWM), in bytes.
fn high_water_mark(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<u64>()
        .unwrap()
        * 1024
}

/// Busy time (utime + stime, in ticks) of `pid`.
fn busy_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat
        .rsplit_once(") ")
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

#[test]
fn a_paused_reader_keeps_the_host_small_and_loses_no_response() {
    let mut host = Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
        .args(["serve", "--framing", "ndjson"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = host.id();
    let mut stdin = host.stdin.take().unwrap();
    let mut stdout = BufReader::new(host.stdout.take().unwrap());
    stdin
        .write_all(&line(&json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": { "protocolVersion": "1", "capabilities": {},
                "config": { "tools": { "mode": "code" }, "codeRuntime": { "maxOutputBytes": CAP } } } })))
        .unwrap();
    let mut text = String::new();
    while !text.contains("\"id\":0") {
        text.clear();
        assert!(stdout.read_line(&mut text).unwrap() > 0);
    }
    let before = high_water_mark(pid);
    // Tiny lines: each costs 4 bytes of the output budget but ~90 bytes as a notification.
    for n in 0..RUNS {
        stdin
            .write_all(&line(&json!({ "jsonrpc": "2.0", "id": n + 1, "method": "tools/execute",
                "params": { "callId": format!("flood-{n}"), "name": "run_code",
                    "arguments": { "code": "for (;;) console.log(1);", "description": "flood" } } })))
            .unwrap();
    }
    // The reader stays paused until the host has done the work (its CPU goes quiet).
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut last = busy_ticks(pid);
    loop {
        std::thread::sleep(Duration::from_millis(500));
        let now = busy_ticks(pid);
        if now - last <= 2 || Instant::now() > deadline {
            break;
        }
        last = now;
    }
    let grown = high_water_mark(pid).saturating_sub(before);
    assert!(
        grown < 256 << 20,
        "the host grew by {} MiB while the reader was paused",
        grown >> 20
    );
    // Reading again: every run is answered (as output-limit), and the drops were reported.
    let mut answered = 0;
    let mut dropped = 0;
    while answered < RUNS {
        text.clear();
        assert!(
            stdout.read_line(&mut text).unwrap() > 0,
            "EOF before every answer"
        );
        let message: Value = serde_json::from_str(&text).unwrap();
        if message["method"] == "$/notificationsDropped" {
            dropped += message["params"]["dropped"]["code/log"]
                .as_u64()
                .unwrap_or(0);
        } else if message.get("method").is_none() {
            let failure = message["result"]["error"]["message"]
                .as_str()
                .unwrap_or_default();
            assert!(
                failure.starts_with("code run failed (output-limit)"),
                "{text:.300}"
            );
            answered += 1;
        }
    }
    drop(stdin);
    // The last report may follow the last answer.
    for rest in stdout.lines() {
        let message: Value = serde_json::from_str(&rest.unwrap()).unwrap();
        if message["method"] == "$/notificationsDropped" {
            dropped += message["params"]["dropped"]["code/log"]
                .as_u64()
                .unwrap_or(0);
        }
    }
    assert!(dropped > 0, "no drop was reported");
    assert!(host.wait().unwrap().success());
}
