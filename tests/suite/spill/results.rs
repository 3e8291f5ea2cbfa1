//! The built-in spill policy over whole results: a client tool's megabyte, the outer
//! `run_code` result and its failure, the byte budget, an unusable directory, spilling off,
//! and the directory's removal when the host exits.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::spill::{
    READ_MORE, THRESHOLD, call_answering, host_spilling_into, marker_path, numbered_lines,
    register_text_tool, spill_meta, text_of,
};
use crate::support::wire::{Framing, Host};
use serde_json::json;

#[test]
fn a_client_tools_megabyte_is_spilled_with_its_value_intact() {
    let base = tempfile::tempdir().unwrap();
    let dir = base.path().join("spill");
    let mut host = host_spilling_into(&dir, json!({}), json!({}));
    register_text_tool(&mut host, "big");
    let text = numbered_lines("line", 100_000);
    assert!(text.len() > 1_000_000);
    let result = call_answering(&mut host, "c1", "big", &text);
    assert_eq!(result["isError"], false);
    assert_eq!(result["value"], json!(text), "the value is untouched");
    let (path, bytes) = spill_meta(&result);
    assert_eq!(bytes, text.len() as u64);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    assert!(path.starts_with(dir.canonicalize().unwrap()), "{path:?}");
    let preview = text_of(&result);
    assert!(preview.len() <= THRESHOLD, "{} bytes", preview.len());
    assert!(preview.starts_with("line 0\nline 1\n"), "{preview}");
    assert!(preview.contains("line 99999\n"), "the tail is shown");
    assert_eq!(marker_path(&preview), path);
    assert!(
        preview.contains(&format!(
            "the whole text ({} bytes, 100000 lines)",
            text.len()
        )),
        "{preview}"
    );
    assert!(preview.ends_with(READ_MORE), "{preview}");
    // The observers see the final (bounded) result too.
    let notified = host.drain("tools/result");
    assert_eq!(notified.len(), 1);
    assert_eq!(notified[0]["params"]["result"], result);
    let mode = std::fs::metadata(&path).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777,
        0o600
    );
}

#[test]
fn results_within_the_threshold_and_results_with_spilling_off_are_untouched() {
    let base = tempfile::tempdir().unwrap();
    let dir = base.path().join("spill");
    let mut host = host_spilling_into(&dir, json!({}), json!({}));
    register_text_tool(&mut host, "t");
    let small = "x".repeat(THRESHOLD);
    let result = call_answering(&mut host, "c1", "t", &small);
    assert_eq!(
        result["content"],
        json!([{ "type": "text", "text": small }])
    );
    assert_eq!(result.get("meta"), None);
    assert!(!dir.exists(), "nothing was spilled, so nothing was created");

    let mut off = host_spilling_into(&dir, json!({}), json!({ "spill": { "thresholdBytes": 0 } }));
    register_text_tool(&mut off, "t");
    let large = "y".repeat(200_000);
    let result = call_answering(&mut off, "c1", "t", &large);
    assert_eq!(
        result["content"],
        json!([{ "type": "text", "text": large }])
    );
    assert!(!dir.exists());
}

#[test]
fn the_outer_run_code_result_and_its_failure_are_spilled_without_the_program() {
    let base = tempfile::tempdir().unwrap();
    let dir = base.path().join("spill");
    let mut host = host_spilling_into(&dir, json!({}), json!({ "tools": { "mode": "code" } }));
    let program = "const rows = [];\nfor (let i = 0; i < 20000; i++) rows.push('row ' + i);\nreturn rows.join('\\n');";
    let response = host.request(
        "tools/execute",
        json!({ "callId": "run", "name": "run_code", "arguments": { "code": program, "description": "rows" } }),
    );
    let result = &response["result"];
    let expected: Vec<String> = (0..20_000).map(|i| format!("row {i}")).collect();
    let expected = expected.join("\n");
    assert_eq!(result["value"], json!({ "logs": [], "result": expected }));
    let (path, _) = spill_meta(result);
    let saved = std::fs::read_to_string(&path).unwrap();
    assert_eq!(saved, expected, "the file holds the model-facing text");
    assert!(!saved.contains("rows.push"), "never the program's source");
    assert!(text_of(result).len() <= THRESHOLD);

    let failing = "throw 'e'.repeat(100000);";
    let response = host.request(
        "tools/execute",
        json!({ "callId": "run2", "name": "run_code", "arguments": { "code": failing, "description": "fails" } }),
    );
    let result = &response["result"];
    assert_eq!(result["isError"], true);
    assert_eq!(result["error"]["info"]["code"], "CODE_RUN_FAILED");
    let (path, bytes) = spill_meta(result);
    let saved = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        saved,
        format!(
            "Error: code run failed (exception): {}",
            "e".repeat(100_000)
        )
    );
    assert_eq!(bytes, saved.len() as u64);
    assert!(!saved.contains("repeat("));
    let preview = text_of(result);
    assert!(preview.starts_with("Error: code run failed (exception): eee"));
    assert!(preview.len() <= THRESHOLD);
}

#[test]
fn the_oldest_files_are_evicted_past_max_total_bytes() {
    let base = tempfile::tempdir().unwrap();
    let dir = base.path().join("spill");
    let mut host = host_spilling_into(
        &dir,
        json!({}),
        json!({ "spill": { "maxTotalBytes": 250_000 } }),
    );
    register_text_tool(&mut host, "t");
    let paths: Vec<_> = ["a", "b", "c"]
        .iter()
        .map(|fill| {
            let result = call_answering(&mut host, fill, "t", &fill.repeat(100_000));
            spill_meta(&result).0
        })
        .collect();
    assert!(!paths[0].exists(), "the oldest file went first");
    assert_eq!(
        std::fs::read_to_string(&paths[1]).unwrap(),
        "b".repeat(100_000)
    );
    assert_eq!(
        std::fs::read_to_string(&paths[2]).unwrap(),
        "c".repeat(100_000)
    );
    // One that can never fit is not saved, and evicts nothing.
    let result = call_answering(&mut host, "d", "t", &"d".repeat(300_000));
    assert_eq!(result["isError"], false);
    assert!(result["meta"].get("spill").is_none(), "{result}");
    assert!(
        text_of(&result).contains("not saved (spill.maxTotalBytes (250000) leaves no room for it)")
    );
    assert!(paths[1].exists() && paths[2].exists());
}

#[test]
fn an_unwritable_directory_falls_back_to_the_preview_with_a_note() {
    let base = tempfile::tempdir().unwrap();
    let file = base.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let dir = file.join("spill");
    let mut host = host_spilling_into(&dir, json!({}), json!({}));
    register_text_tool(&mut host, "t");
    let text = numbered_lines("row", 20_000);
    let result = call_answering(&mut host, "c1", "t", &text);
    assert_eq!(result["isError"], false, "a fault never fails the call");
    assert_eq!(result["value"], json!(text));
    assert_eq!(result.get("meta"), None);
    let preview = text_of(&result);
    assert!(preview.len() <= THRESHOLD);
    assert!(preview.starts_with("row 0\n"));
    assert!(
        preview.contains(&format!(
            "bytes not shown and not saved (cannot create the spill directory {}: Not a directory",
            dir.display()
        )),
        "{preview}"
    );
    assert!(!preview.contains(READ_MORE), "nothing to read more of");
    let finished = host.finish_all();
    assert!(
        finished
            .stderr
            .contains("spill: the result of t was not saved"),
        "{}",
        finished.stderr
    );
}

#[test]
fn the_default_directory_is_private_and_gone_after_eof() {
    let mut host = Host::initialized(Framing::Lsp, json!({ "executeTools": true }), json!({}));
    register_text_tool(&mut host, "t");
    let result = call_answering(&mut host, "c1", "t", &"z".repeat(100_000));
    let (path, _) = spill_meta(&result);
    let dir = path.parent().unwrap().to_owned();
    assert!(dir.starts_with(std::env::temp_dir().canonicalize().unwrap()));
    let mode = std::fs::metadata(&dir).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777,
        0o700
    );
    assert!(path.exists());
    assert_eq!(host.finish(), 0);
    assert!(!dir.exists(), "{dir:?} outlived the host");
}

#[test]
fn a_configured_directory_keeps_only_what_was_there_unless_keep() {
    let base = tempfile::tempdir().unwrap();
    let dir = base.path().join("mine");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    let mut host = host_spilling_into(&dir, json!({}), json!({}));
    register_text_tool(&mut host, "t");
    let (path, _) = spill_meta(&call_answering(&mut host, "c1", "t", &"z".repeat(100_000)));
    assert!(path.exists());
    assert_eq!(host.finish(), 0);
    assert!(!path.exists());
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "mine"
    );

    let mut keeping = host_spilling_into(&dir, json!({}), json!({ "spill": { "keep": true } }));
    register_text_tool(&mut keeping, "t");
    let (kept, _) = spill_meta(&call_answering(
        &mut keeping,
        "c1",
        "t",
        &"k".repeat(100_000),
    ));
    assert_eq!(keeping.finish(), 0);
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "k".repeat(100_000));
}

#[test]
fn invalid_spill_settings_are_refused_naming_the_field() {
    let mut host = Host::spawn(Framing::Ndjson);
    let response = host.request(
        "initialize",
        json!({ "protocolVersion": "1", "config": { "spill": { "previewBytes": -1 } } }),
    );
    assert_eq!(response["error"]["code"], -32602);
    let message = response["error"]["message"].as_str().unwrap();
    assert!(message.contains("config.spill.previewBytes"), "{message}");
}
