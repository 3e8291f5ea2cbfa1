//! Tidy checks over the sources, as rust-analyzer's `tidy.rs` does: imports follow the layer
//! table (`layers.txt`, shown in ARCHITECTURE.md), every file opens with `//!`, no
//! non-test source file grows past 600 lines, and vendor/v8x is its import plus its patches.

mod imports;
mod vendored;

use imports::{Layers, violations};
use std::path::{Path, PathBuf};

const LAYERS: &str = include_str!("layers.txt");
/// Longest non-test source file, in lines.
const MAX_LINES: usize = 600;
const TABLE_START: &str = "<!-- layers: generated from tests/suite/tidy/layers.txt -->";
const TABLE_END: &str = "<!-- layers: end -->";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`, as (path relative to `dir`, text), sorted.
fn sources(dir: &Path) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).unwrap().map(Result::unwrap) {
            let path = entry.path();
            if path.is_dir() {
                // Installed MCP servers (node_modules, a venv) are not ours.
                if !path.ends_with("mcp-servers") {
                    pending.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                found.push((relative, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    found.sort();
    found
}

#[test]
fn imports_follow_the_layer_table() {
    let layers = Layers::parse(LAYERS).unwrap();
    let found = violations(&layers, &sources(&root().join("src")));
    assert!(
        found.is_empty(),
        "imports against the layer table:\n{}",
        found.join("\n")
    );
}

#[test]
fn a_wrong_import_is_caught() {
    let layers = Layers::parse(LAYERS).unwrap();
    let tree = [
        (
            "json/mod.rs",
            "//! JSON.\nuse crate::frontends::rpc::Server;\n",
        ),
        (
            "builtins/mod.rs",
            "//! Peers.\nfn f() { crate::mcp::McpHost::new(); }\n",
        ),
        (
            "runtime/js/slot.rs",
            "//! Up through super.\nuse super::super::super::code_mode::CodeMode;\n",
        ),
        (
            "tool/mod.rs",
            "//! Grouped.\nuse crate::{json, registry::Registry};\n",
        ),
        ("elsewhere.rs", "//! Unplaced.\n"),
        // Allowed: downward, within a unit, a parent re-exporting its child, comments.
        (
            "code_mode/mod.rs",
            "//! Ok.\nuse crate::runtime::IsolatePool;\n// crate::frontends\n",
        ),
        (
            "runtime/mod.rs",
            "//! Ok.\nmod js;\npub use js::IsolatePool;\n",
        ),
        (
            "runtime/js/pool.rs",
            "//! Ok.\nuse super::slot::Slot;\nuse crate::runtime::contract::RunLimits;\n",
        ),
    ];
    let tree: Vec<(String, String)> = tree
        .iter()
        .map(|(path, text)| ((*path).to_owned(), (*text).to_owned()))
        .collect();
    assert_eq!(
        violations(&layers, &tree),
        [
            "builtins/mod.rs:2: `builtins` imports its peer `mcp`",
            "elsewhere.rs: module `elsewhere` has no row in layers.txt",
            "json/mod.rs:2: `json` imports `frontends::rpc`, a higher layer",
            "runtime/js/slot.rs:2: `runtime::js` imports `code_mode`, a higher layer",
            "tool/mod.rs:2: `tool` imports `registry`, a higher layer",
        ]
    );
}

#[test]
fn every_source_file_opens_with_a_module_comment() {
    let mut missing = Vec::new();
    for dir in ["src", "protocol/src", "tests", "benches"] {
        for (path, text) in sources(&root().join(dir)) {
            if !text.starts_with("//!") {
                missing.push(format!("{dir}/{path}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "files without a `//!` opening: {missing:?}"
    );
}

#[test]
fn no_non_test_source_file_is_longer_than_600_lines() {
    let mut long = Vec::new();
    for dir in ["src", "protocol/src"] {
        for (path, text) in sources(&root().join(dir)) {
            let is_test = path.ends_with("tests.rs") || path.split('/').any(|part| part == "tests");
            let lines = text.lines().count();
            if !is_test && lines > MAX_LINES {
                long.push(format!("{dir}/{path}: {lines} lines"));
            }
        }
    }
    assert!(long.is_empty(), "split these files: {long:?}");
}

/// ARCHITECTURE.md's table is generated from layers.txt; a stale one is rewritten and the
/// test fails, so the fix is to commit the rewritten file.
#[test]
fn architecture_md_shows_the_layer_table() {
    let layers = Layers::parse(LAYERS).unwrap();
    let path = root().join("ARCHITECTURE.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let (Some(start), Some(end)) = (text.find(TABLE_START), text.find(TABLE_END)) else {
        panic!("ARCHITECTURE.md lacks the markers {TABLE_START} … {TABLE_END}");
    };
    let generated = format!("{TABLE_START}\n{}", layers.markdown());
    if text[start..end] != generated {
        let updated = format!("{}{generated}{}", &text[..start], &text[end..]);
        std::fs::write(&path, updated).unwrap();
        panic!("ARCHITECTURE.md's layer table was stale: rewritten from layers.txt, commit it");
    }
}
