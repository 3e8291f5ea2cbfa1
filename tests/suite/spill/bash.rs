//! `bash` keeps everything: streams past their in-memory window go whole to spill files as
//! they are produced, and `read` and `grep` read them back by the path the result names
//! (while `write` and `edit` still cannot touch them).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::spill::{READ_MORE, THRESHOLD, host_spilling_into, marker_path, seq, text_of};
use crate::support::wire::Host;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// A host with `bash` and the fs tools in `base/root`, spilling into `base/spill` (outside
/// the root).
fn host_in(base: &Path) -> Host {
    let workspace = base.join("root");
    std::fs::create_dir_all(&workspace).unwrap();
    let root = workspace.display().to_string();
    host_spilling_into(
        &base.join("spill"),
        json!({}),
        json!({ "builtins": { "bash": { "cwd": root }, "fs": { "root": root } } }),
    )
}

fn call(host: &mut Host, name: &str, arguments: Value) -> Value {
    let response = host.request(
        "tools/execute",
        json!({ "callId": "c", "name": name, "arguments": arguments }),
    );
    response["result"].clone()
}

fn spilled_path(value: &Value, stream: &str) -> PathBuf {
    let spill = &value[format!("{stream}Spill")];
    PathBuf::from(
        spill["path"]
            .as_str()
            .unwrap_or_else(|| panic!("no {stream}Spill in {value}")),
    )
}

#[test]
fn five_megabytes_on_both_streams_are_saved_whole_and_previewed_within_the_threshold() {
    let workspace = tempfile::tempdir().unwrap();
    let mut host = host_in(workspace.path());
    let result = call(
        &mut host,
        "bash",
        json!({ "command": "seq 1 730000; seq 2000000 2625000 >&2" }),
    );
    assert_eq!(result["isError"], false, "{result}");
    let value = &result["value"];
    let (stdout, stderr) = (seq(1, 730_000), seq(2_000_000, 2_625_000));
    assert!(stdout.len() > 4_900_000 && stderr.len() > 4_900_000);
    let (out_path, err_path) = (spilled_path(value, "stdout"), spilled_path(value, "stderr"));
    assert_eq!(
        std::fs::read(&out_path).unwrap(),
        stdout,
        "stdout byte for byte"
    );
    assert_eq!(
        std::fs::read(&err_path).unwrap(),
        stderr,
        "stderr byte for byte"
    );
    assert_eq!(value["stdoutSpill"]["bytes"], stdout.len());
    assert_eq!(value["stderrSpill"]["bytes"], stderr.len());
    assert_eq!(value["truncated"], true);
    assert_eq!(value["exitCode"], 0);
    let text = text_of(&result);
    assert!(text.len() <= THRESHOLD, "{} bytes", text.len());
    assert!(text.starts_with("1\n2\n3\n"), "{text}");
    assert!(text.contains("730000\n"), "stdout's tail");
    assert!(
        text.contains("2000000\n") && text.contains("2625000"),
        "stderr's head and tail"
    );
    assert!(text.contains(&format!("is saved in {} ...]", out_path.display())));
    assert!(text.contains(&format!("is saved in {} ...]", err_path.display())));
    assert!(text.ends_with(READ_MORE), "{text}");
    assert_eq!(marker_path(value["stdout"].as_str().unwrap()), out_path);
}

#[test]
fn output_within_the_window_is_not_spilled() {
    let workspace = tempfile::tempdir().unwrap();
    let mut host = host_in(workspace.path());
    let result = call(&mut host, "bash", json!({ "command": "seq 1 5000" }));
    let value = &result["value"];
    let stdout = value["stdout"].as_str();
    assert_eq!(
        stdout.map(str::as_bytes),
        Some(&seq(1, 5000)[..]),
        "{result}"
    );
    assert_eq!(value.get("stdoutSpill"), None);
    assert_eq!(value["truncated"], false);
    assert!(!workspace.path().join("spill").exists());
}

#[test]
fn read_and_grep_reach_a_spill_file_by_its_locator_and_write_cannot() {
    let workspace = tempfile::tempdir().unwrap();
    let mut host = host_in(workspace.path());
    let result = call(&mut host, "bash", json!({ "command": "seq 1 100000" }));
    let path = spilled_path(&result["value"], "stdout");
    let locator = marker_path(&text_of(&result));
    assert_eq!(locator, path);
    let file_path = locator.display().to_string();

    let read = call(
        &mut host,
        "read",
        json!({ "file_path": file_path, "offset": 50000, "limit": 3 }),
    );
    assert_eq!(read["isError"], false, "{read}");
    assert_eq!(read["value"]["path"], file_path);
    assert_eq!(read["value"]["totalLines"], 100_000);
    assert_eq!(
        read["value"]["lines"],
        json!([
            { "number": 50000, "text": "50000" },
            { "number": 50001, "text": "50001" },
            { "number": 50002, "text": "50002" }
        ])
    );

    let grep = call(
        &mut host,
        "grep",
        json!({ "pattern": "^7777[0-9]$", "path": file_path, "output_mode": "count" }),
    );
    assert_eq!(grep["isError"], false, "{grep}");
    assert!(
        text_of(&grep).contains(&format!("{file_path}:10")),
        "{grep}"
    );

    for (tool, arguments) in [
        ("write", json!({ "file_path": file_path, "content": "x" })),
        (
            "edit",
            json!({ "file_path": file_path, "old_string": "1", "new_string": "2" }),
        ),
    ] {
        let refused = call(&mut host, tool, arguments);
        assert_eq!(refused["isError"], true, "{tool}: {refused}");
        assert!(text_of(&refused).contains("outside the root"), "{refused}");
    }
    assert_eq!(std::fs::read(&path).unwrap(), seq(1, 100_000));
}

/// `spill.dir` inside a root a tool or a command may write is refused when the host is
/// configured, naming the root: a command there could replace it with a link.
#[test]
fn a_spill_directory_inside_a_writable_root_is_refused_at_configure() {
    let workspace = tempfile::tempdir().unwrap();
    let root = workspace.path().display().to_string();
    let spill = workspace.path().join("results/spill").display().to_string();
    let elsewhere = tempfile::tempdir().unwrap();
    let cwd = elsewhere.path().display().to_string();
    let cases = [
        (json!({ "fs": { "root": root } }), "config.builtins.fs.root"),
        (
            json!({ "bash": { "cwd": root } }),
            "config.builtins.bash.cwd",
        ),
        (
            json!({ "bash": { "cwd": cwd, "sandbox": { "writableRoots": [root] } } }),
            "config.builtins.bash.sandbox.writableRoots",
        ),
    ];
    for (builtins, field) in cases {
        let mut host = Host::spawn(crate::support::wire::Framing::Ndjson);
        let response = host.request(
            "initialize",
            json!({ "protocolVersion": "1",
                    "config": { "builtins": builtins, "spill": { "dir": spill } } }),
        );
        assert_eq!(response["error"]["code"], -32602, "{response}");
        assert_eq!(
            response["error"]["message"].as_str().unwrap(),
            format!(
                "invalid params: config.spill.dir: {spill} lies inside the writable root {root} \
                 ({field}); choose a directory outside every root a tool or a command may write"
            )
        );
    }
}

/// A command (unsandboxed: it may write next to its workspace) replaces the spill directory
/// with a link after the first spill: the host keeps writing into the directory it opened
/// (wherever it was moved), never through the link.
#[test]
fn a_spill_directory_replaced_by_a_link_is_not_written_through() {
    let base = tempfile::tempdir().unwrap();
    let base_path = base.path().canonicalize().unwrap();
    let workspace = base_path.join("root");
    std::fs::create_dir(&workspace).unwrap();
    let root = workspace.display().to_string();
    let mut host = host_spilling_into(
        &base_path.join("spill"),
        json!({}),
        json!({ "builtins": { "bash": { "cwd": root }, "fs": { "root": root } },
                "sandbox": { "mode": "off" } }),
    );
    let first = call(&mut host, "bash", json!({ "command": "seq 1 100000" }));
    let first_path = spilled_path(&first["value"], "stdout");
    assert!(first_path.starts_with(base_path.join("spill")), "{first}");
    std::fs::create_dir(base_path.join("elsewhere")).unwrap();
    let swap = call(
        &mut host,
        "bash",
        json!({ "command": "mv ../spill ../moved && ln -s elsewhere ../spill" }),
    );
    assert_eq!(swap["value"]["exitCode"], 0, "{swap}");
    let second = call(&mut host, "bash", json!({ "command": "seq 1 100000" }));
    assert_eq!(second["isError"], false, "{second}");
    let name = spilled_path(&second["value"], "stdout");
    let name = name.file_name().unwrap();
    assert_eq!(
        std::fs::read_dir(base_path.join("elsewhere"))
            .unwrap()
            .count(),
        0,
        "a spill file went through the link"
    );
    assert_eq!(
        std::fs::read(base_path.join("moved").join(name)).unwrap(),
        seq(1, 100_000)
    );
    // `read` does not follow the link either.
    let through = call(
        &mut host,
        "read",
        json!({ "file_path": base_path.join("spill").join(name).display().to_string() }),
    );
    assert_eq!(through["isError"], true, "{through}");
}

/// A spilled stream is named where every other spill is: `meta.spill` (`{ path, bytes }`,
/// the pipeline's shape, with the stream), stderr's file under `more` when both spilled.
#[test]
fn spilled_streams_are_also_named_in_meta_spill() {
    let workspace = tempfile::tempdir().unwrap();
    let mut host = host_in(workspace.path());
    let one = call(&mut host, "bash", json!({ "command": "seq 1 30000" }));
    let path = spilled_path(&one["value"], "stdout");
    assert_eq!(
        one["meta"]["spill"],
        json!({ "path": path.display().to_string(), "bytes": seq(1, 30_000).len(), "stream": "stdout" }),
        "{one}"
    );
    let both = call(
        &mut host,
        "bash",
        json!({ "command": "seq 1 30000; seq 1 20000 >&2" }),
    );
    let (out, err) = (
        spilled_path(&both["value"], "stdout"),
        spilled_path(&both["value"], "stderr"),
    );
    assert_eq!(
        both["meta"]["spill"],
        json!({ "path": out.display().to_string(), "bytes": seq(1, 30_000).len(), "stream": "stdout",
                "more": [{ "path": err.display().to_string(), "bytes": seq(1, 20_000).len(), "stream": "stderr" }] }),
        "{both}"
    );
    let small = call(&mut host, "bash", json!({ "command": "echo hi" }));
    assert_eq!(small["meta"].get("spill"), None, "{small}");
}
