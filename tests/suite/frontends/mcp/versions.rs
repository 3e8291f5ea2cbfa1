//! `dsh-tools mcp` answers a client's protocol version as the MCP spec says, over stdio
//! and Streamable HTTP, to the official Python client: `initialize` offering `2025-06-18`,
//! `2025-11-25` or `2024-11-05` is answered with the same revision; one offering
//! `2026-07-28` (which has no handshake) or an unknown revision is answered `2025-11-25`,
//! the newest the server can speak over `initialize`; `server/discover` (the `2026-07-28`
//! lifecycle) lists `2026-07-28` among the supported versions and the session works.

#![allow(clippy::unwrap_used)]

use crate::support::http::{HttpHost, python_script};
use crate::support::mcp::config_file;
use serde_json::{Value, json};

const OFFERS: [&str; 6] = [
    "2025-06-18",
    "2025-11-25",
    "2024-11-05",
    "2026-07-28",
    "1999-01-01",
    "discover",
];

fn check(report: &Value) {
    let sessions = report["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), OFFERS.len(), "{report}");
    let negotiated: Vec<&Value> = sessions.iter().map(|s| &s["negotiated"]).collect();
    assert_eq!(
        negotiated,
        [
            "2025-06-18",
            "2025-11-25",
            "2024-11-05",
            "2025-11-25",
            "2025-11-25",
            "2026-07-28"
        ]
        .iter()
        .map(|v| json!(v))
        .collect::<Vec<_>>()
        .iter()
        .collect::<Vec<_>>(),
        "{report}"
    );
    assert!(
        sessions[5]["supported"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28")),
        "{report}"
    );
    for session in sessions {
        assert_eq!(session["tools"], json!(["run_code"]), "{session}");
    }
}

#[test]
fn each_revision_is_answered_as_the_spec_says_over_stdio() {
    let config = config_file("versions-stdio", &json!({ "tools": { "mode": "code" } }));
    let report = python_script(
        "version_check.py",
        &json!({
            "command": env!("CARGO_BIN_EXE_dsh-tools"),
            "args": ["mcp", "--config", config.to_str().unwrap()],
            "offers": OFFERS,
        }),
    );
    check(&report);
}

#[test]
fn each_revision_is_answered_as_the_spec_says_over_http() {
    let host = HttpHost::start(
        "versions-http",
        &json!({ "tools": { "mode": "code" } }),
        &[],
    );
    let report = host.python_script("version_check.py", json!({ "offers": OFFERS }));
    check(&report);
}
