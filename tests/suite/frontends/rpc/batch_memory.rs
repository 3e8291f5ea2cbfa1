//! A `tools/executeBatch` of very many calls is run as it is read: the host's peak stays
//! within three times the response plus 64 MiB over its idle peak, and every call is
//! answered, in order.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::wire::{Framing, Host};
use serde_json::{Value, json};
use std::time::Duration;

const CALLS: usize = 100_000;

#[test]
fn a_batch_of_a_hundred_thousand_calls_stays_within_three_responses_and_64_mib() {
    let mut host =
        Host::initialized(Framing::Ndjson, json!({}), json!({})).patient(Duration::from_secs(600));
    // Warm the paths a call takes, so the idle peak is the host's working size.
    let warm = host.request(
        "tools/executeBatch",
        json!({ "calls": [{ "callId": "w", "name": "nothing_here", "arguments": {} }] }),
    );
    let expected = warm["result"][0].clone();
    assert_eq!(expected["isError"], true, "{warm}");
    host.inbox.clear();
    let idle = host.peak_memory_kib() << 10;
    let calls: Vec<Value> = (0..CALLS)
        .map(|n| json!({ "callId": format!("c{n}"), "name": "nothing_here", "arguments": { "n": n } }))
        .collect();
    let id = host.start("tools/executeBatch", json!({ "calls": calls }));
    // Notifications (a `tools/result` per call) are read and dropped as they come.
    let response = loop {
        let message = host.read().expect("EOF before the batch's answer");
        if message.get("method").is_none() && message["id"] == id {
            break message;
        }
    };
    let peak = host.peak_memory_kib() << 10;
    let results = response["result"].as_array().expect("a result array");
    assert_eq!(results.len(), CALLS);
    assert!(
        results.iter().all(|result| *result == expected),
        "{:.300}",
        response
    );
    let returned = response.to_string().len() as u64;
    let bound = 3 * returned + (64 << 20);
    assert!(
        peak.saturating_sub(idle) <= bound,
        "the host grew by {} MiB for a response of {} MiB (bound {} MiB)",
        peak.saturating_sub(idle) >> 20,
        returned >> 20,
        bound >> 20
    );
    assert_eq!(host.finish(), 0);
}
