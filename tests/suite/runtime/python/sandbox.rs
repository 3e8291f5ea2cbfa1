//! Python Code Mode interpreters in the OS sandbox, through the real binary: a program
//! writes its scratch dir (its working directory) but nothing outside it, reaches no socket
//! of the host, and runs with `NoNewPrivs`; where namespaces are hidden, seccomp refuses
//! the socket itself.

use crate::support::sandbox::{Listener, Sandboxed};
use serde_json::{Value, json};

/// A program that tries everything and returns what happened, as text per attempt.
fn probe(outside: &std::path::Path, port: u16) -> String {
    format!(
        r#"import os, socket
def attempt(action):
    try:
        action()
        return "ok"
    except OSError as error:
        return type(error).__name__
def scratch():
    with open("here.txt", "w") as f:
        f.write("x")
def escape():
    with open({outside:?}, "w") as f:
        f.write("x")
def connect():
    socket.create_connection(("127.0.0.1", {port}), timeout=5).close()
def inet():
    socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
status = open("/proc/self/status").read()
privs = [line for line in status.splitlines() if line.startswith("NoNewPrivs")][0]
return {{ "scratch": attempt(scratch), "outside": attempt(escape), "connect": attempt(connect),
         "inet": attempt(inet), "noNewPrivs": privs.split()[1] }}"#,
        outside = outside.display().to_string()
    )
}

fn result_of(run: &Value) -> Value {
    assert_eq!(run["isError"], false, "{run}");
    run["value"]["result"].clone()
}

#[test]
fn a_program_writes_only_its_scratch_dir_and_reaches_no_socket() {
    let listener = Listener::open();
    let mut sandboxed = Sandboxed::with(json!({}));
    let escape = sandboxed.outside("python.txt");
    let run = sandboxed.python(&probe(&escape, listener.port()));
    assert_eq!(
        result_of(&run),
        json!({ "scratch": "ok", "outside": "OSError", "connect": "OSError",
                "inet": "ok", "noNewPrivs": "1" })
    );
    assert!(!escape.exists());
    assert!(!listener.was_reached());
    let python = &sandboxed.report()["python"];
    assert_eq!(python["writableRoots"], json!([]));
    assert_eq!(python["networkIsolation"], "namespace");
}

#[test]
fn without_namespaces_seccomp_refuses_the_socket_itself() {
    let listener = Listener::open();
    let mut sandboxed = Sandboxed::start(
        json!({}),
        &[("DSH_TOOLS_SANDBOX_SIMULATE", "no-userns")],
        false,
    );
    assert_eq!(sandboxed.report()["python"]["networkIsolation"], "seccomp");
    let escape = sandboxed.outside("python.txt");
    let run = sandboxed.python(&probe(&escape, listener.port()));
    assert_eq!(
        result_of(&run),
        json!({ "scratch": "ok", "outside": "PermissionError", "connect": "PermissionError",
                "inet": "PermissionError", "noNewPrivs": "1" })
    );
    assert!(!listener.was_reached());
    // bash gets the same filter.
    let bash = sandboxed.bash(&format!("exec 3<>/dev/tcp/127.0.0.1/{}", listener.port()));
    assert_ne!(bash["value"]["exitCode"], 0, "{bash}");
    assert!(!listener.was_reached());
}
