//! The file tools through `ToolRuntime::execute`: every happy path and every refusal
//! (root escapes by `..`, absolute paths and symbolic links; ambiguous or missing edits).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::builtins as builtins_support;

use builtins_support::{Workspace, failure, value};
use dsh_tools::ToolRuntime;
use dsh_tools::builtins::bash::session::ExecSessions;
use dsh_tools::builtins::{BuiltinsError, register_builtins};
use dsh_tools::tool::ToolDefinition;
use dsh_tools_protocol::{BuiltinsConfig, ExecutionMode, FsConfig, HostConfig};
use serde_json::{Value, json};

/// Runs each `(tool, arguments)` and expects exactly `message` as its failure.
async fn check_failures(workspace: &Workspace, cases: Vec<(&str, Value, String)>) {
    for (tool, arguments, expected) in cases {
        let result = workspace.call(tool, arguments.clone()).await;
        assert_eq!(failure(&result), expected, "{tool} {arguments}");
        assert_eq!(result.meta, None);
    }
}

#[tokio::test]
async fn read_returns_numbered_lines_and_persists_them_as_meta() {
    let workspace = Workspace::new();
    workspace.write("a.txt", "alpha\nbeta\r\ngamma");
    let result = workspace
        .call("read", json!({ "file_path": "a.txt" }))
        .await;
    let expected = json!({
        "path": "a.txt",
        "offset": 1,
        "lines": [
            { "number": 1, "text": "alpha" },
            { "number": 2, "text": "beta" },
            { "number": 3, "text": "gamma" }
        ],
        "totalLines": 3
    });
    assert_eq!(value(&result), expected);
    assert_eq!(result.text(), "     1\talpha\n     2\tbeta\n     3\tgamma");
    assert_eq!(result.meta, Some(expected));
}

#[tokio::test]
async fn read_windows_keep_file_line_numbers() {
    let workspace = Workspace::new();
    workspace.write("a.txt", "alpha\nbeta\ngamma\n");
    let absolute = workspace.root.join("a.txt").display().to_string();
    let result = workspace
        .call(
            "read",
            json!({ "file_path": absolute, "offset": 2, "limit": 1 }),
        )
        .await;
    assert_eq!(
        value(&result),
        json!({ "path": "a.txt", "offset": 2, "lines": [{ "number": 2, "text": "beta" }], "totalLines": 3 })
    );
    assert_eq!(
        result.text(),
        "     2\tbeta\n\n(showing lines 2-2 of 3; continue with offset 3)"
    );
    let past_end = workspace
        .call("read", json!({ "file_path": "a.txt", "offset": 7 }))
        .await;
    assert_eq!(
        value(&past_end),
        json!({ "path": "a.txt", "offset": 7, "lines": [], "totalLines": 3 })
    );
    assert_eq!(
        past_end.text(),
        "(no lines: offset 7 is past the end of \"a.txt\", which has 3 lines)"
    );
}

#[tokio::test]
async fn read_refuses_what_is_not_a_text_file() {
    let workspace = Workspace::new();
    workspace.write("a.txt", "alpha\n");
    workspace.write_bytes("blob.bin", b"PK\x00\x01");
    std::fs::create_dir_all(workspace.root.join("dir")).unwrap();
    let cases = vec![
        (
            "read",
            json!({ "file_path": "missing.txt" }),
            "\"missing.txt\" does not exist".to_owned(),
        ),
        (
            "read",
            json!({ "file_path": "dir" }),
            "\"dir\" is a directory, not a file".to_owned(),
        ),
        (
            "read",
            json!({ "file_path": "blob.bin" }),
            "\"blob.bin\" looks like a binary file; read only reads text".to_owned(),
        ),
        (
            "read",
            json!({ "file_path": "a.txt", "limit": 0 }),
            "limit must be at least 1".to_owned(),
        ),
        (
            "read",
            json!({ "file_path": "a.txt", "offset": -1 }),
            "offset must be a line number (1 or more)".to_owned(),
        ),
        (
            "read",
            json!({ "file_path": "" }),
            "path must not be empty".to_owned(),
        ),
        (
            "read",
            json!({}),
            "invalid arguments: missing required property \"file_path\"".to_owned(),
        ),
    ];
    check_failures(&workspace, cases).await;
}

#[tokio::test]
async fn write_creates_parents_then_overwrites() {
    let workspace = Workspace::new();
    let created = workspace
        .call(
            "write",
            json!({ "file_path": "new/dir/b.txt", "content": "hello" }),
        )
        .await;
    assert_eq!(
        value(&created),
        json!({ "path": "new/dir/b.txt", "bytes": 5, "created": true })
    );
    assert_eq!(created.text(), "Created new/dir/b.txt (5 bytes)");
    assert_eq!(created.meta, Some(json!({ "created": true })));
    assert_eq!(workspace.read("new/dir/b.txt"), "hello");

    let overwritten = workspace
        .call(
            "write",
            json!({ "file_path": "new/dir/b.txt", "content": "héllo!" }),
        )
        .await;
    assert_eq!(
        value(&overwritten),
        json!({ "path": "new/dir/b.txt", "bytes": 7, "created": false })
    );
    assert_eq!(overwritten.text(), "Overwrote new/dir/b.txt (7 bytes)");
    assert_eq!(workspace.read("new/dir/b.txt"), "héllo!");

    std::fs::create_dir_all(workspace.root.join("dir")).unwrap();
    let cases = vec![(
        "write",
        json!({ "file_path": "dir", "content": "x" }),
        "\"dir\" is a directory, not a file".to_owned(),
    )];
    check_failures(&workspace, cases).await;
}

#[tokio::test]
async fn edit_replaces_one_exact_match_or_all_when_asked() {
    let workspace = Workspace::new();
    workspace.write("c.txt", "x = 1\ny = 2\n");
    workspace.read_through_tool("c.txt").await;
    let once = workspace
        .call(
            "edit",
            json!({ "file_path": "c.txt", "old_string": "y = 2", "new_string": "y = 3" }),
        )
        .await;
    assert_eq!(value(&once), json!({ "path": "c.txt", "replacements": 1 }));
    assert_eq!(once.text(), "Edited c.txt (1 replacement)");
    assert_eq!(once.meta, Some(json!({ "replacements": 1 })));
    assert_eq!(workspace.read("c.txt"), "x = 1\ny = 3\n");

    workspace.write("d.txt", "a a a");
    workspace.read_through_tool("d.txt").await;
    let all = workspace
        .call(
            "edit",
            json!({ "file_path": "d.txt", "old_string": "a", "new_string": "b", "replace_all": true }),
        )
        .await;
    assert_eq!(value(&all), json!({ "path": "d.txt", "replacements": 3 }));
    assert_eq!(all.text(), "Edited d.txt (3 replacements)");
    assert_eq!(workspace.read("d.txt"), "b b b");
}

#[tokio::test]
async fn edit_refuses_missing_ambiguous_and_empty_changes() {
    let workspace = Workspace::new();
    workspace.write("d.txt", "a a a");
    workspace.read_through_tool("d.txt").await;
    let edit = |old: &str, new: &str| json!({ "file_path": "d.txt", "old_string": old, "new_string": new });
    let cases = vec![
        ("edit", edit("zzz", "y"), "old_string was not found in \"d.txt\"".to_owned()),
        (
            "edit",
            edit("a", "b"),
            "old_string occurs 3 times in \"d.txt\"; include more surrounding context to make it unique, or set replace_all to replace every occurrence".to_owned(),
        ),
        ("edit", edit("", "b"), "old_string must not be empty (use write to create a file)".to_owned()),
        ("edit", edit("a", "a"), "old_string and new_string are identical; there is nothing to change".to_owned()),
        (
            "edit",
            json!({ "file_path": "nope.txt", "old_string": "a", "new_string": "b" }),
            "\"nope.txt\" does not exist".to_owned(),
        ),
    ];
    check_failures(&workspace, cases).await;
    assert_eq!(workspace.read("d.txt"), "a a a");
}

#[tokio::test]
async fn every_fs_tool_refuses_paths_that_leave_the_root() {
    let workspace = Workspace::new();
    let root = workspace.root_text();
    let outside = workspace.outside.display().to_string();
    workspace.write("sub/keep.txt", "kept\n");
    workspace.link("escape", &workspace.outside);
    workspace.link("leak.txt", "../outside/secret.txt");
    workspace.link("hop", "bounce");
    workspace.link("bounce", "../outside");
    workspace.link("loop", "loop");
    let dotdot = |path: &str| format!("refused \"{path}\": \"..\" leads outside the root {root}");
    let absolute =
        |path: &str| format!("refused \"{path}\": absolute path outside the root {root}");
    let link = |path: &str, link: &str| {
        format!("refused \"{path}\": symbolic link \"{link}\" leads outside the root {root}")
    };
    let secret = format!("{outside}/secret.txt");
    let read = |path: &str| json!({ "file_path": path });
    let cases = vec![
        (
            "read",
            read("../outside/secret.txt"),
            dotdot("../outside/secret.txt"),
        ),
        (
            "read",
            read("sub/../../outside/secret.txt"),
            dotdot("sub/../../outside/secret.txt"),
        ),
        ("read", read(&secret), absolute(&secret)),
        ("read", read("/etc/passwd"), absolute("/etc/passwd")),
        (
            "read",
            read("escape/secret.txt"),
            link("escape/secret.txt", "escape"),
        ),
        ("read", read("leak.txt"), link("leak.txt", "leak.txt")),
        (
            "read",
            read("hop/secret.txt"),
            link("hop/secret.txt", "bounce"),
        ),
        (
            "read",
            read("loop"),
            "cannot resolve \"loop\": too many levels of symbolic links".to_owned(),
        ),
        (
            "write",
            json!({ "file_path": "escape/new.txt", "content": "x" }),
            link("escape/new.txt", "escape"),
        ),
        (
            "write",
            json!({ "file_path": "leak.txt", "content": "overwritten" }),
            link("leak.txt", "leak.txt"),
        ),
        (
            "write",
            json!({ "file_path": "../planted.txt", "content": "x" }),
            dotdot("../planted.txt"),
        ),
        (
            "edit",
            json!({ "file_path": "leak.txt", "old_string": "TODO", "new_string": "DONE" }),
            link("leak.txt", "leak.txt"),
        ),
        (
            "edit",
            json!({ "file_path": secret, "old_string": "TODO", "new_string": "DONE" }),
            absolute(&secret),
        ),
        (
            "glob",
            json!({ "pattern": "*", "path": "escape" }),
            link("escape", "escape"),
        ),
        (
            "glob",
            json!({ "pattern": "*", "path": ".." }),
            dotdot(".."),
        ),
        (
            "grep",
            json!({ "pattern": "TODO", "path": "leak.txt" }),
            link("leak.txt", "leak.txt"),
        ),
        (
            "grep",
            json!({ "pattern": "TODO", "path": "/" }),
            absolute("/"),
        ),
    ];
    check_failures(&workspace, cases).await;
    assert_eq!(
        std::fs::read_to_string(workspace.outside.join("secret.txt")).unwrap(),
        "TODO secret\n"
    );
    assert!(!workspace.outside.join("new.txt").exists());
    assert!(
        !workspace
            .root
            .parent()
            .unwrap()
            .join("planted.txt")
            .exists()
    );
}

#[tokio::test]
async fn paths_that_stay_inside_the_root_resolve() {
    let workspace = Workspace::new();
    workspace.write("a.txt", "alpha\n");
    workspace.write("sub/keep.txt", "kept\n");
    workspace.link("relative.txt", "sub/../a.txt");
    workspace.link("absolute.txt", workspace.root.join("a.txt"));
    workspace.link("subdir", "sub");
    let cases = [
        ("sub/../a.txt", "a.txt"),
        ("./a.txt", "a.txt"),
        ("relative.txt", "a.txt"),
        ("absolute.txt", "a.txt"),
        ("subdir/keep.txt", "sub/keep.txt"),
        ("subdir/../a.txt", "a.txt"),
    ];
    for (requested, resolved) in cases {
        let result = workspace
            .call("read", json!({ "file_path": requested, "limit": 1 }))
            .await;
        assert_eq!(value(&result)["path"], json!(resolved), "{requested}");
    }
}

/// Sets `relative`'s modification time to `seconds` after the epoch (search results list
/// the most recently modified first).
fn modified_at(workspace: &Workspace, relative: &str, seconds: u64) {
    let file = std::fs::File::options()
        .write(true)
        .open(workspace.root.join(relative))
        .unwrap();
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(seconds);
    file.set_modified(time).unwrap();
}

/// A tree for the search tools, with an ignored file, a binary file and links (one out of
/// the root); modified in the order written, `ignored.rs` last.
fn search_tree() -> Workspace {
    let workspace = Workspace::new();
    workspace.write("a.rs", "fn main() {}\n");
    workspace.write("src/b.rs", "fn helper() {}\n// TODO fix\n");
    workspace.write("src/c/d.rs", "// todo later\n");
    workspace.write("src/e.txt", "plain\n");
    workspace.write("notes.md", "TODO: later\nTODO: sooner\n");
    workspace.write(".gitignore", "ignored.rs\n");
    workspace.write("ignored.rs", "// TODO ignored\n");
    workspace.write_bytes("blob.bin", b"\x00TODO");
    workspace.link("escape", &workspace.outside);
    workspace.link("leak.rs", "../outside/secret.txt");
    workspace.link("inside.rs", "a.rs");
    let order = [
        "a.rs",
        "src/b.rs",
        "src/c/d.rs",
        "src/e.txt",
        "notes.md",
        "ignored.rs",
    ];
    for (n, path) in (1..).zip(order) {
        modified_at(&workspace, path, 1_000_000 + n * 1000);
    }
    workspace
}

#[tokio::test]
async fn glob_lists_newest_first_without_leaving_the_root() {
    // `rg --files -g`'s set: a glob naming an ignored file lists it (rg's globs override
    // ignore rules), links are not listed; a glob without `/` matches at any depth.
    let workspace = search_tree();
    let cases = [
        (
            json!({ "pattern": "**/*.rs" }),
            json!({ "paths": ["ignored.rs", "src/c/d.rs", "src/b.rs", "a.rs"], "truncated": false, "total": 4 }),
            "ignored.rs\nsrc/c/d.rs\nsrc/b.rs\na.rs",
        ),
        (
            json!({ "pattern": "src/*.rs" }),
            json!({ "paths": ["src/b.rs"], "truncated": false, "total": 1 }),
            "src/b.rs",
        ),
        (
            json!({ "pattern": "*.{rs,txt}", "path": "src" }),
            json!({ "paths": ["src/e.txt", "src/c/d.rs", "src/b.rs"], "truncated": false, "total": 3 }),
            "src/e.txt\nsrc/c/d.rs\nsrc/b.rs",
        ),
        (
            json!({ "pattern": "*.zig" }),
            json!({ "paths": [], "truncated": false, "total": 0 }),
            "No files matched",
        ),
    ];
    for (arguments, expected, text) in cases {
        let result = workspace.call("glob", arguments.clone()).await;
        assert_eq!(value(&result), expected, "{arguments}");
        assert_eq!(result.text(), text, "{arguments}");
        assert_eq!(result.meta, Some(expected));
    }
    let cases = vec![
        (
            "glob",
            json!({ "pattern": "../outside/*" }),
            "pattern must be relative and must not contain \"..\"; choose the directory with `path`".to_owned(),
        ),
        (
            "glob",
            json!({ "pattern": "/etc/*" }),
            "pattern must be relative and must not contain \"..\"; choose the directory with `path`".to_owned(),
        ),
        ("glob", json!({ "pattern": "*", "path": "a.rs" }), "\"a.rs\" is not a directory".to_owned()),
        ("glob", json!({ "pattern": "*", "path": "gone" }), "\"gone\" does not exist".to_owned()),
    ];
    check_failures(&workspace, cases).await;
}

#[tokio::test]
async fn glob_caps_long_lists_and_says_so() {
    let workspace = Workspace::new();
    for n in 0..105 {
        workspace.write(&format!("f{n:03}.txt"), "");
        modified_at(&workspace, &format!("f{n:03}.txt"), 1_000_000 + n);
    }
    let result = workspace.call("glob", json!({ "pattern": "*.txt" })).await;
    let expected: Vec<String> = (5..105).rev().map(|n| format!("f{n:03}.txt")).collect();
    assert_eq!(
        value(&result),
        json!({ "paths": expected, "truncated": true, "total": 105 })
    );
    assert!(
        result.text().ends_with(
            "f005.txt\n\n(showing the first 100 of 105 paths; narrow the pattern to see the rest)"
        ),
        "{}",
        result.text()
    );
}

#[tokio::test]
async fn grep_searches_in_three_modes_without_leaving_the_root() {
    // `blob.bin` is binary: not searched, and counted. Matching files list newest first.
    let workspace = search_tree();
    let binary = json!({ "tooLarge": 0, "binary": 1, "unreadable": 0 });
    let cases = [
        (
            json!({ "pattern": "TODO" }),
            json!({ "mode": "files_with_matches", "paths": ["notes.md", "src/b.rs"], "truncated": false, "total": 2, "notSearched": binary }),
            "notes.md\nsrc/b.rs\n\n(not searched: 1 binary file)",
        ),
        (
            json!({ "pattern": "todo", "-i": true, "output_mode": "content" }),
            json!({
                "mode": "content",
                "files": [
                    { "path": "notes.md", "matches": [
                        { "lineNumber": 1, "line": "TODO: later" },
                        { "lineNumber": 2, "line": "TODO: sooner" }
                    ] },
                    { "path": "src/b.rs", "matches": [{ "lineNumber": 2, "line": "// TODO fix" }] },
                    { "path": "src/c/d.rs", "matches": [{ "lineNumber": 1, "line": "// todo later" }] }
                ],
                "truncated": false,
                "total": 4,
                "notSearched": binary
            }),
            "notes.md:1:TODO: later\nnotes.md:2:TODO: sooner\nsrc/b.rs:2:// TODO fix\nsrc/c/d.rs:1:// todo later\n\n(not searched: 1 binary file)",
        ),
        (
            json!({ "pattern": "TODO", "output_mode": "count" }),
            json!({
                "mode": "count",
                "counts": [{ "path": "notes.md", "count": 2 }, { "path": "src/b.rs", "count": 1 }],
                "truncated": false,
                "total": 2,
                "notSearched": binary
            }),
            "notes.md:2\nsrc/b.rs:1\n\n(not searched: 1 binary file)",
        ),
        (
            // rg's `--glob` overrides ignore rules: the ignored file it names is searched.
            json!({ "pattern": "(?i)todo", "glob": "*.rs" }),
            json!({ "mode": "files_with_matches", "paths": ["ignored.rs", "src/c/d.rs", "src/b.rs"], "truncated": false, "total": 3 }),
            "ignored.rs\nsrc/c/d.rs\nsrc/b.rs",
        ),
        (
            json!({ "pattern": "fn", "path": "src/b.rs", "glob": "*.md" }),
            json!({ "mode": "files_with_matches", "paths": ["src/b.rs"], "truncated": false, "total": 1 }),
            "src/b.rs",
        ),
        (
            json!({ "pattern": "fn main", "path": "inside.rs" }),
            json!({ "mode": "files_with_matches", "paths": ["a.rs"], "truncated": false, "total": 1 }),
            "a.rs",
        ),
        (
            json!({ "pattern": "TODO", "output_mode": "content", "head_limit": 1 }),
            json!({
                "mode": "content",
                "files": [{ "path": "notes.md", "matches": [{ "lineNumber": 1, "line": "TODO: later" }] }],
                "truncated": true,
                "total": 3,
                "notSearched": binary
            }),
            "notes.md:1:TODO: later\n\n(showing lines 1 to 1 of 3; pass offset 1 for the next page, or narrow the search)\n\n(not searched: 1 binary file)",
        ),
        (
            json!({ "pattern": "nothing here", "type": "rust" }),
            json!({ "mode": "files_with_matches", "paths": [], "truncated": false, "total": 0 }),
            "No matches found",
        ),
    ];
    for (arguments, expected, text) in cases {
        let result = workspace.call("grep", arguments.clone()).await;
        assert_eq!(value(&result), expected, "{arguments}");
        assert_eq!(result.text(), text, "{arguments}");
        let meta = (expected["mode"] != "count").then_some(expected);
        assert_eq!(result.meta, meta, "{arguments}");
    }
    let cases = vec![
        ("grep", json!({ "pattern": "x", "path": "missing" }), "\"missing\" does not exist".to_owned()),
        (
            "grep",
            json!({ "pattern": "x", "output_mode": "lines" }),
            "invalid arguments: \"output_mode\" must be one of [\"content\",\"files_with_matches\",\"count\"]".to_owned(),
        ),
        (
            "grep",
            json!({ "pattern": "x", "type": "klingon" }),
            "unknown type \"klingon\": use one of ripgrep's types, such as rust, py, js, ts, go, java, c, cpp, ruby, sh, md, json (231 in all; `glob` filters by any pattern)".to_owned(),
        ),
    ];
    check_failures(&workspace, cases).await;
    for (arguments, prefix) in [
        (json!({ "pattern": "(" }), "invalid regular expression: "),
        (json!({ "pattern": "x", "glob": "{a" }), "invalid glob: "),
        (
            json!({ "pattern": "x", "head_limit": -1 }),
            "invalid arguments: ",
        ),
    ] {
        let invalid = workspace.call("grep", arguments).await;
        assert!(failure(&invalid).starts_with(prefix), "{invalid:?}");
    }
}

#[tokio::test]
async fn reads_may_overlap_and_writes_are_exclusive() {
    let workspace = Workspace::new();
    let cases = [
        ("read", json!({ "file_path": "a" }), ExecutionMode::Parallel),
        ("glob", json!({ "pattern": "*" }), ExecutionMode::Parallel),
        ("grep", json!({ "pattern": "x" }), ExecutionMode::Parallel),
        (
            "write",
            json!({ "file_path": "a", "content": "" }),
            ExecutionMode::Exclusive,
        ),
        (
            "edit",
            json!({ "file_path": "a", "old_string": "x", "new_string": "y" }),
            ExecutionMode::Exclusive,
        ),
        (
            "bash",
            json!({ "command": "true" }),
            ExecutionMode::Exclusive,
        ),
    ];
    for (tool, arguments, expected) in cases {
        let mode = workspace
            .runtime
            .execution_mode(tool, &arguments, None)
            .await;
        assert_eq!(mode, expected, "{tool}");
    }
}

#[tokio::test]
async fn builtins_are_off_unless_configured_and_register_all_or_nothing() {
    let runtime = ToolRuntime::new(&HostConfig::default());
    let ids = register_builtins(
        &runtime,
        &BuiltinsConfig::default(),
        &Default::default(),
        &ExecSessions::new(),
    )
    .unwrap();
    assert!(ids.is_empty());
    assert!(runtime.registry().visible(None).is_empty());

    let missing = BuiltinsConfig {
        fs: Some(FsConfig {
            root: "/nonexistent/dsh-root".to_owned(),
            stale_edits: true,
        }),
        bash: None,
        web: None,
    };
    let error: BuiltinsError = register_builtins(
        &runtime,
        &missing,
        &Default::default(),
        &ExecSessions::new(),
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "config.builtins.fs.root: cannot use \"/nonexistent/dsh-root\": No such file or directory (os error 2)"
    );

    let dir = tempfile::tempdir().unwrap();
    let taken = ToolDefinition::builder("grep")
        .output(json!({ "type": "null" }))
        .body(|_ctx| async { Ok(Value::Null.into()) })
        .unwrap();
    runtime.register(taken, None).unwrap();
    let fs_only = BuiltinsConfig {
        fs: Some(FsConfig {
            root: dir.path().display().to_string(),
            stale_edits: true,
        }),
        bash: None,
        web: None,
    };
    let error = register_builtins(
        &runtime,
        &fs_only,
        &Default::default(),
        &ExecSessions::new(),
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "tool \"grep\" is already registered in this layer"
    );
    let visible: Vec<String> = runtime
        .registry()
        .visible(None)
        .iter()
        .map(|tool| tool.definition.name.to_string())
        .collect();
    assert_eq!(visible, ["grep"]);
}

#[tokio::test]
async fn grep_names_the_files_it_did_not_search_for_their_size() {
    let workspace = Workspace::new();
    workspace.write("small.txt", "needle\n");
    let mut big = "needle\n".repeat(3 << 20).into_bytes();
    big.truncate((16 << 20) + 1);
    workspace.write_bytes("big.log", &big);
    let result = workspace.call("grep", json!({ "pattern": "needle" })).await;
    assert_eq!(
        value(&result),
        json!({ "mode": "files_with_matches", "paths": ["small.txt"], "truncated": false,
                "total": 1, "skipped": ["big.log"],
                "notSearched": { "tooLarge": 1, "binary": 0, "unreadable": 0 } })
    );
    assert_eq!(
        result.text(),
        "small.txt\n\n(not searched: larger than 16 MiB: big.log (use read with offset/limit on them))"
    );
    let nothing = workspace
        .call(
            "grep",
            json!({ "pattern": "absent", "output_mode": "count" }),
        )
        .await;
    assert_eq!(
        nothing.text(),
        "No matches found\n\n(not searched: larger than 16 MiB: big.log (use read with offset/limit on them))"
    );
}

/// A directory on the path swapped for a link to outside the root, back and forth, while
/// writes and reads go through it: the check and the open are one step, so nothing lands
/// outside and nothing outside is read.
#[tokio::test]
async fn a_directory_swapped_for_a_symlink_never_leads_a_write_or_read_outside() {
    let workspace = Workspace::new();
    std::fs::write(workspace.outside.join("f.txt"), "secret outside\n").unwrap();
    let inside = workspace.root.join("d");
    std::fs::create_dir(&inside).unwrap();
    std::fs::write(inside.join("f.txt"), "inside\n").unwrap();
    let (root, outside) = (workspace.root.clone(), workspace.outside.clone());
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapping = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};
            let (real, link) = (root.join("d"), root.join("d.link"));
            std::os::unix::fs::symlink(&outside, &link).unwrap();
            // Atomic exchanges: `d` is always there, as the directory or as the link.
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                renameat2(
                    AT_FDCWD,
                    &real,
                    AT_FDCWD,
                    &link,
                    RenameFlags::RENAME_EXCHANGE,
                )
                .unwrap();
            }
        })
    };
    let mut leaked = 0;
    for n in 0..3000 {
        let arguments = json!({ "file_path": "d/f.txt", "content": format!("write {n}\n") });
        workspace.call("write", arguments).await;
        let read = workspace
            .call("read", json!({ "file_path": "d/f.txt" }))
            .await;
        if read.text().contains("secret outside") {
            leaked += 1;
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    swapping.join().unwrap();
    assert_eq!(
        std::fs::read_to_string(workspace.outside.join("f.txt")).unwrap(),
        "secret outside\n"
    );
    assert_eq!(leaked, 0, "reads of the outside file");
}

/// `read` of a 512 MiB file that is one line keeps one cut line, never the line: the host's
/// peak memory grows by less than 64 MB. The file is 8 KiB of text and then a hole (zeros
/// past the binary probe), so it takes no disk and streams at memory speed.
#[test]
fn read_of_a_512_mib_single_line_file_stays_under_64_mb() {
    use crate::support::wire::{Framing, Host};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("one-line.txt");
    let file = std::fs::File::create(&path).unwrap();
    std::io::Write::write_all(&mut &file, &[b'x'; 8192]).unwrap();
    file.set_len(512 * 1024 * 1024).unwrap();
    let mut host = Host::initialized(
        Framing::Ndjson,
        json!({}),
        json!({ "builtins": { "fs": { "root": dir.path().display().to_string() } } }),
    );
    let before = host.peak_memory_kib();
    let answer = host.request(
        "tools/execute",
        json!({ "callId": "r", "name": "read",
                "arguments": { "file_path": "one-line.txt", "limit": 1 } }),
    );
    let growth_kib = host.peak_memory_kib().saturating_sub(before);
    let result = &answer["result"];
    assert_eq!(result["isError"], false, "{answer}");
    assert_eq!(result["value"]["totalLines"], 1, "{answer}");
    let text = result["value"]["lines"][0]["text"].as_str().unwrap();
    assert_eq!(text.len(), 2000, "the line is cut to 2000 characters");
    assert!(growth_kib < 64 * 1024, "peak grew by {growth_kib} KiB");
}

/// Every file tool hands its body a token that follows the call's signal (a deadline wrapper
/// adds one): the task that forwards it ends with the call. It had lived as long as the
/// host, one per call (about 1 KB each: 220 MB of a long-lived host after 200,000 `read`s).
#[tokio::test]
async fn finished_calls_leave_no_task_behind() {
    let workspace = Workspace::new();
    workspace.write("a.txt", "alpha\n");
    let metrics = tokio::runtime::Handle::current().metrics();
    let calls = [
        ("read", json!({ "file_path": "a.txt" })),
        ("read", json!({ "file_path": "missing.txt" })),
        ("glob", json!({ "pattern": "*.txt" })),
        ("grep", json!({ "pattern": "alpha" })),
    ];
    for (tool, arguments) in &calls {
        workspace.call(tool, arguments.clone()).await;
    }
    let before = metrics.num_alive_tasks();
    for _ in 0..25 {
        for (tool, arguments) in &calls {
            workspace.call(tool, arguments.clone()).await;
        }
    }
    // An aborted task ends when the scheduler next gets to it.
    for _ in 0..1000 {
        if metrics.num_alive_tasks() <= before {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert!(
        metrics.num_alive_tasks() <= before,
        "100 calls left {} tasks alive (before them: {before})",
        metrics.num_alive_tasks()
    );
}
