//! The built-in card builders against golden card JSON: call cards from arguments alone, result
//! cards from live results and from replayed (logged) results, and the generic fallback
//! (`None`) for failures, malformed arguments or metadata, and tools without card builders.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::builtins as builtins_support;

use builtins_support::Workspace;
use dsh_tools::builtins::fs::GREP_CARD_ENTRIES;
use dsh_tools::cards;
use dsh_tools::tool::{ContentBlock, DurableResult, ToolDefinition};
use serde_json::{Value, json};

fn call_card(workspace: &Workspace, tool: &str, arguments: Value) -> Option<Value> {
    cards::call_card(&workspace.runtime, tool, &arguments, None)
}

/// Executes the call, then presents its durable result.
async fn live_card(workspace: &Workspace, tool: &str, arguments: Value) -> Option<Value> {
    let result = workspace.call(tool, arguments.clone()).await;
    let durable = DurableResult::from(&result);
    cards::result_card(&workspace.runtime, tool, &arguments, &durable, None)
}

fn replayed_card(
    workspace: &Workspace,
    tool: &str,
    arguments: Value,
    meta: Value,
) -> Option<Value> {
    let logged = DurableResult {
        is_error: false,
        content: vec![ContentBlock::text("(logged content)")],
        meta: Some(meta),
    };
    cards::result_card(&workspace.runtime, tool, &arguments, &logged, None)
}

#[tokio::test]
async fn call_cards_come_from_arguments_alone() {
    let workspace = Workspace::new();
    let root = workspace.root_text();
    let cases = [
        (
            "read",
            json!({ "file_path": "src/a.rs", "offset": 10, "limit": 5 }),
            json!({ "card": "generic", "title": "Read src/a.rs", "kind": "read", "locations": [{ "path": "src/a.rs", "line": 10 }] }),
        ),
        (
            "read",
            json!({ "file_path": "a.txt" }),
            json!({ "card": "generic", "title": "Read a.txt", "kind": "read", "locations": [{ "path": "a.txt" }] }),
        ),
        (
            "write",
            json!({ "file_path": "b.txt", "content": "hello" }),
            json!({
                "card": "diff",
                "title": "Write b.txt",
                "diffs": [{ "path": "b.txt", "oldText": null, "newText": "hello" }],
                "locations": [{ "path": "b.txt" }]
            }),
        ),
        (
            "edit",
            json!({ "file_path": "c.txt", "old_string": "y = 2", "new_string": "y = 3", "replace_all": false }),
            json!({
                "card": "diff",
                "title": "Edit c.txt",
                "diffs": [{ "path": "c.txt", "oldText": "y = 2", "newText": "y = 3" }],
                "locations": [{ "path": "c.txt" }]
            }),
        ),
        (
            "glob",
            json!({ "pattern": "**/*.rs", "path": "src" }),
            json!({ "card": "generic", "title": "Glob **/*.rs in src", "kind": "search" }),
        ),
        (
            "grep",
            json!({ "pattern": "TODO", "output_mode": "content" }),
            json!({ "card": "generic", "title": "Grep TODO", "kind": "search" }),
        ),
        (
            "bash",
            json!({ "command": "ls -la", "description": "List files" }),
            json!({ "card": "terminal", "title": "ls -la", "description": "List files", "cwd": root }),
        ),
        (
            "bash",
            json!({ "command": "true" }),
            json!({ "card": "terminal", "title": "true", "cwd": root }),
        ),
    ];
    for (tool, arguments, expected) in cases {
        assert_eq!(
            call_card(&workspace, tool, arguments.clone()),
            Some(expected),
            "{tool} {arguments}"
        );
    }
}

#[tokio::test]
async fn malformed_or_unknown_calls_fall_back_to_generic() {
    let workspace = Workspace::new();
    let plain = ToolDefinition::builder("plain")
        .output(json!({ "type": "null" }))
        .body(|_ctx| async { Ok(Value::Null.into()) })
        .unwrap();
    workspace.runtime.register(plain, None).unwrap();
    let cases = [
        ("read", json!({})),
        ("read", json!({ "file_path": 3 })),
        ("read", json!({ "file_path": "a", "offset": "ten" })),
        ("write", json!("not an object")),
        ("edit", json!({ "file_path": "c.txt", "old_string": "x" })),
        ("glob", json!({ "path": "src" })),
        ("bash", json!({ "cmd": "ls" })),
        ("plain", json!({})),
        ("no_such_tool", json!({})),
    ];
    let failed = DurableResult {
        is_error: true,
        content: vec![ContentBlock::text("Error: boom")],
        meta: None,
    };
    for (tool, arguments) in cases {
        assert_eq!(
            call_card(&workspace, tool, arguments.clone()),
            None,
            "{tool} {arguments}"
        );
        let result = cards::result_card(&workspace.runtime, tool, &arguments, &failed, None);
        assert_eq!(result, None, "{tool} {arguments}");
    }
}

#[tokio::test]
async fn live_results_become_their_cards() {
    let workspace = Workspace::new();
    workspace.write("src/a.rs", "fn a() {}\nfn b() {}\n// TODO c\n");
    workspace.write("c.txt", "x = 1\ny = 2\n");
    let cases = [
        (
            "read",
            json!({ "file_path": "src/a.rs", "offset": 2 }),
            Some(json!({
                "card": "read",
                "path": "src/a.rs",
                "offset": 2,
                "lines": [{ "number": 2, "text": "fn b() {}" }, { "number": 3, "text": "// TODO c" }],
                "totalLines": 3,
                "lang": "rust",
                "content": [{ "type": "text", "text": "fn b() {}\n// TODO c" }]
            })),
        ),
        (
            "read",
            json!({ "file_path": "c.txt", "offset": 9 }),
            Some(json!({
                "card": "read",
                "path": "c.txt",
                "offset": 9,
                "lines": [],
                "totalLines": 2,
                "content": [{ "type": "text", "text": "" }]
            })),
        ),
        (
            "write",
            json!({ "file_path": "b.txt", "content": "hello" }),
            Some(json!({
                "card": "diff",
                "title": "Created b.txt",
                "diffs": [{ "path": "b.txt", "oldText": null, "newText": "hello" }]
            })),
        ),
        (
            "write",
            json!({ "file_path": "b.txt", "content": "again" }),
            Some(json!({
                "card": "diff",
                "title": "Wrote b.txt",
                "diffs": [{ "path": "b.txt", "oldText": null, "newText": "again" }]
            })),
        ),
        (
            "edit",
            json!({ "file_path": "c.txt", "old_string": "y = 2", "new_string": "y = 3" }),
            Some(json!({
                "card": "diff",
                "title": "Edited c.txt (1 replacement)",
                "diffs": [{ "path": "c.txt", "oldText": "y = 2", "newText": "y = 3" }]
            })),
        ),
        (
            "glob",
            json!({ "pattern": "**/*.rs" }),
            Some(
                json!({ "card": "search", "shape": "paths", "paths": ["src/a.rs"], "truncated": false, "total": 1 }),
            ),
        ),
        (
            "grep",
            json!({ "pattern": "fn", "output_mode": "content", "head_limit": 1 }),
            Some(json!({
                "card": "search",
                "shape": "matches",
                "files": [{ "path": "src/a.rs", "matches": [{ "lineNumber": 1, "line": "fn a() {}" }] }],
                "truncated": true,
                "total": 2
            })),
        ),
        (
            "grep",
            json!({ "pattern": "TODO" }),
            Some(
                json!({ "card": "search", "shape": "paths", "paths": ["src/a.rs"], "truncated": false, "total": 1 }),
            ),
        ),
        (
            "grep",
            json!({ "pattern": "TODO", "output_mode": "count" }),
            None,
        ),
        (
            "bash",
            json!({ "command": "echo hi; echo oops >&2; exit 4" }),
            Some(json!({ "card": "terminal", "output": "hi\noops\n", "exitCode": 4 })),
        ),
        ("read", json!({ "file_path": "missing.txt" }), None),
        (
            "edit",
            json!({ "file_path": "c.txt", "old_string": "zzz", "new_string": "y" }),
            None,
        ),
        ("bash", json!({ "command": "true", "timeout": 0 }), None),
    ];
    for (tool, arguments, expected) in cases {
        assert_eq!(
            live_card(&workspace, tool, arguments.clone()).await,
            expected,
            "{tool} {arguments}"
        );
    }
}

#[tokio::test]
async fn replayed_results_present_from_logged_meta_alone() {
    let workspace = Workspace::new();
    let cases = [
        (
            "read",
            json!({ "file_path": "old/path.py" }),
            json!({ "path": "old/path.py", "offset": 1, "lines": [{ "number": 1, "text": "print(1)" }], "totalLines": 1 }),
            Some(json!({
                "card": "read",
                "path": "old/path.py",
                "offset": 1,
                "lines": [{ "number": 1, "text": "print(1)" }],
                "totalLines": 1,
                "lang": "python",
                "content": [{ "type": "text", "text": "print(1)" }]
            })),
        ),
        (
            "bash",
            json!({ "command": "make" }),
            json!({ "output": "built\n", "signal": "SIGKILL" }),
            Some(json!({ "card": "terminal", "output": "built\n", "signal": "SIGKILL" })),
        ),
        (
            "edit",
            json!({ "file_path": "c.txt", "old_string": "a", "new_string": "b", "replace_all": true }),
            json!({ "replacements": 3 }),
            Some(json!({
                "card": "diff",
                "title": "Edited c.txt (3 replacements)",
                "diffs": [{ "path": "c.txt", "oldText": "a", "newText": "b" }]
            })),
        ),
        (
            "glob",
            json!({ "pattern": "*" }),
            json!({ "paths": ["a", "b"], "truncated": true, "total": 250 }),
            Some(
                json!({ "card": "search", "shape": "paths", "paths": ["a", "b"], "truncated": true, "total": 250 }),
            ),
        ),
        (
            "read",
            json!({ "file_path": "a" }),
            json!({ "lines": "garbled" }),
            None,
        ),
        (
            "write",
            json!({ "file_path": "a", "content": "x" }),
            json!({}),
            None,
        ),
        (
            "write",
            json!({ "file_path": 7 }),
            json!({ "created": true }),
            None,
        ),
        (
            "grep",
            json!({ "pattern": "x" }),
            json!({ "mode": "unknown" }),
            None,
        ),
        ("bash", json!({ "command": "x" }), json!(null), None),
    ];
    for (tool, arguments, meta, expected) in cases {
        let card = replayed_card(&workspace, tool, arguments.clone(), meta.clone());
        assert_eq!(card, expected, "{tool} {arguments} {meta}");
    }
}

#[tokio::test]
async fn a_session_shows_as_a_terminal_card_with_its_command_state_and_output() {
    let workspace = Workspace::new();
    let started = live_card(
        &workspace,
        "bash",
        json!({ "command": "echo up; read _; echo done", "yieldMs": 0 }),
    )
    .await;
    let session = started.as_ref().unwrap()["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        started,
        Some(
            json!({ "card": "terminal", "output": started.as_ref().unwrap()["output"], "sessionId": session, "running": true })
        )
    );
    assert_eq!(
        call_card(&workspace, "bash_output", json!({ "sessionId": session })),
        Some(
            json!({ "card": "terminal", "title": "echo up; read _; echo done", "description": format!("session {session}") })
        )
    );
    let written = live_card(
        &workspace,
        "bash_write",
        json!({ "sessionId": session, "input": "\n", "waitMs": 20000, "until": "done" }),
    )
    .await
    .unwrap();
    assert_eq!(written["card"], "terminal");
    assert_eq!(written["title"], "echo up; read _; echo done");
    assert_eq!(written["sessionId"], session.as_str());
    assert!(
        written["output"].as_str().unwrap().contains("done"),
        "{written}"
    );
    assert_eq!(
        replayed_card(
            &workspace,
            "bash_kill",
            json!({ "sessionId": "bash-99" }),
            json!({ "sessionId": "bash-99", "running": false, "output": "bye\n", "signal": "SIGTERM" }),
        ),
        Some(
            json!({ "card": "terminal", "title": "session bash-99", "output": "bye\n", "signal": "SIGTERM", "sessionId": "bash-99", "running": false })
        )
    );
}

/// A `head_limit: 0` search returns every line to the model, but its card (and the metadata
/// persisted with the result) carries at most `GREP_CARD_ENTRIES` of them, marked truncated
/// with the true total, so a UI never presents the capped card as complete.
#[tokio::test]
async fn large_search_cards_are_capped_and_say_so() {
    let workspace = Workspace::new();
    let lines = GREP_CARD_ENTRIES + 7;
    let half = lines / 2;
    let text = |n: usize| (0..n).map(|i| format!("hit {i}\n")).collect::<String>();
    workspace.write("big/one.txt", &text(half));
    workspace.write("big/two.txt", &text(lines - half));
    let arguments =
        json!({ "pattern": "hit", "path": "big", "output_mode": "content", "head_limit": 0 });
    let result = workspace.call("grep", arguments.clone()).await;
    let value = builtins_support::value(&result);
    let returned: usize = value["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| file["matches"].as_array().unwrap().len())
        .sum();
    assert_eq!(returned, lines, "the model gets every line");
    assert_eq!(value["truncated"], false);

    let card = live_card(&workspace, "grep", arguments).await.unwrap();
    let files = card["files"].as_array().unwrap();
    let shown: Vec<usize> = files
        .iter()
        .map(|file| file["matches"].as_array().unwrap().len())
        .collect();
    assert_eq!(shown, vec![half, GREP_CARD_ENTRIES - half], "{card}");
    assert_eq!(card["truncated"], true);
    assert_eq!(card["total"], lines);

    let small =
        json!({ "pattern": "hit 1$", "path": "big", "output_mode": "content", "head_limit": 0 });
    let card = live_card(&workspace, "grep", small).await.unwrap();
    assert_eq!(
        card["truncated"], false,
        "an uncapped card is complete: {card}"
    );
    assert_eq!(card["total"], 2);

    let paths: Vec<String> = (0..GREP_CARD_ENTRIES + 3)
        .map(|i| format!("many/f{i}.txt"))
        .collect();
    for path in &paths {
        workspace.write(path, "needle\n");
    }
    let listing = json!({ "pattern": "needle", "path": "many", "head_limit": 0 });
    let card = live_card(&workspace, "grep", listing).await.unwrap();
    assert_eq!(card["paths"].as_array().unwrap().len(), GREP_CARD_ENTRIES);
    assert_eq!(card["truncated"], true);
    assert_eq!(card["total"], paths.len());
}
