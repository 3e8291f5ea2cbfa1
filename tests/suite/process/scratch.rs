//! What a host's children may write (a `bash` command's `$TMPDIR`, a Python interpreter's
//! working directory) goes in scratch dirs under one root per host in the host's `$TMPDIR`,
//! and none of it stays: a host that exits while a command runs removes its root, and the
//! root of a SIGKILLed host is swept by the next host that makes a scratch dir.

#![allow(clippy::unwrap_used)]

use crate::support::mcp::{Binary, descendants};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

/// Names in `dir`, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A host whose `$TMPDIR` is `tmp`, with `bash` and Python Code Mode on, a Python run done
/// (so that a warm interpreter waits in its scratch dir) and `sleep 300` running in `bash`.
fn host_with_a_command_running(tmp: &Path, workspace: &Path) -> Binary {
    let mut host = Binary::serve_with_env(
        json!({
            "builtins": { "bash": { "cwd": workspace.display().to_string() } },
            "codeRuntime": { "languages": ["python"], "poolSize": 1 }
        }),
        &[("TMPDIR", tmp.to_str().unwrap())],
    );
    host.warm_a_python_interpreter();
    host.send(
        &json!({ "jsonrpc": "2.0", "id": "long", "method": "tools/execute",
        "params": { "callId": "c", "name": "bash", "arguments": { "command": "sleep 300" } } }),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while !descendants(host.pid())
        .iter()
        .any(|(_, command)| command.contains("sleep 300"))
    {
        assert!(Instant::now() < deadline, "the command did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
    host
}

/// The scratch dirs under the one root in `tmp` (which must be the only entry).
fn scratch_dirs(tmp: &Path) -> Vec<String> {
    let roots = entries(tmp);
    assert_eq!(roots.len(), 1, "{roots:?}");
    assert!(roots[0].starts_with("dsh-tools-scratch-"), "{roots:?}");
    entries(&tmp.join(&roots[0]))
}

#[test]
fn a_host_that_exits_while_a_command_runs_leaves_nothing_in_its_tmpdir() {
    let (tmp, workspace) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut host = host_with_a_command_running(tmp.path(), workspace.path());
    let inside = scratch_dirs(tmp.path());
    assert!(
        inside.iter().any(|n| n.starts_with("bash-"))
            && inside.iter().any(|n| n.starts_with("py-")),
        "{inside:?}"
    );
    host.close_stdin();
    host.wait();
    assert_eq!(entries(tmp.path()), Vec::<String>::new());
}

#[test]
fn the_scratch_root_of_a_sigkilled_host_is_swept_by_the_next_host() {
    let (tmp, workspace) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut killed = host_with_a_command_running(tmp.path(), workspace.path());
    let left = entries(tmp.path());
    killed.child.kill().unwrap();
    killed.child.wait().unwrap();
    assert_eq!(
        entries(tmp.path()),
        left,
        "nothing removes it but the next host"
    );

    let mut next = Binary::serve_with_env(
        json!({ "builtins": { "bash": { "cwd": workspace.path().display().to_string() } } }),
        &[("TMPDIR", tmp.path().to_str().unwrap())],
    );
    let echoed = next.request(
        "tools/execute",
        json!({ "callId": "e", "name": "bash", "arguments": { "command": "echo $TMPDIR" } }),
    );
    assert_eq!(echoed["result"]["isError"], false, "{echoed}");
    let roots = entries(tmp.path());
    assert_eq!(roots.len(), 1, "{roots:?}");
    assert_ne!(roots, left, "the killed host's root was kept");
    assert!(
        roots[0].starts_with(&format!("dsh-tools-scratch-{}-", next.pid())),
        "{roots:?}"
    );
    next.close_stdin();
    next.wait();
    assert_eq!(entries(tmp.path()), Vec::<String>::new());
}

/// A command leaves a 2,000-deep tree in its `$TMPDIR` of a host whose `nofile` is 128: the
/// tree goes when the call ends (a removal holding a directory per level ran out of fds and
/// left it for good), with a few fds and little memory (883 MB at a raised limit).
#[test]
fn a_tree_deeper_than_the_fd_limit_left_in_tmpdir_is_removed_after_the_call() {
    use crate::support::wire::{Framing, Host};
    let (tmp, workspace) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut command = std::process::Command::new("sh");
    command
        .args([
            "-c",
            "ulimit -n 128 && exec \"$0\" serve --framing ndjson",
            env!("CARGO_BIN_EXE_dsh-tools"),
        ])
        .env("TMPDIR", tmp.path());
    let mut host = Host::spawn_command(command, Framing::Ndjson);
    host.initialize(
        json!({}),
        json!({ "builtins": { "bash": { "cwd": workspace.path().display().to_string() } } }),
    );
    let before = host.peak_memory_kib();
    let deep = "import os\nfor _ in range(2000):\n    os.mkdir('d'); os.chdir('d')\nopen('f', 'w').write('x')\nprint(len(os.getcwd()))";
    let response = host.request(
        "tools/execute",
        json!({ "callId": "deep", "name": "bash", "arguments": {
            "command": format!("cd \"$TMPDIR\" && python3 -c \"{deep}\"") } }),
    );
    let result = &response["result"];
    assert_eq!(result["isError"], false, "{response}");
    assert_eq!(
        result["value"]["stdout"].as_str().unwrap().trim().len(),
        4,
        "{response}"
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = scratch_dirs(tmp.path());
        if !left.iter().any(|n| n.starts_with("bash-")) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the command's scratch dir was never removed: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let growth_kib = host.peak_memory_kib().saturating_sub(before);
    assert!(growth_kib < 32 * 1024, "peak grew by {growth_kib} KiB");
    assert_eq!(host.finish(), 0);
    assert_eq!(entries(tmp.path()), Vec::<String>::new());
}
