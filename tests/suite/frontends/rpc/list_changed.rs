//! `tools/listChanged` is coalesced per scope: a burst of registry changes (here 50,000
//! tools registered by one batch) reaches the client as a few announcements, the last one
//! after the last change, never one per tool.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::wire::{Framing, Host, echo_spec};
use serde_json::{Value, json};
use std::time::Instant;

const TOOLS: usize = 50_000;

#[test]
fn fifty_thousand_registrations_in_one_batch_are_announced_a_few_times_not_per_tool() {
    let mut host = Host::initialized(Framing::Ndjson, json!({ "executeTools": true }), json!({}))
        .patient(std::time::Duration::from_secs(300));
    let batch: Vec<Value> = (0..TOOLS)
        .map(|n| {
            json!({ "jsonrpc": "2.0", "id": n, "method": "tools/register",
                "params": { "tool": echo_spec(&format!("t{n}")) } })
        })
        .collect();
    let started = Instant::now();
    host.send(&Value::Array(batch));
    let reply = loop {
        let message = host.read().expect("EOF before the batch reply");
        if message.is_array() {
            break message;
        }
        host.inbox.push(message);
    };
    let elapsed = started.elapsed();
    let replies = reply.as_array().unwrap();
    assert_eq!(replies.len(), TOOLS);
    assert!(
        replies
            .iter()
            .all(|r| r["result"]["registration"].is_string()),
        "{:.300}",
        reply
    );
    // Every announcement names the global scope and came before the reply (the last one
    // after the last change: nothing is left to announce).
    let announced = host.drain("tools/listChanged");
    assert!(
        announced.iter().all(|m| m["params"] == json!({})),
        "{announced:?}"
    );
    // One at the first change, one per second of the burst at most, one at its end.
    let bound = 2 + elapsed.as_secs() as usize;
    assert!(
        !announced.is_empty() && announced.len() <= bound,
        "{} announcements for {TOOLS} registrations in {elapsed:?} (at most {bound})",
        announced.len()
    );
    // The listing the client makes now is the final one.
    let schemas = host.request("tools/schemas", json!({}));
    assert_eq!(schemas["result"].as_array().unwrap().len(), TOOLS);
    assert!(host.drain("tools/listChanged").is_empty());
    assert_eq!(host.finish(), 0);
}

#[test]
fn a_change_made_by_a_request_is_announced_before_its_answer_even_right_after_another() {
    let mut host = Host::initialized(Framing::Ndjson, json!({ "executeTools": true }), json!({}));
    // Back to back, well within the 50 ms interval: the second is held, then announced
    // ahead of its answer.
    for n in 0..5 {
        let response = host.request(
            "tools/register",
            json!({ "tool": echo_spec(&format!("t{n}")) }),
        );
        assert!(response.get("result").is_some(), "{response}");
        assert_eq!(
            host.drain("tools/listChanged"),
            [json!({ "jsonrpc": "2.0", "method": "tools/listChanged", "params": {} })],
            "registration {n}"
        );
    }
    assert_eq!(host.finish(), 0);
}
