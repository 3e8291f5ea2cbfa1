//! Who may use `dsh-tools mcp --http`: a refused request's `WWW-Authenticate` challenge
//! says a bearer token is required and where it is (so that a client does not start an
//! OAuth flow); `--http-token-header NAME` accepts the bare token in that header too (the
//! official Python client passes it); `--http-no-auth-loopback` lets loopback clients in
//! without it and is refused for a non-loopback bind.

#![allow(clippy::unwrap_used)]

use crate::support::http::{HttpHost, INITIALIZE};
use serde_json::json;

/// The value of `name` in a raw response head.
fn header(answer: &str, name: &str) -> String {
    let prefix = format!("{}:", name.to_ascii_lowercase());
    answer
        .lines()
        .find_map(|line| {
            line.to_ascii_lowercase()
                .starts_with(&prefix)
                .then(|| line[prefix.len()..].trim().to_owned())
        })
        .unwrap_or_default()
}

#[test]
fn a_refusal_says_a_bearer_token_is_required_and_where_it_was_printed() {
    let host = HttpHost::start("http-challenge", &json!({}), &[]);
    let (status, answer) = host.post("/mcp", &[], INITIALIZE);
    assert_eq!(status, 401, "{answer}");
    assert_eq!(
        header(&answer, "WWW-Authenticate"),
        "Bearer realm=\"dsh-tools\", error=\"invalid_token\", error_description=\"a bearer token is required; send Authorization: Bearer TOKEN; TOKEN is the one dsh-tools mcp printed to its stderr at startup (dsh-tools mcp: bearer token ...)\""
    );
    let (status, answer) = host.post("/mcp", &[("Authorization", "Bearer wrong")], INITIALIZE);
    assert_eq!(status, 401, "{answer}");
    assert!(
        header(&answer, "WWW-Authenticate")
            .contains("error_description=\"the token presented is not this server's bearer token;"),
        "{answer}"
    );
}

#[test]
fn a_token_from_the_environment_is_named_in_the_challenge() {
    let host = HttpHost::start_with_env(
        "http-challenge-env",
        &json!({}),
        &["--http-token-env", "DSH_TEST_MCP_TOKEN"],
        &[("DSH_TEST_MCP_TOKEN", "s3cret-token")],
    );
    let (status, answer) = host.post("/mcp", &[], INITIALIZE);
    assert_eq!(status, 401, "{answer}");
    assert!(
        header(&answer, "WWW-Authenticate").contains(
            "TOKEN is the value of the environment variable DSH_TEST_MCP_TOKEN that dsh-tools mcp was started with"
        ),
        "{answer}"
    );
    assert!(!answer.contains("s3cret-token"), "{answer}");
}

#[test]
fn the_token_is_accepted_bare_in_the_configured_header() {
    let host = HttpHost::start(
        "http-token-header",
        &json!({}),
        &["--http-token-header", "X-Api-Key"],
    );
    let (status, answer) = host.post("/mcp", &[("X-Api-Key", &host.token)], INITIALIZE);
    assert_eq!(status, 200, "{answer}");
    assert!(answer.contains("\"serverInfo\""), "{answer}");
    let (status, _) = host.post("/mcp", &[("X-Api-Key", "wrong")], INITIALIZE);
    assert_eq!(status, 401);
    let (status, _) = host.post("/mcp", &[("X-Other", &host.token)], INITIALIZE);
    assert_eq!(status, 401);
    let (status, answer) = host.post("/mcp", &[], INITIALIZE);
    assert_eq!(status, 401);
    assert!(
        header(&answer, "WWW-Authenticate")
            .contains("send Authorization: Bearer TOKEN or x-api-key: TOKEN"),
        "{answer}"
    );
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
        .args([
            "mcp",
            "--http",
            "127.0.0.1:0",
            "--http-token-header",
            "bad header",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("--http-token-header \"bad header\": not a valid HTTP header name"),
        "{stderr}"
    );
}

#[test]
fn loopback_clients_need_no_token_only_when_opted_in_on_a_loopback_bind() {
    let host = HttpHost::start(
        "http-no-auth",
        &json!({ "tools": { "mode": "code" } }),
        &["--http-no-auth-loopback"],
    );
    let (status, answer) = host.post("/mcp", &[], INITIALIZE);
    assert_eq!(status, 200, "{answer}");
    assert!(answer.contains("\"serverInfo\""), "{answer}");
    // The Python client without any token: initialize, list and call all pass.
    let mut spec = json!({ "sessions": 1, "steps": [
        { "session": 0, "op": "list" }
    ] });
    spec["url"] = host.url().into();
    spec["token"] = "not-the-token".into();
    let report = crate::support::http::python_script("http_client_check.py", &spec);
    assert_eq!(report["steps"][0], json!(["run_code"]), "{report}");
    // Browsers are still held off by the Origin check.
    let (status, _) = host.post("/mcp", &[("Origin", "http://evil.example")], INITIALIZE);
    assert_eq!(status, 403);
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
        .args([
            "mcp",
            "--http",
            "0.0.0.0:0",
            "--http-allow-remote",
            "--http-no-auth-loopback",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("--http-no-auth-loopback is only for a loopback address"),
        "{stderr}"
    );
}
