//! `tools/prompt` through the real binary: the assembly of each presentation mode (and of
//! a code-mode agent beside the native default) against golden files, identical in both
//! framings, and byte-identical whatever order the same tool set was registered in.
//! The golden files are those of `tests/suite/prompt/assembly.rs` (the library assembly), so the
//! wire and the library must agree. Regenerate them with
//! `UPDATE_GOLDEN=1 cargo test --test wire_prompt_golden` and review the diff.

#![allow(clippy::unwrap_used)]

use crate::support::wire as support;

use serde_json::{Value, json};
use std::path::Path;
use support::{Framing, Host, registration_of};

/// The tool set: the same three tools as `tests/suite/prompt/assembly.rs`, as wire specs.
fn tools() -> [Value; 3] {
    [
        json!({
            "name": "read",
            "description": "Read a file.",
            "parameters": {
                "file_path": { "type": "string", "required": true },
                "offset": { "type": "integer" }
            },
            "output": { "schema": { "type": "string" } }
        }),
        json!({
            "name": "my-search",
            "description": "Search things.",
            "parameters": {
                "query": { "type": "string", "required": true },
                "mode": { "type": "string", "enum": ["fast", "deep"] }
            },
            "output": { "schema": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": { "path": { "type": "string", "required": true } },
                    "additionalProperties": false
                }
            } }
        }),
        json!({
            "name": "bash",
            "description": "Run a command.",
            "parameters": { "command": { "type": "string", "required": true } },
            "output": { "schema": {
                "type": "object",
                "properties": {
                    "exitCode": { "type": "integer", "required": true },
                    "output": { "type": "string", "required": true }
                },
                "additionalProperties": false
            } }
        }),
    ]
}

/// A host presenting `mode` with the tool set registered globally in `order`.
fn host(framing: Framing, mode: &str, order: [usize; 3]) -> Host {
    let config = json!({ "tools": { "mode": mode } });
    let mut host = Host::initialized(framing, json!({ "executeTools": true }), config);
    for i in order {
        let response = host.request("tools/register", json!({ "tool": tools()[i] }));
        registration_of(&response);
    }
    host
}

/// Compares `text` (a `tools/prompt` result as the host wrote it) with
/// `tests/golden/prompt/<name>.json`, which holds it pretty-printed.
fn golden(name: &str, text: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/prompt")
        .join(format!("{name}.json"));
    let parsed: Value = serde_json::from_str(text).unwrap();
    let pretty = serde_json::to_string_pretty(&parsed).unwrap() + "\n";
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &pretty).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        expected == pretty,
        "{} differs from the assembly:\n{pretty}",
        path.display()
    );
}

#[test]
fn each_mode_assembles_as_its_golden_file_in_both_framings() {
    for mode in ["native", "code", "both"] {
        let mut assemblies = Vec::new();
        for framing in [Framing::Lsp, Framing::Ndjson] {
            let mut host = host(framing, mode, [0, 1, 2]);
            assemblies.push(host.request_raw_result("tools/prompt", json!({})));
            assert_eq!(host.finish(), 0);
        }
        golden(mode, &assemblies[0]);
        assert_eq!(assemblies[0], assemblies[1], "{mode}: framings differ");
    }
}

#[test]
fn a_code_agent_beside_the_native_default_assembles_as_its_golden_file() {
    let mut host = host(Framing::Ndjson, "native", [0, 1, 2]);
    host.request("agents/open", json!({ "agent": "coder" }));
    for (method, params) in [
        (
            "tools/presentAs",
            json!({ "agent": "coder", "mode": "code" }),
        ),
        (
            "tools/restrict",
            json!({ "agent": "coder", "deny": ["bash"] }),
        ),
    ] {
        registration_of(&host.request(method, params));
    }
    let coder = host.request_raw_result("tools/prompt", json!({ "agent": "coder" }));
    golden("agent-code", &coder);
    let global = host.request_raw_result("tools/prompt", json!({}));
    golden("native", &global);
    assert_eq!(host.finish(), 0);
}

#[test]
fn the_same_tool_set_assembles_byte_identically_whatever_the_registration_order() {
    for mode in ["native", "code", "both"] {
        let mut first = host(Framing::Lsp, mode, [0, 1, 2]);
        let mut second = host(Framing::Lsp, mode, [2, 0, 1]);
        // Churn on the second host: a tool that came and went, and the set asked twice.
        let extra = json!({ "name": "aaa", "output": { "schema": { "type": "string" } } });
        let extra = registration_of(&second.request("tools/register", json!({ "tool": extra })));
        second.request("tools/unregister", json!({ "registration": extra }));
        let expected = first.request_raw_result("tools/prompt", json!({}));
        for _ in 0..2 {
            let actual = second.request_raw_result("tools/prompt", json!({}));
            assert!(actual == expected, "{mode}:\n{actual}\n!=\n{expected}");
        }
        assert_eq!(first.finish(), 0);
        assert_eq!(second.finish(), 0);
    }
}
