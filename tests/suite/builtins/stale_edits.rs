//! Stale-edit protection through the real binary: `edit` and `write` of an existing file
//! the calling scope has not read, or that changed on disk since, are refused in Claude
//! Code's words; a re-read lets the change through; each agent scope keeps its own record
//! (Code Mode sub-calls use their outer call's); `builtins.fs.staleEdits: false` turns it off.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::mcp::Binary;
use serde_json::{Value, json};
use std::path::Path;

const NOT_READ: &str = "Error: File has not been read yet. Read it first before writing to it.";
const MODIFIED: &str = "Error: File has been modified since read, either by the user or by a \
                        linter. Read it again before attempting to write it.";

fn host(root: &Path, stale_edits: Option<bool>) -> Binary {
    let mut fs = json!({ "root": root.display().to_string() });
    if let Some(on) = stale_edits {
        fs["staleEdits"] = json!(on);
    }
    Binary::serve(json!({ "builtins": { "fs": fs } }))
}

fn call(host: &mut Binary, agent: Option<&str>, name: &str, arguments: Value) -> Value {
    let mut params = json!({ "callId": "c", "name": name, "arguments": arguments });
    if let Some(agent) = agent {
        params["agent"] = json!(agent);
    }
    host.request("tools/execute", params)["result"].clone()
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap()
}

fn edit(old: &str, new: &str) -> Value {
    json!({ "file_path": "a.txt", "old_string": old, "new_string": new })
}

#[test]
fn an_edit_or_write_of_a_file_never_read_is_refused_and_a_read_lets_it_through() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    std::fs::write(&file, "one\ntwo\nthree\n").unwrap();
    let mut host = host(dir.path(), None);

    let refused = call(&mut host, None, "edit", edit("two", "2"));
    assert_eq!(text(&refused), NOT_READ);
    let overwrite = json!({ "file_path": "a.txt", "content": "gone\n" });
    assert_eq!(
        text(&call(&mut host, None, "write", overwrite.clone())),
        NOT_READ
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "one\ntwo\nthree\n");

    // A partial window is a read too.
    let window = call(
        &mut host,
        None,
        "read",
        json!({ "file_path": "a.txt", "limit": 1 }),
    );
    assert_eq!(window["isError"], false, "{window}");
    let edited = call(&mut host, None, "edit", edit("two", "2"));
    assert_eq!(edited["isError"], false, "{edited}");
    // The scope's record is now the edited file: the next change needs no new read.
    let again = call(&mut host, None, "edit", edit("three", "3"));
    assert_eq!(again["isError"], false, "{again}");
    let written = call(&mut host, None, "write", overwrite);
    assert_eq!(written["value"]["created"], false, "{written}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "gone\n");

    // A new file needs no read, and its writer may edit it after.
    let created = call(
        &mut host,
        None,
        "write",
        json!({ "file_path": "new/b.txt", "content": "fresh\n" }),
    );
    assert_eq!(created["value"]["created"], true, "{created}");
    let follow_up = call(
        &mut host,
        None,
        "edit",
        json!({ "file_path": "new/b.txt", "old_string": "fresh", "new_string": "edited" }),
    );
    assert_eq!(follow_up["isError"], false, "{follow_up}");
}

#[test]
fn a_change_on_disk_after_the_read_refuses_the_edit_until_the_file_is_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    std::fs::write(&file, "value = 1\n").unwrap();
    let mut host = host(dir.path(), None);
    call(&mut host, None, "read", json!({ "file_path": "a.txt" }));

    // The user (or a linter) changes the file, keeping its size.
    std::fs::write(&file, "value = 7\n").unwrap();
    let refused = call(&mut host, None, "edit", edit("value", "total"));
    assert_eq!(text(&refused), MODIFIED);
    let overwrite = json!({ "file_path": "a.txt", "content": "x\n" });
    assert_eq!(text(&call(&mut host, None, "write", overwrite)), MODIFIED);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "value = 7\n");

    call(&mut host, None, "read", json!({ "file_path": "a.txt" }));
    let edited = call(&mut host, None, "edit", edit("value", "total"));
    assert_eq!(edited["isError"], false, "{edited}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "total = 7\n");

    // A touch that changes no byte is no change.
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(later)
        .unwrap();
    let after_touch = call(&mut host, None, "edit", edit("total", "sum"));
    assert_eq!(after_touch["isError"], false, "{after_touch}");
}

#[test]
fn each_agent_scope_keeps_its_own_record_and_code_mode_calls_use_the_outer_scope() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    std::fs::write(&file, "shared text\n").unwrap();
    let mut host = host(dir.path(), None);
    for agent in ["agent-a", "agent-b"] {
        let opened = host.request("agents/open", json!({ "agent": agent }));
        assert_eq!(opened["result"], json!(null), "{opened}");
    }
    let read = call(
        &mut host,
        Some("agent-a"),
        "read",
        json!({ "file_path": "a.txt" }),
    );
    assert_eq!(read["isError"], false, "{read}");
    // Agent A's read lets neither agent B nor the global scope change the file.
    assert_eq!(
        text(&call(
            &mut host,
            Some("agent-b"),
            "edit",
            edit("shared", "B's")
        )),
        NOT_READ
    );
    assert_eq!(
        text(&call(&mut host, None, "edit", edit("shared", "global"))),
        NOT_READ
    );

    // A Code Mode program of agent A edits with A's record.
    let presented = host.request(
        "tools/presentAs",
        json!({ "agent": "agent-a", "mode": "code" }),
    );
    assert!(
        presented["result"]["registration"].is_string(),
        "{presented}"
    );
    let program = "return await tools.edit({ file_path: 'a.txt', old_string: 'shared', new_string: \"A's\" })";
    let run = call(
        &mut host,
        Some("agent-a"),
        "run_code",
        json!({ "code": program, "description": "edit as A" }),
    );
    assert_eq!(run["isError"], false, "{run}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "A's text\n");

    // B reads the file as it is now; then B may change it, and A's record is stale.
    call(
        &mut host,
        Some("agent-b"),
        "read",
        json!({ "file_path": "a.txt" }),
    );
    let by_b = call(&mut host, Some("agent-b"), "edit", edit("text", "words"));
    assert_eq!(by_b["isError"], false, "{by_b}");
    let stale =
        "return await tools.edit({ file_path: 'a.txt', old_string: 'words', new_string: 'x' })";
    let run = call(
        &mut host,
        Some("agent-a"),
        "run_code",
        json!({ "code": stale, "description": "stale edit as A" }),
    );
    assert!(
        run.to_string()
            .contains("File has been modified since read"),
        "{run}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "A's words\n");
}

#[test]
fn stale_edits_false_turns_the_protection_off() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    std::fs::write(&file, "one\n").unwrap();
    let mut host = host(dir.path(), Some(false));
    let edited = call(&mut host, None, "edit", edit("one", "two"));
    assert_eq!(edited["isError"], false, "{edited}");
    std::fs::write(&file, "changed behind its back\n").unwrap();
    let written = call(
        &mut host,
        None,
        "write",
        json!({ "file_path": "a.txt", "content": "overwritten\n" }),
    );
    assert_eq!(written["isError"], false, "{written}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "overwritten\n");
}
