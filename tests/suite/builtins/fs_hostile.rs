//! The file tools against a hostile command or a full disk, through the real binary: a
//! link, a FIFO or a device swapped in while a call runs is never followed nor waited on, a
//! write that fails leaves the old file whole, and an absurdly long path costs nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::wire::{Framing, Host};
use nix::fcntl::{AT_FDCWD, RenameFlags, renameat2};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

/// Stale-edit protection's refusals (Claude Code's words).
const NOT_READ: &str = "File has not been read yet. Read it first before writing to it.";
const MODIFIED: &str = "File has been modified since read, either by the user or by a linter. \
                        Read it again before attempting to write it.";

/// `base/root` (the fs root) and `base/outside` (with `secret.txt`).
struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
}

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (root, outside) = (base.join("root"), base.join("outside"));
        std::fs::create_dir(&root).unwrap();
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("secret.txt"), "needle SECRET outside\n").unwrap();
        Tree {
            _dir: dir,
            root,
            outside,
        }
    }

    fn config(&self) -> Value {
        json!({ "builtins": { "fs": { "root": self.root.display().to_string() } } })
    }
}

fn call(host: &mut Host, name: &str, arguments: Value) -> Value {
    let response = host.request(
        "tools/execute",
        json!({ "callId": "c", "name": name, "arguments": arguments }),
    );
    response["result"].clone()
}

fn error_text(result: &Value) -> String {
    assert_eq!(result["isError"], true, "{result}");
    result["content"][0]["text"].as_str().unwrap().to_owned()
}

/// A thread swapping things in at `path` until the returned flag is set.
fn swapping(body: impl Fn() + Send + 'static) -> (Arc<AtomicBool>, JoinHandle<()>) {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::spawn(move || {
        while !flag.load(Ordering::Relaxed) {
            body();
        }
    });
    (stop, thread)
}

/// Exchanges the names `a` and `b` (atomically, `RENAME_EXCHANGE`) until stopped.
fn exchanging(a: std::path::PathBuf, b: std::path::PathBuf) -> (Arc<AtomicBool>, JoinHandle<()>) {
    swapping(move || {
        renameat2(AT_FDCWD, &a, AT_FDCWD, &b, RenameFlags::RENAME_EXCHANGE).unwrap();
    })
}

/// A link to a file outside the root, exchanged over a listed file again and again while
/// `grep` runs: 500 files listed before it keep the window between listing and opening
/// wide. The file is opened beneath the root without following links, so the outside
/// content never comes back (it did on 9 of 3,000 calls when opened by path).
#[test]
fn grep_never_returns_the_content_of_a_link_swapped_in_after_the_listing() {
    let tree = Tree::new();
    for n in 0..500 {
        std::fs::write(tree.root.join(format!("a{n:03}.txt")), "filler\n").unwrap();
    }
    std::fs::write(tree.root.join("zz.txt"), "needle inside\n").unwrap();
    let (listed, link) = (tree.root.join("zz.txt"), tree.root.join("zz.link"));
    std::os::unix::fs::symlink(tree.outside.join("secret.txt"), &link).unwrap();
    let mut host = Host::initialized(Framing::Ndjson, json!({}), tree.config());
    let (stop, thread) = exchanging(listed, link);
    let (mut leaked, mut found) = (0, 0);
    for _ in 0..300 {
        let result = call(
            &mut host,
            "grep",
            json!({ "pattern": "needle", "output_mode": "content" }),
        );
        assert_eq!(result["isError"], false, "{result}");
        let text = result["content"][0]["text"].as_str().unwrap();
        leaked += usize::from(text.contains("SECRET"));
        found += usize::from(text.contains("needle inside"));
    }
    stop.store(true, Ordering::Relaxed);
    thread.join().unwrap();
    assert_eq!(
        leaked, 0,
        "calls that returned the outside file ({found} found the inside one)"
    );
}

/// `f.txt` is a FIFO half of the time and a regular file the other half (each put in place by
/// a rename): `write`, `edit`, `grep` and `read` all answer, a FIFO met refused as "not a
/// regular file", never opened for writing or read (which would wait for a peer forever).
#[test]
fn a_fifo_swapped_in_never_hangs_a_file_tool() {
    let tree = Tree::new();
    let target = tree.root.join("f.txt");
    std::fs::write(&target, "old text\n").unwrap();
    let mut host = Host::initialized(Framing::Ndjson, json!({}), tree.config());
    let root = tree.root.clone();
    let (stop, thread) = swapping(move || {
        let (fifo, file) = (root.join("fifo.new"), root.join("file.new"));
        let _ = nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600));
        std::fs::rename(&fifo, root.join("f.txt")).unwrap();
        std::fs::write(&file, "old text\n").unwrap();
        std::fs::rename(&file, root.join("f.txt")).unwrap();
    });
    let mut refused = 0;
    for round in 0..150 {
        let calls = [
            (
                "write",
                json!({ "file_path": "f.txt", "content": format!("old text {round}\n") }),
            ),
            (
                "edit",
                json!({ "file_path": "f.txt", "old_string": "old", "new_string": "new" }),
            ),
            ("grep", json!({ "pattern": "text", "path": "f.txt" })),
            ("grep", json!({ "pattern": "text" })),
            ("read", json!({ "file_path": "f.txt" })),
        ];
        for (tool, arguments) in calls {
            // `request` fails the test when no answer comes within the watchdog.
            let result = call(&mut host, tool, arguments);
            if result["isError"] == true {
                let text = error_text(&result);
                if text == "Error: old_string was not found in \"f.txt\"" {
                    continue; // an edit met its own result before the next swap
                }
                // The swaps change the file between the read and the write: stale-edit
                // protection refuses those (and the first write, before any read).
                if text == format!("Error: {NOT_READ}") || text == format!("Error: {MODIFIED}") {
                    continue;
                }
                assert_eq!(text, "Error: \"f.txt\" is not a regular file", "{tool}");
                refused += 1;
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    thread.join().unwrap();
    assert!(refused > 0, "no call met the FIFO");
}

/// A link to `/dev/zero` exchanged over a listed file: `grep` never follows it (it read
/// until allocation failed, past its 16 MiB cap), and the host's peak memory stays put.
#[test]
fn grep_never_reads_a_device_swapped_in() {
    let tree = Tree::new();
    std::fs::write(tree.root.join("z.txt"), "needle\n").unwrap();
    let (listed, link) = (tree.root.join("z.txt"), tree.root.join("z.link"));
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    let mut host = Host::initialized(Framing::Ndjson, json!({}), tree.config());
    let before = host.peak_memory_kib();
    let (stop, thread) = exchanging(listed, link);
    for _ in 0..300 {
        let result = call(&mut host, "grep", json!({ "pattern": "needle" }));
        assert_eq!(result["isError"], false, "{result}");
    }
    stop.store(true, Ordering::Relaxed);
    thread.join().unwrap();
    let growth_kib = host.peak_memory_kib().saturating_sub(before);
    assert!(growth_kib < 32 * 1024, "peak grew by {growth_kib} KiB");
}

/// The host under a file-size limit (`ulimit -f`, SIGXFSZ ignored: a write past it fails
/// with EFBIG, as one on a full disk fails with ENOSPC).
fn host_with_file_size_limit(tree: &Tree) -> Host {
    let mut command = Command::new("sh");
    command.args([
        "-c",
        "trap '' XFSZ; ulimit -f 1024 && exec \"$0\" serve --framing ndjson",
        env!("CARGO_BIN_EXE_dsh-tools"),
    ]);
    let mut host = Host::spawn_command(command, Framing::Ndjson);
    host.initialize(json!({}), tree.config());
    host
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// `edit` and `write` whose new text cannot be written whole (the disk "fills" within 1 MiB):
/// the error says why, the old file is whole and nothing else is left in its directory. The
/// old `edit` truncated the file first and lost everything past what fitted.
#[test]
fn a_write_that_fails_part_way_leaves_the_old_file_whole() {
    let tree = Tree::new();
    let old: String = (0..10_000).map(|n| format!("line {n}\n")).collect();
    let old = format!("{old}MARKER\n");
    let path = tree.root.join("big.txt");
    std::fs::write(&path, &old).unwrap();
    let mut host = host_with_file_size_limit(&tree);
    let read = call(&mut host, "read", json!({ "file_path": "big.txt" }));
    assert_eq!(read["isError"], false, "{read}");
    let huge = "y".repeat(3 << 20);
    let calls = [
        (
            "edit",
            json!({ "file_path": "big.txt", "old_string": "MARKER", "new_string": huge }),
        ),
        ("write", json!({ "file_path": "big.txt", "content": huge })),
    ];
    for (tool, arguments) in calls {
        let result = call(&mut host, tool, arguments);
        let text = error_text(&result);
        assert_eq!(
            text, "Error: cannot write \"big.txt\": File too large (os error 27)",
            "{tool}"
        );
        assert!(
            std::fs::read_to_string(&path).unwrap() == old,
            "{tool} changed the file"
        );
        assert_eq!(
            names_in(&tree.root),
            ["big.txt"],
            "{tool} left a file behind"
        );
    }
    // What fits is written, as before.
    let small = call(
        &mut host,
        "edit",
        json!({ "file_path": "big.txt", "old_string": "MARKER", "new_string": "DONE" }),
    );
    assert_eq!(small["isError"], false, "{small}");
    assert!(std::fs::read_to_string(&path).unwrap().ends_with("DONE\n"));
}

/// `edit` and `write` replace the file by a new one: its mode (and, for a privileged host,
/// its owner) is kept.
#[test]
fn a_replaced_file_keeps_its_mode_and_owner() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let tree = Tree::new();
    let path = tree.root.join("script.sh");
    std::fs::write(&path, "echo old\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o750)).unwrap();
    let privileged = nix::unistd::geteuid().is_root();
    if privileged {
        std::os::unix::fs::chown(&path, Some(1234), Some(2345)).unwrap();
    }
    let mut host = Host::initialized(Framing::Ndjson, json!({}), tree.config());
    let read = call(&mut host, "read", json!({ "file_path": "script.sh" }));
    assert_eq!(read["isError"], false, "{read}");
    let edited = call(
        &mut host,
        "edit",
        json!({ "file_path": "script.sh", "old_string": "old", "new_string": "new" }),
    );
    assert_eq!(edited["isError"], false, "{edited}");
    let written = call(
        &mut host,
        "write",
        json!({ "file_path": "script.sh", "content": "echo newer\n" }),
    );
    assert_eq!(written["value"]["created"], false, "{written}");
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "echo newer\n");
    assert_eq!(meta.permissions().mode() & 0o7777, 0o750);
    if privileged {
        assert_eq!((meta.uid(), meta.gid()), (1234, 2345));
    }
}

/// A 6 MB path (`x/../` a million times and more) is refused at once, naming the limit; it
/// was resolved component by component first (a 30 MB one: 9.7 s and 856 MiB).
#[test]
fn a_path_longer_than_path_max_is_refused_before_any_work() {
    let tree = Tree::new();
    let mut host = Host::initialized(Framing::Ndjson, json!({}), tree.config());
    let path = "x/../".repeat(1_200_000) + "a.txt";
    let before = host.peak_memory_kib();
    for tool in ["read", "write", "edit", "grep"] {
        let arguments = match tool {
            "read" => json!({ "file_path": path }),
            "write" => json!({ "file_path": path, "content": "x" }),
            "edit" => json!({ "file_path": path, "old_string": "a", "new_string": "b" }),
            _ => json!({ "pattern": "a", "path": path }),
        };
        let result = call(&mut host, tool, arguments);
        assert_eq!(
            error_text(&result),
            "Error: refused a path of 6000005 bytes: paths are at most 4095 bytes (PATH_MAX)",
            "{tool}"
        );
    }
    let growth_kib = host.peak_memory_kib().saturating_sub(before);
    assert!(growth_kib < 96 * 1024, "peak grew by {growth_kib} KiB");
}
