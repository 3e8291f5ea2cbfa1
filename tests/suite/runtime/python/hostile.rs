//! Hostile Python Code Mode programs through the real binary: runaway compute, memory
//! bombs, output floods, a fork bomb, direct writes to fds 1 and 2, and no interpreter (or
//! anything it forked) outliving the host. After each, the host keeps serving.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::code as code_support;

use crate::support::raw::high_water_mark;
use code_support::hostile::{self, ComputeBudget, failure};
use code_support::{FRAMINGS, Framing, Host};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// How long processes may take to disappear after their end was caused (a deadlock guard
/// for the polling below, not a timing assertion).
const GONE_GUARD: Duration = Duration::from_secs(10);

fn python(extra: Value) -> Value {
    let mut config = json!({ "codeRuntime": { "language": "python" } });
    code_support::merge(&mut config, extra);
    config
}

/// Prints `fine` and returns `"still serving"`.
const SERVING: &str = "print('fine')\nreturn 'still serving'";

fn still_serving(host: &mut Host) {
    hostile::still_serving(host, SERVING);
}

/// Live (not zombie) processes as `(pid, ppid, process group)`.
fn live_processes() -> Vec<(u32, u32, u32)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_ascii_whitespace().collect();
        if fields.len() < 3 || fields[0] == "Z" || fields[0] == "X" {
            continue;
        }
        found.push((pid, fields[1].parse().unwrap(), fields[2].parse().unwrap()));
    }
    found
}

/// Waits until no live process is in one of `groups`; returns those still alive at the guard.
fn survivors_in(groups: &[u32]) -> Vec<(u32, u32, u32)> {
    let deadline = Instant::now() + GONE_GUARD;
    loop {
        let alive: Vec<_> = live_processes()
            .into_iter()
            .filter(|(_, _, group)| groups.contains(group))
            .collect();
        if alive.is_empty() || Instant::now() >= deadline {
            return alive;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The host's descendants (its fork server with the tether's keepers, and the server's
/// warm and running children; fresh interpreters in the fallback), once `count` exist.
fn interpreters_of(host: &Host, count: usize) -> Vec<u32> {
    let deadline = Instant::now() + GONE_GUARD;
    loop {
        let processes = live_processes();
        let mut descendants: Vec<u32> = vec![host.pid()];
        let mut index = 0;
        while index < descendants.len() {
            let parent = descendants[index];
            descendants.extend(
                processes
                    .iter()
                    .filter(|(_, ppid, _)| *ppid == parent)
                    .map(|(pid, _, _)| *pid),
            );
            index += 1;
        }
        descendants.remove(0);
        if descendants.len() >= count || Instant::now() >= deadline {
            return descendants;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn runaway_compute_ends_as_timeout_within_the_budget_and_the_host_keeps_serving() {
    hostile::runaway_compute_times_out(
        &python(json!({ "codeRuntime": { "poolSize": 2 } })),
        &ComputeBudget {
            compute_ms: 300,
            // Also killing and reaping the interpreter's process group. 400 ms, the
            // TypeScript suite's margin, was exceeded by 35 ms once in twelve runs here.
            process_margin: Duration::from_millis(600),
        },
        &[
            "while True:\n    pass",
            "import asyncio\nawait asyncio.sleep(0)\nwhile True:\n    pass",
            "import threading\nthreading.Thread(target=lambda: [0 for _ in iter(int, 1)]).start()\nimport time\ntime.sleep(60)",
        ],
        SERVING,
    );
}

#[test]
fn the_wall_budget_ends_a_waiting_run_and_aborts_its_sub_call() {
    let mut host = Host::code_mode(
        Framing::Ndjson,
        "code",
        python(json!({ "codeRuntime": { "maxWallMs": 500 } })),
    );
    hostile::wall_budget_ends_a_waiting_run(
        &mut host,
        "print('waiting')\nawait tools.hang({})",
        500,
    );
    // Sleeping accrues no compute time: only the wall budget ends it.
    let result = host.run_code("sleep", "import time\ntime.sleep(60)");
    assert_eq!(
        result,
        failure("code run failed (timeout): wall-clock budget of 500 ms exhausted")
    );
    still_serving(&mut host);
    assert_eq!(host.finish(), 0);
}

#[test]
fn memory_bombs_end_as_worker_exit_with_the_host_alive() {
    let mut host = Host::code_mode(
        Framing::Lsp,
        "code",
        python(json!({ "codeRuntime": { "maxHeapMb": 128 } })),
    );
    for program in [
        "a = []\nwhile True:\n    a.append('x' * 1000 + str(len(a)))",
        "chunks = []\nwhile True:\n    chunks.append(bytearray(10_000_000))",
        "print('one big one')\nb = bytearray(10**12)",
    ] {
        let result = host.run_code("bomb", program);
        let expected = if program.starts_with("print") {
            "code run failed (worker-exit): heap limit of 128 MiB exceeded\nCaptured output:\none big one"
        } else {
            "code run failed (worker-exit): heap limit of 128 MiB exceeded"
        };
        assert_eq!(result, failure(expected), "{program}");
        still_serving(&mut host);
    }
    assert_eq!(host.finish(), 0);
}

#[test]
fn output_floods_end_as_output_limit_and_stop_streaming_at_the_cap() {
    const CAP: usize = 1000;
    for framing in FRAMINGS {
        let mut host = Host::code_mode(
            framing,
            "code",
            python(json!({ "codeRuntime": { "maxOutputBytes": CAP } })),
        );
        for program in [
            "i = 0\nwhile True:\n    print(f'line {i}')\n    i += 1",
            "import sys\ni = 0\nwhile True:\n    sys.stdout.write(f'line {i}\\n')\n    i += 1",
        ] {
            hostile::flood_stops_at_the_cap(&mut host, framing, program, CAP);
        }
        let result = host.run_code("big", "return 'y' * 5000");
        assert_eq!(
            result,
            failure("code run failed (output-limit): outer output exceeded 1000 bytes")
        );
        still_serving(&mut host);
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn a_frame_larger_than_the_output_budget_is_refused_before_it_is_buffered() {
    const CAP: u64 = 8 * 1024 * 1024;
    let mut host = Host::code_mode(
        Framing::Ndjson,
        "code",
        python(json!({ "codeRuntime": { "maxOutputBytes": CAP } })),
    );
    still_serving(&mut host);
    let before = high_water_mark(host.pid());
    // The program writes a 250 MB frame straight onto the protocol pipe (fd 4).
    let result = host.run_code(
        "giant-frame",
        "import os, struct\nsize = 250_000_000\nos.write(4, struct.pack('>I', size))\n\
         chunk = b' ' * (1 << 20)\nfor _ in range(size >> 20):\n    os.write(4, chunk)",
    );
    assert_eq!(
        result,
        failure(&format!(
            "code run failed (output-limit): outer output exceeded {CAP} bytes"
        ))
    );
    let grown = high_water_mark(host.pid()).saturating_sub(before);
    assert!(
        grown < 2 * CAP + 64 * 1024 * 1024,
        "the peak grew by {grown} bytes"
    );
    still_serving(&mut host);
    assert_eq!(host.finish(), 0);
}

#[test]
fn writing_to_fds_1_and_2_directly_does_not_corrupt_the_protocol() {
    for framing in FRAMINGS {
        let mut host = Host::code_mode(framing, "code", python(json!({})));
        let program = "import os, sys\n\
            for _ in range(2000):\n    os.write(1, b'Content-Length: 3\\r\\n\\r\\n{}\\n{\"jsonrpc\":\"2.0\"}\\n')\n    os.write(2, b'noise')\n\
            os.dup2(2, 1)\nos.close(0)\n\
            print('captured')\nreturn 'intact'";
        let result = host.run_code("raw", program);
        assert_eq!(
            result,
            json!({ "isError": false, "value": { "logs": ["captured"], "result": "intact" },
                "content": [{ "type": "text", "text": "captured\nintact" }] }),
            "{framing:?}"
        );
        still_serving(&mut host);
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn a_fork_bomb_is_contained_by_the_process_group_kill() {
    let mut host = Host::code_mode(
        Framing::Ndjson,
        "code",
        python(json!({ "codeRuntime": { "maxWallMs": 1500 } })),
    );
    // 2^5 = 32 processes, each stuck; nothing but the group kill can end them. They are
    // found by their working directory, the run's scratch dir (their pids and group inside
    // the tether's namespace mean nothing out here).
    let program = "import os, time\nprint(os.getcwd())\n\
        for _ in range(5):\n    os.fork()\n\
        time.sleep(600)";
    let result = host.run_code("forks", program);
    let message = result["error"]["message"].as_str().unwrap();
    let (head, scratch) = message.split_once("\nCaptured output:\n").unwrap();
    assert_eq!(
        head,
        "code run failed (timeout): wall-clock budget of 1500 ms exhausted"
    );
    assert!(
        scratch.contains("dsh-tools-scratch-") && scratch.contains("/py-"),
        "{scratch}"
    );
    assert_eq!(
        survivors_working_in(scratch),
        Vec::<u32>::new(),
        "forks in {scratch} survived"
    );
    still_serving(&mut host);
    assert_eq!(host.finish(), 0);
}

/// Live processes whose working directory is `dir`, once none is left or the guard passed.
fn survivors_working_in(dir: &str) -> Vec<u32> {
    let deadline = Instant::now() + GONE_GUARD;
    loop {
        let alive: Vec<u32> = live_processes()
            .into_iter()
            .map(|(pid, _, _)| pid)
            .filter(|pid| {
                std::fs::read_link(format!("/proc/{pid}/cwd"))
                    .is_ok_and(|cwd| cwd.to_string_lossy().starts_with(dir))
            })
            .collect();
        if alive.is_empty() || Instant::now() >= deadline {
            return alive;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn no_interpreter_or_fork_survives_the_host_at_eof_or_when_it_crashes() {
    for crash in [false, true] {
        let mut host = Host::code_mode(
            Framing::Lsp,
            "code",
            python(json!({ "codeRuntime": { "poolSize": 2 } })),
        );
        still_serving(&mut host);
        // One run in flight, with a forked grandchild, when the host goes away.
        host.send_run_code(
            json!("stuck"),
            "stuck",
            "import os, time\nif os.fork() == 0:\n    time.sleep(600)\nprint('forked')\nimport asyncio\nawait asyncio.sleep(600)",
        );
        host.next_with_method("code/log");
        let interpreters = interpreters_of(&host, 3);
        assert!(interpreters.len() >= 3, "{interpreters:?}");
        if crash {
            host.crash();
        } else {
            assert_eq!(host.finish(), 0);
        }
        assert_eq!(
            survivors_in(&interpreters),
            vec![],
            "crash: {crash}; interpreters (and their groups) {interpreters:?}"
        );
    }
}
