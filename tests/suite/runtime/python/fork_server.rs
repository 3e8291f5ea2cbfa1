//! Python runs forked from the fork server, through the real binary: nothing a run leaves
//! behind (a module it imported or mutated, a global, an environment variable, an open file,
//! a thread, a child process, a file in its scratch dir) reaches the next run; a forked run
//! is confined like a fresh interpreter and more (it cannot write its server's or a sibling's
//! dir, nor signal its server, nor see the host in `/proc`); a program that kills its own
//! server fails that run only; and where forking cannot be used, runs start fresh
//! interpreters and `capabilities` says so.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::code as code_support;
use crate::support::sandbox::Sandboxed;

use code_support::hostile::{self, failure};
use code_support::{Framing, Host};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn python(extra: Value) -> Value {
    let mut config = json!({ "codeRuntime": { "language": "python" } });
    code_support::merge(&mut config, extra);
    config
}

/// The value of a run that must succeed.
fn value_of(run: &Value) -> Value {
    assert_eq!(run["isError"], false, "{run}");
    run["value"]["result"].clone()
}

/// Leaves every kind of trace behind, each tagged with `marker`.
fn leave_traces(marker: &str) -> String {
    format!(
        r#"import builtins, math, os, subprocess, sys, threading, time, wave
math.tau = "poisoned"
builtins.leaked_global = "{marker}"
os.environ["LEAKED_VARIABLE"] = "{marker}"
kept = open("{marker}.txt", "w")
builtins.kept_file = kept
threading.Thread(target=time.sleep, args=(600,), daemon=True, name="{marker}-thread").start()
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "{marker}"])
return {{ "threads": threading.active_count(), "child": child.pid > 0 }}"#
    )
}

/// Looks for each trace `marker` could have left, from inside the next run.
fn look_for_traces(marker: &str) -> String {
    format!(
        r#"import builtins, math, os, sys, threading
def dying(pid):
    # SIGKILLed by the end of the last run but not torn down yet (a loaded machine): it
    # can run no more code of its own.
    with open(f"/proc/{{pid}}/status") as f:
        fields = dict(line.split(":", 1) for line in f.read().splitlines() if ":" in line)
    pending = int(fields["SigPnd"], 16) | int(fields["ShdPnd"], 16)
    return fields["State"].split()[0] in "ZX" or pending & (1 << 8) != 0
def processes_with_marker():
    found = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{{pid}}/cmdline", "rb") as f:
                if b"{marker}" in f.read() and not dying(pid):
                    found.append(pid)
        except (OSError, KeyError):
            pass
    return found
def open_files():
    paths = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            paths.append(os.readlink(f"/proc/self/fd/{{fd}}"))
        except OSError:
            pass  # the listing's own descriptor, closed by now
    return paths
return {{
    "module": "wave" in sys.modules,
    "mutation": math.tau,
    "global": hasattr(builtins, "leaked_global"),
    "environment": "LEAKED_VARIABLE" in os.environ,
    "openFile": any("{marker}" in path for path in open_files()),
    "fileInScratch": os.path.exists("{marker}.txt"),
    "threads": [t.name for t in threading.enumerate() if "{marker}" in t.name],
    "children": processes_with_marker(),
}}"#
    )
}

#[test]
fn nothing_a_run_leaves_behind_reaches_the_next_run() {
    for pool_size in [1, 2] {
        let mut host = Host::code_mode(
            Framing::Ndjson,
            "code",
            python(json!({ "codeRuntime": { "poolSize": pool_size } })),
        );
        let marker = format!("leak-marker-{pool_size}");
        let left = host.run_code("leave", &leave_traces(&marker));
        // The main thread, the bootstrap's reader of the host's answers, and the program's.
        assert_eq!(value_of(&left), json!({ "threads": 3, "child": true }));
        let found = host.run_code("look", &look_for_traces(&marker));
        assert_eq!(
            value_of(&found),
            json!({ "module": false, "mutation": std::f64::consts::TAU, "global": false,
                    "environment": false, "openFile": false, "fileInScratch": false,
                    "threads": [], "children": [] }),
            "pool size {pool_size}"
        );
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn random_state_and_working_directory_are_each_runs_own() {
    let mut host = Host::code_mode(Framing::Ndjson, "code", python(json!({})));
    let program = "import os, random\nreturn [os.getcwd(), random.getrandbits(52), os.getpid()]";
    let runs: Vec<Value> = (0..4)
        .map(|i| value_of(&host.run_code(&format!("r{i}"), program)))
        .collect();
    for (i, a) in runs.iter().enumerate() {
        for b in &runs[i + 1..] {
            for field in 0..3 {
                assert_ne!(a[field], b[field], "{runs:?}");
            }
        }
    }
    assert_eq!(host.finish(), 0);
}

/// Waits until `host`'s descendants include a process whose command line ends in `serve`
/// (the fork server) other than `not`; returns its pid.
fn fork_server_of(host: &Host, not: Option<u32>) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let mut family = vec![host.pid()];
        let mut index = 0;
        let mut server = None;
        while index < family.len() {
            let parent = family[index];
            for entry in std::fs::read_dir("/proc").unwrap().flatten() {
                let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                    continue;
                };
                let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                    continue;
                };
                let ppid = stat
                    .rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_ascii_whitespace().nth(1))
                    .and_then(|ppid| ppid.parse::<u32>().ok());
                if ppid != Some(parent) {
                    continue;
                }
                family.push(pid);
                let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
                if cmdline.ends_with(b"\0serve\0") && Some(pid) != not {
                    server = Some(pid);
                }
            }
            index += 1;
        }
        if let Some(server) = server {
            return server;
        }
        assert!(Instant::now() < deadline, "no fork server under the host");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_program_that_kills_its_server_fails_alone_and_the_next_run_is_served() {
    // Unsandboxed, so the signal reaches the server (a sandboxed run may not send it: see
    // the next test).
    for pool_size in [1, 3] {
        let mut host = Host::code_mode(
            Framing::Ndjson,
            "code",
            python(
                json!({ "sandbox": { "mode": "off" }, "codeRuntime": { "poolSize": pool_size } }),
            ),
        );
        hostile::still_serving(&mut host, "print('fine')\nreturn 'still serving'");
        let first = fork_server_of(&host, None);
        let result = host.run_code(
            "parricide",
            "import os, signal, time\nos.kill(os.getppid(), signal.SIGKILL)\ntime.sleep(600)",
        );
        assert_eq!(result["isError"], true, "{result}");
        let message = result["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("code run failed (worker-exit): "),
            "{message}"
        );
        for _ in 0..3 {
            hostile::still_serving(&mut host, "print('fine')\nreturn 'still serving'");
        }
        let second = fork_server_of(&host, Some(first));
        assert_ne!(first, second);
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn where_forking_is_unusable_runs_start_fresh_interpreters_and_the_report_says_so() {
    let mut forked = Host::spawn(Framing::Ndjson);
    let report = forked.initialize(
        json!({ "executeTools": true }),
        python(json!({ "tools": { "mode": "code" } })),
    );
    assert_eq!(
        report["capabilities"]["sandbox"]["pythonRunner"],
        json!({ "kind": "fork-server" })
    );
    assert_eq!(forked.finish(), 0);

    let mut fresh = Host::code_mode_with_env(
        "code",
        python(json!({})),
        &[("DSH_TOOLS_SANDBOX_SIMULATE", "no-fork-server")],
    );
    let program = "import sys\nreturn sys.argv";
    // A fresh interpreter is the server's sibling nowhere: its argv has no `serve`.
    assert_eq!(value_of(&fresh.run_code("fresh", program)), json!(["-c"]));
    hostile::still_serving(&mut fresh, "print('fine')\nreturn 'still serving'");
    assert_eq!(fresh.finish(), 0);

    let config = tempfile::Builder::new().suffix(".json").tempfile().unwrap();
    std::fs::write(
        config.path(),
        r#"{ "codeRuntime": { "language": "python" } }"#,
    )
    .unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
        .arg("--config")
        .arg(config.path())
        .args(["sandbox", "check", "--json"])
        .env("DSH_TOOLS_SANDBOX_SIMULATE", "no-fork-server")
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stderr)));
    assert_eq!(
        report["pythonRunner"],
        json!({ "kind": "fresh-interpreter",
                "fallbackReason": "DSH_TOOLS_SANDBOX_SIMULATE=no-fork-server" }),
        "{report}"
    );
}

/// What a sandboxed forked run may do beyond its own dir, as text per attempt.
const CONFINED: &str = r#"import os, signal
def attempt(action):
    try:
        action()
        return "ok"
    except OSError as error:
        return type(error).__name__
def write(path):
    with open(path, "w") as f:
        f.write("x")
here = os.getcwd()
server_dir = os.path.dirname(here)
siblings = [d for d in os.listdir(server_dir) if os.path.join(server_dir, d) != here]
return {
    "own": attempt(lambda: write("mine.txt")),
    "server": attempt(lambda: write(os.path.join(server_dir, "server.txt"))),
    "sibling": attempt(lambda: write(os.path.join(server_dir, siblings[0], "theirs.txt"))),
    "signalServer": attempt(lambda: os.kill(os.getppid(), signal.SIGKILL)),
    "hostInProc": os.path.exists(f"/proc/HOST_PID"),
}"#;

#[test]
fn a_sandboxed_forked_run_writes_only_its_own_dir_and_cannot_signal_its_server() {
    // Two children waiting beside the running one: a sibling's dir to try.
    let mut sandboxed = Sandboxed::start(
        json!({ "sandbox": {}, "codeRuntime": { "poolSize": 2 } }),
        &[],
        false,
    );
    let host_pid = sandboxed.host.pid().to_string();
    let run = sandboxed.python(&CONFINED.replace("HOST_PID", &host_pid));
    assert_eq!(
        run["value"]["result"],
        json!({ "own": "ok", "server": "PermissionError", "sibling": "PermissionError",
                "signalServer": "PermissionError", "hostInProc": false }),
        "{run}"
    );
    // The server still serves.
    let again = sandboxed.python("return 'served'");
    assert_eq!(again["value"]["result"], "served", "{again}");
}

#[test]
fn a_failing_run_leaves_the_server_serving() {
    let mut host = Host::code_mode(Framing::Ndjson, "code", python(json!({})));
    let result = host.run_code("raise", "raise ValueError('no')");
    assert_eq!(
        result,
        failure("code run failed (exception): ValueError: no at program.py:1")
    );
    hostile::still_serving(&mut host, "print('fine')\nreturn 'still serving'");
    assert_eq!(host.finish(), 0);
}

/// Makes one object of each IPC family that outlives its maker (a SysV shared memory
/// segment, message queue and semaphore set, a POSIX message queue), or looks for them.
const IPC_OBJECTS: &str = r#"import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
flags = 0o1600 if MAKE else 0  # IPC_CREAT | 0600
def outcome(result):
    return "present" if result >= 0 else os.strerror(ctypes.get_errno())
libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p]
return {
    "sharedMemory": outcome(libc.shmget(0x5D5101, 4096, flags)),
    "messageQueue": outcome(libc.msgget(0x5D5102, flags)),
    "semaphores": outcome(libc.semget(0x5D5103, 1, flags)),
    "posixQueue": outcome(libc.mq_open(b"/dsh-leak", (os.O_CREAT | os.O_RDWR) if MAKE else os.O_RDWR, 0o600, None)),
}"#;

/// The children of one fork server share its IPC namespace, and an IPC object outlives the
/// run that made it: the filter refuses them (a run that made one left it to the next).
#[test]
fn ipc_objects_a_sandboxed_run_leaves_are_not_there_for_the_next() {
    let mut sandboxed = Sandboxed::start(json!({ "sandbox": {} }), &[], false);
    let made = sandboxed.python(&IPC_OBJECTS.replace("MAKE", "True"));
    let found = sandboxed.python(&IPC_OBJECTS.replace("MAKE", "False"));
    for family in ["sharedMemory", "messageQueue", "semaphores", "posixQueue"] {
        let left = &made["value"]["result"][family];
        let seen = &found["value"]["result"][family];
        assert_ne!(
            seen, "present",
            "{family}: made {left}, then found by the next run"
        );
    }
}
