//! The official MCP conformance suite (`tests/conformance/run.sh`, npm
//! `@modelcontextprotocol/conformance` on the Node 22 `.ci/setup` installs) against this
//! build's binary as an MCP client: every client scenario of the released spec versions,
//! the auth ones against the suite's own authorization server, passes, but those
//! `tests/conformance/expected-failures.txt` lists with the reason (the script also fails
//! when a listed one starts passing). Each scenario's log stays in `target/conformance/`.

#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::process::Command;

#[test]
fn the_official_conformance_suites_client_scenarios_pass() {
    let output = Command::new("bash")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/conformance/run.sh"
        ))
        .env("DSH_TOOLS_BIN", env!("CARGO_BIN_EXE_dsh-tools"))
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    eprintln!("{text}");
    assert!(output.status.success(), "{text}");
    assert!(
        text.contains("client scenarios passed") || text.contains("conformance: skipped"),
        "{text}"
    );
}
