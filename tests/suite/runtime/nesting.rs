//! A program nested deeper than `transport.maxNestingDepth` is refused before anything parses
//! it, as a `SyntaxError` naming the limit: through the real binary, a 1 MB program nested
//! 500,000 deep fails quickly and the host's memory high-water mark hardly moves (type
//! stripping alone took it from 27 MB to 849 MB before).

use crate::support::code::{Framing, Host};
use serde_json::json;
use std::time::{Duration, Instant};

/// Levels of each program: 1 MB of brackets.
const LEVELS: usize = 500_000;
/// What the requests may add to the host's peak resident memory: a megabyte program held a
/// few times over (the frame, its parsed form, the source), far under the stack and syntax
/// tree of half a million levels.
const GROWTH_KIB: u64 = 64 * 1024;
/// A guard for a loaded machine, not a measurement: the scan takes milliseconds.
const QUICKLY: Duration = Duration::from_secs(10);

#[test]
fn programs_nested_past_the_limit_are_refused_before_parsing_with_memory_bounded() {
    let mut host = Host::code_mode(
        Framing::Ndjson,
        "code",
        json!({ "codeRuntime": { "poolSize": 1 } }),
    );
    assert_eq!(host.run_code("warm", "return 1")["isError"], false);
    let before = host.peak_memory_kib();
    let programs = [
        format!("return {}{};", "[".repeat(LEVELS), "]".repeat(LEVELS)),
        format!("return {}1{};", "(".repeat(LEVELS), ")".repeat(LEVELS)),
        format!("return {}x;", "!".repeat(2 * LEVELS)),
    ];
    let refused = "code run failed (exception): SyntaxError: the program nests deeper than \
                   20000 levels, the most transport.maxNestingDepth allows at program.ts:1:";
    for program in &programs {
        let sent = Instant::now();
        let result = host.run_code("deep", program);
        assert!(sent.elapsed() < QUICKLY, "took {:?}", sent.elapsed());
        let message = result["error"]["message"].as_str().unwrap_or_default();
        let shown: String = result.to_string().chars().take(400).collect();
        assert!(message.starts_with(refused), "{shown}");
    }
    let growth = host.peak_memory_kib().saturating_sub(before);
    assert!(
        growth < GROWTH_KIB,
        "the deep programs raised the host's peak memory by {growth} KiB"
    );
    // Nesting within the limit still runs.
    let fits = format!("return {}1{};", "[".repeat(100), "]".repeat(100));
    assert_eq!(host.run_code("fits", &fits)["isError"], false);
    assert_eq!(host.finish(), 0);
}

/// Four deep programs sent at once (each stripped on a thread of its own, none waiting for
/// another): all refused, the peak within the bound of one.
#[test]
fn four_deep_programs_at_once_are_refused_with_memory_bounded() {
    let mut host = Host::code_mode(Framing::Ndjson, "code", json!({}));
    assert_eq!(host.run_code("warm", "return 1")["isError"], false);
    let before = host.peak_memory_kib();
    let program = format!("return {}{};", "[".repeat(LEVELS), "]".repeat(LEVELS));
    for n in 0..4 {
        host.send_run_code(json!(format!("deep-{n}")), &format!("deep-{n}"), &program);
    }
    for n in 0..4 {
        let response = host.response_to(&json!(format!("deep-{n}")));
        let message = response["result"]["error"]["message"]
            .as_str()
            .unwrap_or_default();
        assert!(
            message.contains("the program nests deeper than 20000 levels"),
            "{message}"
        );
    }
    let growth = host.peak_memory_kib().saturating_sub(before);
    assert!(
        growth < GROWTH_KIB,
        "four deep programs raised the host's peak memory by {growth} KiB"
    );
    assert_eq!(host.finish(), 0);
}

/// Deep programs the scan misjudges (it reads the `/` after a class or function expression
/// as a regular expression where the parser reads a division): refused by the parser's own
/// stack bound, quickly and with the peak bounded as for the others (main took the host
/// from 42 MB to 1,098 MB with the first).
#[test]
fn deep_programs_that_mislead_the_scan_are_refused_with_memory_bounded() {
    let mut host = Host::code_mode(Framing::Ndjson, "code", json!({}));
    assert_eq!(host.run_code("warm", "return 1")["isError"], false);
    let before = host.peak_memory_kib();
    let hidden = format!("{}1{}", "[".repeat(LEVELS), "]".repeat(LEVELS));
    for program in [
        format!("const x = class {{}} / {hidden} / 1; return x;"),
        format!("const x = function () {{}} / {hidden} / 1; return x;"),
    ] {
        let sent = Instant::now();
        let result = host.run_code("misleading", &program);
        assert!(sent.elapsed() < QUICKLY, "took {:?}", sent.elapsed());
        let message = result["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with(
                "code run failed (exception): SyntaxError: the program nests too deeply to \
                 parse at program.ts:1:"
            ),
            "{message}"
        );
    }
    let growth = host.peak_memory_kib().saturating_sub(before);
    assert!(
        growth < GROWTH_KIB,
        "the misleading programs raised the host's peak memory by {growth} KiB"
    );
    assert_eq!(host.finish(), 0);
}
