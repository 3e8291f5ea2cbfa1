//! Random bytes on stdin never take the host down, and after a resync point it answers
//! valid requests exactly (one long-lived binary per framing, proptest-driven).

#![allow(clippy::unwrap_used)]

use crate::support::wire as support;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Value, json};
use std::cell::{Cell, RefCell};
use support::{Framing, Host};

/// Generated prefixes per framing: enough to reach every reader state, small enough that
/// the file runs in well under a minute on a debug build.
const CASES: u32 = 1000;

/// The longest body a generated frame declares; the LSP resync run must be longer.
const MAX_DECLARED: usize = 64;

/// Limits small enough that random input hits them (too-long ndjson lines, deep nesting).
fn limits() -> Value {
    json!({ "transport": { "maxMessageBytes": 1024, "maxNestingDepth": 32 } })
}

/// Fragments that steer random input into header, JSON and line-ending states. None spells
/// `content-length` or an `"id"`/`"jsonrpc"`/`"method"` key.
const TOKENS: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b":",
    b",",
    b"0",
    b"9",
    b"-",
    b"1e400",
    b"null",
    b"\\",
    b"\\u",
    b"\"a\"",
    b" ",
    b"\t",
    b"\r",
    b"\n",
    b"\r\n",
    b"\r\n\r\n",
    b"Content-Type: text/plain",
    b"X-A:",
    b"\xff",
    b"\xc3\xa9",
    b"\xc3",
];

/// A prefix G: concatenated pieces of arbitrary bytes, token soup, and LSP frames whose
/// `Content-Length` is at most [`MAX_DECLARED`] (their bodies are bytes or soup of any
/// length, so bodies may be short, long, or swallow the next piece).
fn prefix() -> impl Strategy<Value = Vec<u8>> {
    let bytes = vec(any::<u8>(), 0..200);
    let soup = vec(select(TOKENS), 0..24).prop_map(|tokens| tokens.concat());
    let body = prop_oneof![bytes.clone(), soup.clone()];
    let frame = (0..=MAX_DECLARED, body).prop_map(|(declared, body)| {
        [
            format!("Content-Length: {declared}\r\n\r\n").into_bytes(),
            body,
        ]
        .concat()
    });
    vec(prop_oneof![bytes, soup, frame], 0..10).prop_map(|pieces| pieces.concat())
}

/// Error replies random input may earn: parse errors and invalid requests, alone or as a
/// batch reply. Never `-32603` (a panicking handler) and never a result.
fn is_error_reply(message: &Value) -> bool {
    let is_error = |m: &Value| {
        m.get("result").is_none() && matches!(m["error"]["code"].as_i64(), Some(-32700 | -32600))
    };
    match message {
        Value::Array(items) => !items.is_empty() && items.iter().all(is_error),
        single => is_error(single),
    }
}

/// Runs the property on one host for [`CASES`] prefixes, then checks the host still serves
/// and exits cleanly at EOF without having panicked.
fn check_resync(framing: Framing, resync: &[u8]) {
    let host = RefCell::new(Host::initialized(framing, json!({}), limits()));
    let next_id = Cell::new(1_u64);
    let errors_seen = Cell::new(0_u64);
    // A failing case leaves the shared process in an unknown state, so shrinking (which
    // replays on that process) would mislead: the failing input is reported as generated.
    let mut runner = TestRunner::new(Config {
        cases: CASES,
        max_shrink_iters: 0,
        failure_persistence: None,
        ..Config::default()
    });
    let outcome = runner.run(&prefix(), |garbage| {
        let mut host = host.borrow_mut();
        let id = next_id.get();
        next_id.set(id + 1);
        host.write_raw(&garbage);
        host.write_raw(resync);
        host.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/schemas" }));
        let expected = json!({ "jsonrpc": "2.0", "id": id, "result": [] });
        loop {
            let message = host
                .read()
                .ok_or_else(|| TestCaseError::fail("the host closed stdout"))?;
            if message == expected {
                break;
            }
            prop_assert!(
                is_error_reply(&message),
                "unexpected message before the answer: {}",
                message
            );
            errors_seen.set(errors_seen.get() + 1);
        }
        prop_assert!(host.is_running(), "the host exited");
        Ok(())
    });
    if let Err(failure) = outcome {
        panic!("{framing:?}: {failure}");
    }
    // The generator must reach the error paths, or the property says little.
    assert!(
        errors_seen.get() > CASES as u64 / 10,
        "{framing:?}: {errors_seen:?}"
    );
    let mut host = host.into_inner();
    let schemas = host.request("tools/schemas", json!({}));
    assert_eq!(schemas["result"], json!([]), "{framing:?}");
    let finished = host.finish_all();
    assert_eq!(finished.code, Some(0), "{framing:?}");
    assert!(
        !finished.stderr.contains("panicked"),
        "{framing:?}: {}",
        finished.stderr
    );
    if framing == Framing::Lsp {
        assert!(
            finished.stderr.contains("skipped input"),
            "no garbage was skipped"
        );
    }
}

/// LSP property. For every prefix G from [`prefix`] — where `content-length` (any case)
/// occurs only in frame headers declaring at most 64 bytes — writing to one long-lived
/// host G, then the resync run `"\r\n"` × 36, then a valid `tools/schemas` frame with a
/// fresh id k:
/// 1. the host answers k with exactly `{"jsonrpc":"2.0","id":k,"result":[]}`;
/// 2. every message before that answer is a `-32700`/`-32600` error (or a batch of them);
/// 3. the process is still running; after all cases it still serves, and EOF exits it with
///    code 0 and no panic on stderr.
///
/// Why the run is 72 bytes: wherever G leaves the reader — at a boundary, inside a header
/// block (ended within 4 bytes of the run), inside a body (at most 64 bytes left), or
/// skipping garbage — the run completes it and the rest are blank lines, so the valid
/// frame's header is the next one read.
#[test]
fn lsp_random_input_never_kills_the_host_and_it_resyncs_before_a_valid_frame() {
    let resync = b"\r\n".repeat(MAX_DECLARED / 2 + 4);
    assert!(resync.len() >= MAX_DECLARED + 4);
    check_resync(Framing::Lsp, &resync);
}

/// ndjson property. For every prefix G from [`prefix`] (any bytes), writing G, then `"\n"`,
/// then a valid `tools/schemas` line with a fresh id k: the same three guarantees as the
/// LSP property. Each line of G earns at most one error reply (over-long lines a `-32600`
/// naming the limit, blank lines nothing).
#[test]
fn ndjson_random_input_never_kills_the_host_and_it_resyncs_after_a_newline() {
    check_resync(Framing::Ndjson, b"\n");
}
