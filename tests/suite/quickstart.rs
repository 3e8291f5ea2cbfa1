//! README's first command (`dsh-tools run --config examples/quickstart.toml --builtins fs
//! examples/quickstart.ts`, automatic deferral on) prints the
//! quickstart's answer, and the second example surfaces a denied call as a caught error.

#![allow(clippy::unwrap_used)]

use std::process::Command;

fn run(args: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8(output.stdout).unwrap(),
    )
}

#[test]
fn the_quickstart_answers_with_a_summary_and_shows_each_dispatch() {
    let (code, stdout) = run(&[
        "run",
        "--config",
        "examples/quickstart.toml",
        "--builtins",
        "fs",
        "examples/quickstart.ts",
    ]);
    assert_eq!(code, 0, "{stdout}");
    let dispatches: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("✓ cli:code:"))
        .collect();
    assert_eq!(dispatches.len(), 4, "{stdout}");
    for tool in ["glob", "grep", "read"] {
        assert!(
            dispatches
                .iter()
                .any(|l| l.contains(&format!(" {tool} {{"))),
            "{tool} missing in {stdout}"
        );
        assert!(dispatches.iter().all(|l| l.ends_with(" ms)")), "{stdout}");
    }
    assert!(stdout.contains("── run_code completed in "), "{stdout}");
    assert!(stdout.contains("project: dsh-tools"), "{stdout}");
    let summary: serde_json::Value =
        serde_json::from_str(&stdout[stdout.find("{\n").unwrap()..]).unwrap();
    assert!(
        summary["rustSourceFiles"].as_u64().unwrap() > 50,
        "{summary}"
    );
    assert!(
        summary["integrationTestFiles"].as_u64().unwrap() >= 10,
        "{summary}"
    );
    let modules = summary["libraryModules"].as_array().unwrap();
    assert!(
        modules.iter().any(|m| m == "pipeline") && modules.iter().any(|m| m == "code_mode"),
        "{summary}"
    );
}

#[test]
fn a_denied_call_is_a_caught_tool_call_error() {
    let (code, stdout) = run(&[
        "run",
        "--config",
        "examples/denied.toml",
        "examples/denied.ts",
    ]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("✗ cli:code:1 write "), "{stdout}");
    assert!(
        stdout.contains("write was refused: tool \"write\" is denied by permission rule Write"),
        "{stdout}"
    );
    assert!(
        stdout.contains("\"firstLine\": \"# dsh-tools\""),
        "{stdout}"
    );
    assert!(!std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/notes.txt")).exists());
}
