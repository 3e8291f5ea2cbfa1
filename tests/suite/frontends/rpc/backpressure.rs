//! A client that stops reading while programs flood their logs: the host drops (and counts)
//! observe-only notifications instead of queueing them without bound, its memory stays
//! flat, and every response arrives once the client reads again.

use crate::support::raw::{RawHost, high_water_mark, wait_until_quiet, wait_until_tree_quiet};
use serde_json::{Value, json};
use std::io::BufRead;
use std::time::Duration;

const RUNS: usize = 6;
const CAP: u64 = 1 << 20;

#[test]
fn a_paused_reader_keeps_the_host_small_and_loses_no_response() {
    let mut host = RawHost::initialized(
        json!({ "tools": { "mode": "code" }, "codeRuntime": { "maxOutputBytes": CAP } }),
    );
    let pid = host.pid();
    let before = high_water_mark(pid);
    // Tiny lines: each costs 4 bytes of the output budget but ~90 bytes as a notification.
    for n in 0..RUNS {
        host.send(
            &json!({ "jsonrpc": "2.0", "id": n + 1, "method": "tools/execute",
            "params": { "callId": format!("flood-{n}"), "name": "run_code",
                "arguments": { "code": "for (;;) console.log(1);", "description": "flood" } } }),
        );
    }
    // The reader stays paused until the host has done the work (its CPU goes quiet).
    wait_until_quiet(pid, Duration::from_secs(120));
    let grown = high_water_mark(pid).saturating_sub(before);
    assert!(
        grown < 256 << 20,
        "the host grew by {} MiB while the reader was paused",
        grown >> 20
    );
    // Reading again: every run is answered (as output-limit), and the drops were reported.
    let dropped_in = |message: &Value| {
        if message["method"] == "$/notificationsDropped" {
            message["params"]["dropped"]["code/log"]
                .as_u64()
                .unwrap_or(0)
        } else {
            0
        }
    };
    let (mut answered, mut dropped) = (0, 0);
    while answered < RUNS {
        let message = host.next().expect("EOF before every answer");
        dropped += dropped_in(&message);
        if message.get("method").is_none() {
            let failure = message["result"]["error"]["message"]
                .as_str()
                .unwrap_or_default();
            assert!(
                failure.starts_with("code run failed (output-limit)"),
                "{message:.300}"
            );
            answered += 1;
        }
    }
    let RawHost {
        mut child,
        stdin,
        mut stdout,
    } = host;
    drop(stdin);
    // The last report may follow the last answer.
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    for line in rest.lines() {
        dropped += dropped_in(&serde_json::from_str(line).unwrap());
    }
    assert!(dropped > 0, "no drop was reported");
    assert!(child.wait().unwrap().success());
}

/// Issue 20's case: 40 programs printing 16 lines of 1 MiB each (640 MiB of answers, 40 live
/// isolates) against a client that stops reading, the whole host under 512 MiB.
#[test]
fn a_paused_reader_stops_new_output_so_unsent_answers_are_never_all_held() {
    let lines = 16;
    let code =
        format!("for (let i = 0; i < {lines}; i++) console.log(String(i).padEnd(1 << 20, 'x'));");
    paused_reader_holds_less_than_every_answer("typescript", &code, 40, lines);
}

/// Python programs' output is left unread in their pipes while earlier runs hold too much
/// (fewer runs, more output each: 40 interpreters would be 40 processes to boot).
#[test]
fn a_paused_reader_stops_new_python_output_so_unsent_answers_are_never_all_held() {
    let lines = 48;
    let code = format!("for i in range({lines}):\n    print(str(i).ljust(1 << 20, 'x'))");
    paused_reader_holds_less_than_every_answer("python", &code, 12, lines);
}

/// `runs` programs printing `lines` MiB each, the reader paused: the host stays under
/// 512 MiB and every answer arrives whole once it reads.
fn paused_reader_holds_less_than_every_answer(
    language: &str,
    code: &str,
    runs: usize,
    lines: usize,
) {
    let cap = (lines as u64 + 1) << 20;
    let mut host = RawHost::initialized(json!({ "tools": { "mode": "code" },
        "codeRuntime": { "maxOutputBytes": cap, "language": language } }));
    let pid = host.pid();
    for n in 0..runs {
        host.send(
            &json!({ "jsonrpc": "2.0", "id": n + 1, "method": "tools/execute",
            "params": { "callId": format!("big-{n}"), "name": "run_code",
                "arguments": { "code": code, "description": "print a lot" } } }),
        );
    }
    // The client reads nothing until the host and its interpreters have done what they
    // will do without it.
    wait_until_tree_quiet(pid, Duration::from_secs(180));
    // Every answer held at once would be 576–640 MiB of logs on top of the host itself.
    let peak = high_water_mark(pid);
    assert!(
        peak < 512 << 20,
        "the host reached {} MiB while the reader was paused",
        peak >> 20
    );
    // Reading again: every run is answered, whole (checked on the raw lines: parsing
    // 800 MiB of JSON would be most of the test's time).
    let mut answered = std::collections::BTreeSet::new();
    let response = "{\"jsonrpc\":\"2.0\",\"id\":";
    while answered.len() < runs {
        let mut line = String::new();
        assert!(
            host.stdout.read_line(&mut line).unwrap() > 0,
            "EOF before every answer"
        );
        let Some(rest) = line.strip_prefix(response) else {
            continue;
        };
        let (id, result) = rest.split_once(',').unwrap();
        assert!(
            result.starts_with("\"result\":{\"isError\":false")
                && result.contains("\"logs\":[")
                && line.len() > lines << 20,
            "{:.300}",
            line
        );
        answered.insert(id.parse::<usize>().unwrap());
    }
    assert_eq!(answered, (1..=runs).collect());
    let RawHost {
        mut child,
        stdin,
        mut stdout,
    } = host;
    drop(stdin);
    std::io::Read::read_to_end(&mut stdout, &mut Vec::new()).unwrap();
    assert!(child.wait().unwrap().success());
}
