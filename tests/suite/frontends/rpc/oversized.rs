//! An LSP frame whose header announces more than `transport.maxMessageBytes`: answered with
//! `-32600` (id null), logged, and the connection ends. Its body is never read, so bytes
//! the client sends after it cannot be mistaken for (or swallowed as) that body.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::wire::{Framing, Host, anonymous_error};
use serde_json::json;

/// What the host logs when it ends the connection at such a header.
const CLOSING: &str = "closing the connection: a frame announces";

#[test]
fn a_frame_announcing_a_terabyte_is_answered_logged_and_ends_the_connection() {
    let mut host = Host::initialized(Framing::Lsp, json!({}), json!({}));
    // The header, then a request the client believes comes next: without the close, the
    // host would wait for 999999999999 bytes and never answer it (nor anything later).
    host.write_raw(b"Content-Length: 999999999999\r\n\r\n");
    host.send(
        &json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/get", "params": { "name": "x" } }),
    );
    assert_eq!(
        host.read(),
        Some(anonymous_error(
            -32600,
            "message of 999999999999 bytes exceeds transport.maxMessageBytes (67108864)"
        ))
    );
    host.wait_for_stderr(CLOSING, 1);
    // Stdin stays open: the host ends on its own, after an orderly shutdown.
    let finished = host.wait_exit();
    assert_eq!(finished.code, Some(1), "{}", finished.stderr);
    assert!(finished.stdout.is_empty(), "{:?}", finished.stdout);
    assert!(
        finished.stderr.contains(
            "closing the connection: a frame announces 999999999999 bytes, more than \
             transport.maxMessageBytes (67108864); its body is not read"
        ),
        "{}",
        finished.stderr
    );
}

#[test]
fn a_frame_one_byte_over_the_limit_ends_the_connection_after_the_answers_before_it() {
    let mut host = Host::initialized(
        Framing::Lsp,
        json!({}),
        json!({ "transport": { "maxMessageBytes": 1024 } }),
    );
    let request = |id: u64| {
        json!({ "jsonrpc": "2.0", "id": id, "method": "tools/get", "params": { "name": "x" } })
            .to_string()
    };
    // Pipelined: an answered request, the oversized frame (body sent in full), one more.
    let body = "x".repeat(1025);
    let mut bytes = Vec::new();
    for payload in [request(1).as_str(), body.as_str(), request(2).as_str()] {
        bytes.extend_from_slice(format!("Content-Length: {}\r\n\r\n", payload.len()).as_bytes());
        bytes.extend_from_slice(payload.as_bytes());
    }
    host.write_raw(&bytes);
    assert_eq!(
        host.read(),
        Some(json!({ "jsonrpc": "2.0", "id": 1, "result": null }))
    );
    assert_eq!(
        host.read(),
        Some(anonymous_error(
            -32600,
            "message of 1025 bytes exceeds transport.maxMessageBytes (1024)"
        ))
    );
    assert_eq!(
        host.read(),
        None,
        "nothing after the oversized frame is served"
    );
    assert_eq!(host.wait_exit().code, Some(1));
}
