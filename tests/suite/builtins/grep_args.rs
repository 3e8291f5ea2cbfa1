//! `grep`'s and `glob`'s Claude Code arguments through the real binary over stdio: context
//! (`-A`/`-B`/`-C`), `-n`, `type`, `multiline`, `offset` and `head_limit` paging, the
//! counted files it did not search, newest-first ordering, and cancellation.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::wire::{Framing, Host};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, UNIX_EPOCH};

struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        Tree { _dir: dir, root }
    }

    fn write(&self, relative: &str, content: impl AsRef<[u8]>) -> &Tree {
        let path = self.root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
        self
    }

    /// Sets the modification time to `seconds` after the epoch.
    fn aged(&self, relative: &str, seconds: u64) {
        let file = std::fs::File::options()
            .write(true)
            .open(self.root.join(relative))
            .unwrap();
        file.set_modified(UNIX_EPOCH + Duration::from_secs(seconds))
            .unwrap();
    }

    fn config(&self) -> Value {
        json!({ "builtins": { "fs": { "root": self.root.display().to_string() } } })
    }

    fn host(&self) -> Host {
        Host::initialized(Framing::Ndjson, json!({}), self.config())
    }
}

fn call(host: &mut Host, name: &str, arguments: Value) -> Value {
    let response = host.request(
        "tools/execute",
        json!({ "callId": "c", "name": name, "arguments": arguments }),
    );
    response["result"].clone()
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap()
}

fn ok(host: &mut Host, name: &str, arguments: Value) -> Value {
    let result = call(host, name, arguments.clone());
    assert_eq!(result["isError"], false, "{arguments}: {result}");
    result
}

const NOTES: &str = "one\ntwo\nneedle a\nfour\nfive\nsix\nneedle b\neight\n";

#[test]
fn grep_shows_context_line_numbers_types_and_multiline_matches() {
    let tree = Tree::new();
    tree.write("notes.txt", NOTES)
        .write("code.rs", "fn main() {\n    let needle = 1;\n}\n")
        .write("tool.py", "needle = 2\n")
        .write("shape.rs", "struct A {\n    x: u8,\n}\nstruct B;\n");
    let mut host = tree.host();
    let content = |extra: Value| {
        let mut arguments =
            json!({ "pattern": "needle", "path": "notes.txt", "output_mode": "content" });
        for (key, value) in extra.as_object().unwrap() {
            arguments[key] = value.clone();
        }
        arguments
    };
    let line = |n: u64, text: &str| json!({ "lineNumber": n, "line": text });
    let context = |n: u64, text: &str| json!({ "lineNumber": n, "line": text, "context": true });

    let around = ok(&mut host, "grep", content(json!({ "-C": 1 })));
    assert_eq!(
        around["value"]["files"],
        json!([{ "path": "notes.txt", "matches": [
            context(2, "two"), line(3, "needle a"), context(4, "four"),
            context(6, "six"), line(7, "needle b"), context(8, "eight")
        ] }])
    );
    assert_eq!(around["value"]["total"], 6);
    assert_eq!(
        text(&around),
        "notes.txt-2-two\nnotes.txt:3:needle a\nnotes.txt-4-four\n--\nnotes.txt-6-six\nnotes.txt:7:needle b\nnotes.txt-8-eight"
    );
    let after = ok(&mut host, "grep", content(json!({ "-A": 1 })));
    assert_eq!(
        text(&after),
        "notes.txt:3:needle a\nnotes.txt-4-four\n--\nnotes.txt:7:needle b\nnotes.txt-8-eight"
    );
    // -B wins over -C for the lines before, as in rg.
    let before = ok(&mut host, "grep", content(json!({ "-B": 2, "-C": 0 })));
    assert_eq!(
        text(&before),
        "notes.txt-1-one\nnotes.txt-2-two\nnotes.txt:3:needle a\n--\nnotes.txt-5-five\nnotes.txt-6-six\nnotes.txt:7:needle b"
    );
    let bare = ok(&mut host, "grep", content(json!({ "-n": false })));
    assert_eq!(text(&bare), "notes.txt:needle a\nnotes.txt:needle b");
    assert_eq!(bare["value"]["lineNumbers"], false);
    assert_eq!(bare["value"]["files"][0]["matches"][0], line(3, "needle a"));
    // Context is for content mode only (rg ignores it with -l and -c).
    let listed = ok(
        &mut host,
        "grep",
        json!({ "pattern": "needle", "-C": 3, "output_mode": "count" }),
    );
    assert_eq!(text(&listed), "code.rs:1\nnotes.txt:2\ntool.py:1");

    for (kind, expected) in [("py", "tool.py"), ("rust", "code.rs"), ("txt", "notes.txt")] {
        let typed = ok(
            &mut host,
            "grep",
            json!({ "pattern": "needle", "type": kind }),
        );
        assert_eq!(typed["value"]["paths"], json!([expected]), "{kind}");
    }
    let unknown = call(
        &mut host,
        "grep",
        json!({ "pattern": "needle", "type": "rs" }),
    );
    assert_eq!(unknown["isError"], true);
    assert!(
        text(&unknown)
            .contains("unknown type \"rs\": use one of ripgrep's types, such as rust, py, js"),
        "{unknown}"
    );

    let spanning = json!({ "pattern": r"struct A \{.*?\}", "output_mode": "content" });
    let one_line = ok(&mut host, "grep", spanning.clone());
    assert_eq!(text(&one_line), "No matches found");
    let mut multiline = spanning;
    multiline["multiline"] = json!(true);
    let multiline = ok(&mut host, "grep", multiline);
    assert_eq!(
        text(&multiline),
        "shape.rs:1:struct A {\nshape.rs:2:    x: u8,\nshape.rs:3:}"
    );
    assert_eq!(multiline["value"]["total"], 3);
    let newline = call(&mut host, "grep", json!({ "pattern": r"A \{\n" }));
    assert!(
        text(&newline).starts_with("Error: invalid regular expression: "),
        "{newline}"
    );
    let counted = ok(
        &mut host,
        "grep",
        json!({ "pattern": r"\{\n\s+x", "multiline": true, "output_mode": "count" }),
    );
    assert_eq!(text(&counted), "shape.rs:1");
}

#[test]
fn grep_pages_with_offset_and_head_limit() {
    let tree = Tree::new();
    for n in 0..30 {
        let name = format!("f{n:02}.txt");
        tree.write(&name, "hit\n");
        tree.aged(&name, 1_000_000 + n);
    }
    tree.write("many.txt", "hit\n".repeat(5));
    tree.aged("many.txt", 900_000);
    tree.write("lots.txt", "lot\n".repeat(300));
    let mut host = tree.host();

    // Matching files, newest first, 10 at a time: the pages cover all 31 once.
    let mut seen = Vec::new();
    for page in 0..4 {
        let result = ok(
            &mut host,
            "grep",
            json!({ "pattern": "hit", "head_limit": 10, "offset": page * 10 }),
        );
        let value = &result["value"];
        assert_eq!(value["total"], 31);
        assert_eq!(value["truncated"], page < 3, "page {page}");
        let paths: Vec<String> = value["paths"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap().to_owned())
            .collect();
        if page == 0 {
            assert_eq!(paths[..2], ["f29.txt", "f28.txt"]);
            assert!(
                text(&result).ends_with(
                    "f20.txt\n\n(showing files 1 to 10 of 31; pass offset 10 for the next page, or narrow the search)"
                ),
                "{}",
                text(&result)
            );
        }
        if page == 3 {
            assert_eq!(paths, ["many.txt"]);
            assert_eq!(text(&result), "many.txt\n\n(showing files 31 to 31 of 31)");
        }
        seen.extend(paths);
    }
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!((seen.len(), unique.len()), (31, 31));

    // Lines page across files in path order; the pages join to the whole list.
    let whole = ok(
        &mut host,
        "grep",
        json!({ "pattern": "hit", "output_mode": "content", "head_limit": 0 }),
    );
    assert_eq!(whole["value"]["total"], 35);
    assert_eq!(whole["value"]["truncated"], false);
    let whole_lines: Vec<&str> = text(&whole).lines().collect();
    let mut paged = Vec::new();
    for offset in (0..35).step_by(8) {
        let page = ok(
            &mut host,
            "grep",
            json!({ "pattern": "hit", "output_mode": "content", "head_limit": 8, "offset": offset }),
        );
        assert_eq!(
            page["value"]["offset"],
            if offset == 0 {
                json!(null)
            } else {
                json!(offset)
            }
        );
        paged.extend(
            text(&page)
                .split("\n\n")
                .next()
                .unwrap()
                .lines()
                .map(str::to_owned),
        );
    }
    assert_eq!(paged, whole_lines);
    let counts = ok(
        &mut host,
        "grep",
        json!({ "pattern": "hit", "output_mode": "count", "offset": 29, "head_limit": 5 }),
    );
    assert_eq!(
        counts["value"]["counts"],
        json!([{ "path": "f29.txt", "count": 1 }, { "path": "many.txt", "count": 5 }])
    );
    let past = ok(&mut host, "grep", json!({ "pattern": "hit", "offset": 40 }));
    assert_eq!(text(&past), "No files past offset 40 (there are 31)");

    // Without head_limit, 250 entries (Claude Code's default); 0 keeps them all.
    let default = ok(
        &mut host,
        "grep",
        json!({ "pattern": "lot", "output_mode": "content" }),
    );
    assert_eq!(
        default["value"]["files"][0]["matches"]
            .as_array()
            .unwrap()
            .len(),
        250
    );
    assert_eq!(
        (&default["value"]["total"], &default["value"]["truncated"]),
        (&json!(300), &json!(true))
    );
    let all = ok(
        &mut host,
        "grep",
        json!({ "pattern": "lot", "output_mode": "content", "head_limit": 0 }),
    );
    assert_eq!(
        all["value"]["files"][0]["matches"]
            .as_array()
            .unwrap()
            .len(),
        300
    );
}

/// Runs the host without the capabilities that let root read any file, so a mode-000 file
/// and directory are unreadable to it as to anyone else.
fn host_that_obeys_file_modes(tree: &Tree) -> Host {
    let binary = env!("CARGO_BIN_EXE_dsh-tools");
    let mut command = if nix::unistd::geteuid().is_root() {
        let mut command = Command::new("setpriv");
        command.args([
            "--bounding-set=-dac_override,-dac_read_search",
            "--",
            binary,
        ]);
        command
    } else {
        Command::new(binary)
    };
    command.args(["serve", "--framing", "ndjson"]);
    let mut host = Host::spawn_command(command, Framing::Ndjson);
    host.initialize(json!({}), tree.config());
    host
}

fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn grep_counts_every_file_it_did_not_search() {
    let tree = Tree::new();
    tree.write("ok.txt", "needle\n")
        .write("bin.dat", b"needle\0rest\n")
        .write("locked.txt", "needle\n")
        .write("closed/inner.txt", "needle\n");
    // A NUL past the first 64 KiB: the match before it counts, the one after does not.
    let mut late = b"needle\n".to_vec();
    late.extend("filler line\n".repeat(8_000).into_bytes());
    late.extend(b"\0needle\n");
    tree.write("late.dat", &late);
    let mut big = "needle\n".repeat(3 << 20).into_bytes();
    big.truncate((16 << 20) + 1);
    tree.write("big.log", &big);
    chmod(&tree.root.join("locked.txt"), 0o000);
    chmod(&tree.root.join("closed"), 0o000);
    let mut host = host_that_obeys_file_modes(&tree);
    let counted = ok(
        &mut host,
        "grep",
        json!({ "pattern": "needle", "output_mode": "count" }),
    );
    // As `rg -l`: a file is listed at its first match, before any NUL past it is met.
    let listed = ok(&mut host, "grep", json!({ "pattern": "needle" }));
    chmod(&tree.root.join("closed"), 0o755);
    // As `rg -c`: the count of a file whose search stopped at a NUL is dropped.
    assert_eq!(
        counted["value"],
        json!({
            "mode": "count",
            "counts": [{ "path": "ok.txt", "count": 1 }],
            "truncated": false,
            "total": 1,
            "skipped": ["big.log"],
            "notSearched": { "tooLarge": 1, "binary": 2, "unreadable": 2 }
        })
    );
    assert_eq!(
        text(&counted),
        "ok.txt:1\n\n(not searched: larger than 16 MiB: big.log (use read with offset/limit on them); 2 binary files; 2 unreadable)"
    );
    let mut paths = listed["value"]["paths"].as_array().unwrap().clone();
    paths.sort_by_key(|p| p.as_str().unwrap().to_owned());
    assert_eq!(paths, [json!("late.dat"), json!("ok.txt")]);
    assert_eq!(
        listed["value"]["notSearched"],
        json!({ "tooLarge": 1, "binary": 1, "unreadable": 2 })
    );
}

#[test]
fn glob_lists_newest_first_and_skips_what_rg_skips() {
    let tree = Tree::new();
    tree.write(".gitignore", "target/\n")
        .write("a.rs", "")
        .write("src/b.rs", "")
        .write("src/deep/c.rs", "")
        .write("target/d.rs", "")
        .write(".hidden/e.rs", "")
        .write("notes.md", "");
    for (n, path) in ["src/deep/c.rs", "a.rs", "src/b.rs"]
        .into_iter()
        .enumerate()
    {
        tree.aged(path, 1_000_000 + n as u64);
    }
    std::os::unix::fs::symlink("a.rs", tree.root.join("link.rs")).unwrap();
    let mut host = tree.host();
    let result = ok(&mut host, "glob", json!({ "pattern": "**/*.rs" }));
    assert_eq!(
        result["value"],
        json!({ "paths": ["src/b.rs", "a.rs", "src/deep/c.rs"], "truncated": false, "total": 3 })
    );
    let within = ok(
        &mut host,
        "glob",
        json!({ "pattern": "*.rs", "path": "src" }),
    );
    assert_eq!(
        within["value"]["paths"],
        json!(["src/b.rs", "src/deep/c.rs"])
    );
}

fn threads(host: &Host) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{}/status", host.pid())).unwrap();
    let line = status.lines().find(|l| l.starts_with("Threads:")).unwrap();
    line["Threads:".len()..].trim().parse().unwrap()
}

/// Polls `condition` every millisecond until it holds or `within` passes.
fn eventually(within: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + within;
    while std::time::Instant::now() < deadline {
        if condition() {
            return true;
        }
        std::thread::park_timeout(Duration::from_millis(1));
    }
    condition()
}

/// A grep cancelled by the client while its walker threads run answers as aborted, its
/// walker threads end, and the host serves the next call.
#[test]
fn a_cancelled_grep_answers_aborted_and_its_walk_ends() {
    let tree = Tree::new();
    for n in 0..1_500 {
        tree.write(
            &format!("d{}/f{n}.txt", n % 30),
            "filler text\n".repeat(2_000),
        );
    }
    tree.write("small.txt", "needle\n");
    let mut host = tree.host();
    // The blocking thread a grep runs on stays; the walker's threads come and go.
    let warm = ok(
        &mut host,
        "grep",
        json!({ "pattern": "needle", "path": "small.txt" }),
    );
    assert_eq!(text(&warm), "small.txt");
    let idle = threads(&host);
    let id = host.start(
        "tools/execute",
        json!({ "callId": "c", "name": "grep", "arguments": { "pattern": r"\w+\s+\w+$", "output_mode": "count" } }),
    );
    assert!(
        eventually(Duration::from_secs(30), || threads(&host) > idle),
        "the walk never started"
    );
    host.send(&json!({ "jsonrpc": "2.0", "method": "$/cancelRequest", "params": { "id": id } }));
    let response = host.response_to(&id);
    assert_eq!(
        response["result"]["error"]["info"]["code"], "ABORTED",
        "{response}"
    );
    assert!(
        eventually(Duration::from_secs(10), || threads(&host) <= idle),
        "walker threads still running: {} (idle: {idle})",
        threads(&host)
    );
    let next = ok(
        &mut host,
        "grep",
        json!({ "pattern": "needle", "path": "small.txt" }),
    );
    assert_eq!(text(&next), "small.txt");
}
