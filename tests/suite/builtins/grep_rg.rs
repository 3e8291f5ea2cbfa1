//! `grep` and `glob` give `rg`'s results on a generated tree (the bench's generator, smaller):
//! the same files, the same counts per file, the same matching and context lines, with
//! `.gitignore`/`.ignore`/`.rgignore` at several depths, hidden files, binary files (a NUL
//! at the start and after some matches), links, a `type` filter, `glob` filters, `-i`,
//! context and multiline. Skipped (passing) when `rg` is not installed; `.ci/setup`
//! installs it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../../benches/search_support/tree.rs"]
mod tree;

use crate::support::builtins::{Workspace, value};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

fn rg_installed() -> bool {
    Command::new("rg").arg("--version").output().is_ok()
}

/// `rg ARGS` run in `root`; its standard output (exit 1, no match, is an empty answer).
fn rg(root: &Path, args: &[&str]) -> String {
    let out = Command::new("rg")
        .args(args)
        .current_dir(root)
        .output()
        .unwrap();
    assert!(
        out.status.code().is_some_and(|code| code <= 1),
        "rg {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn workspace() -> Workspace {
    let workspace = Workspace::new();
    let spec = tree::Spec {
        files: 1_200,
        bytes_per_file: 3_000,
        seed: 42,
    };
    tree::generate(&workspace.root, spec).unwrap();
    workspace
}

/// A line of either side: path, line number, text, whether it is context.
type Line = (String, u64, String, bool);

fn our_lines(result: &Value) -> Vec<Line> {
    let mut lines = Vec::new();
    for file in result["files"].as_array().unwrap() {
        for m in file["matches"].as_array().unwrap() {
            lines.push((
                file["path"].as_str().unwrap().to_owned(),
                m["lineNumber"].as_u64().unwrap(),
                m["line"].as_str().unwrap().to_owned(),
                m["context"] == true,
            ));
        }
    }
    lines.sort();
    lines
}

/// `rg --json`'s match and context lines, a multi-line match split into its lines.
fn rg_lines(json_lines: &str) -> Vec<Line> {
    let mut lines = Vec::new();
    for message in json_lines.lines() {
        let message: Value = serde_json::from_str(message).unwrap();
        let context = match message["type"].as_str().unwrap() {
            "match" => false,
            "context" => true,
            _ => continue,
        };
        let data = &message["data"];
        let path = data["path"]["text"].as_str().unwrap().to_owned();
        let first = data["line_number"].as_u64().unwrap();
        let text = data["lines"]["text"].as_str().unwrap();
        for (n, line) in text.split_inclusive('\n').enumerate() {
            let line = line.strip_suffix('\n').unwrap_or(line);
            lines.push((path.clone(), first + n as u64, line.to_owned(), context));
        }
    }
    lines.sort();
    lines
}

fn set(text: &str) -> BTreeSet<String> {
    text.lines().map(str::to_owned).collect()
}

async fn grep(workspace: &Workspace, mut arguments: Value) -> Value {
    arguments["head_limit"] = json!(0);
    let result = workspace.call("grep", arguments.clone()).await;
    assert!(!result.is_error(), "{arguments}: {}", result.text());
    value(&result)
}

/// Each filter set as our arguments and as rg's flags.
fn filters() -> Vec<(Value, Vec<&'static str>)> {
    vec![
        (json!({}), vec![]),
        (json!({ "-i": true }), vec!["-i"]),
        (json!({ "type": "rust" }), vec!["-t", "rust"]),
        (json!({ "type": "py" }), vec!["-t", "py"]),
        (json!({ "glob": "*.md" }), vec!["-g", "*.md"]),
        (
            json!({ "glob": "pkg000/src/**/*.rs" }),
            vec!["-g", "pkg000/src/**/*.rs"],
        ),
        (
            json!({ "glob": "*.rs", "-i": true }),
            vec!["-g", "*.rs", "-i"],
        ),
        (json!({ "path": "pkg001" }), vec![]),
    ]
}

#[tokio::test]
async fn grep_finds_what_rg_finds_in_every_mode() {
    if !rg_installed() {
        return;
    }
    let workspace = workspace();
    let root = workspace.root.clone();
    let (mut compared, mut nonempty) = (0, 0);
    for pattern in [r"fn\s+parse_\w+", "TODO", "unsafe impl Send for"] {
        for (extra, flags) in filters() {
            let with = |mut arguments: Value| {
                arguments["pattern"] = json!(pattern);
                for (key, value) in extra.as_object().unwrap() {
                    arguments[key] = value.clone();
                }
                arguments
            };
            let rg_args = |mode: &[&'static str]| {
                let mut args: Vec<&str> = mode.to_vec();
                args.extend(flags.iter().copied());
                args.push("-e");
                args.push(pattern);
                args.extend(extra["path"].as_str());
                args
            };
            let label = format!("{pattern} {extra}");

            let files = grep(&workspace, with(json!({}))).await;
            let ours: BTreeSet<String> = files["paths"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_str().unwrap().to_owned())
                .collect();
            assert_eq!(ours, set(&rg(&root, &rg_args(&["-l"]))), "{label}: files");
            nonempty += usize::from(!ours.is_empty());

            let counts = grep(&workspace, with(json!({ "output_mode": "count" }))).await;
            let ours: BTreeMap<String, u64> = counts["counts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    (
                        c["path"].as_str().unwrap().to_owned(),
                        c["count"].as_u64().unwrap(),
                    )
                })
                .collect();
            let theirs: BTreeMap<String, u64> = rg(&root, &rg_args(&["-c"]))
                .lines()
                .map(|line| {
                    let (path, count) = line.rsplit_once(':').unwrap();
                    (path.to_owned(), count.parse().unwrap())
                })
                .collect();
            assert_eq!(ours, theirs, "{label}: counts");

            let content = grep(&workspace, with(json!({ "output_mode": "content" }))).await;
            let theirs = rg_lines(&rg(&root, &rg_args(&["--json"])));
            assert_eq!(our_lines(&content), theirs, "{label}: lines");
            compared += 1;
        }
    }
    assert_eq!(compared, 24);
    assert!(nonempty >= 18, "only {nonempty} searches found anything");
}

#[tokio::test]
async fn grep_context_and_multiline_lines_are_rgs() {
    if !rg_installed() {
        return;
    }
    let workspace = workspace();
    let root = workspace.root.clone();
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({ "pattern": "TODO", "-C": 2 }),
            vec!["-C", "2", "-e", "TODO"],
        ),
        (
            json!({ "pattern": r"unsafe impl \w+", "-A": 3, "-B": 1, "type": "rust" }),
            vec!["-A", "3", "-B", "1", "-t", "rust", "-e", r"unsafe impl \w+"],
        ),
        (
            json!({ "pattern": r"pub struct \w+ \{\n\s+pub \w+", "multiline": true }),
            vec![
                "-U",
                "--multiline-dotall",
                "-e",
                r"pub struct \w+ \{\n\s+pub \w+",
            ],
        ),
        (
            json!({ "pattern": r"struct Alpha\d+ \{.*?\}", "multiline": true, "-i": true }),
            vec![
                "-U",
                "--multiline-dotall",
                "-i",
                "-e",
                r"struct Alpha\d+ \{.*?\}",
            ],
        ),
    ];
    for (mut arguments, flags) in cases {
        arguments["output_mode"] = json!("content");
        let ours = our_lines(&grep(&workspace, arguments.clone()).await);
        let mut args = vec!["--json"];
        args.extend(flags);
        let theirs = rg_lines(&rg(&root, &args));
        assert!(!theirs.is_empty(), "{arguments}");
        assert_eq!(ours, theirs, "{arguments}");
    }
}

#[tokio::test]
async fn glob_lists_what_rg_files_lists() {
    if !rg_installed() {
        return;
    }
    let workspace = workspace();
    let root = workspace.root.clone();
    for pattern in [
        "**/*.rs",
        "*.md",
        "pkg000/**/*.py",
        "**/inner/*",
        "*.{js,py}",
    ] {
        let result = workspace.call("glob", json!({ "pattern": pattern })).await;
        let result = value(&result);
        let theirs = set(&rg(&root, &["--files", "-g", pattern]));
        assert_eq!(result["total"], theirs.len() as u64, "{pattern}");
        let shown: BTreeSet<String> = result["paths"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap().to_owned())
            .collect();
        assert!(shown.is_subset(&theirs), "{pattern}");
        assert_eq!(shown.len(), theirs.len().min(100), "{pattern}");
    }
}
