//! Hostile Code Mode programs through the real binary: runaway compute, heap bombs, log
//! floods, pollution, forged calls and a burst of concurrent runs. After each, the host
//! must keep serving ordinary runs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::code as code_support;

use code_support::hostile::{self, ComputeBudget, failure};
use code_support::{FRAMINGS, Framing, Host, echo_spec, with_method};
use serde_json::json;
use std::time::Duration;

/// Logs `fine` and returns `"still serving"`.
const SERVING: &str = "console.log('fine'); return 'still serving';";

fn still_serving(host: &mut Host) {
    hostile::still_serving(host, SERVING);
}

#[test]
fn runaway_compute_ends_as_timeout_within_the_budget_and_the_host_keeps_serving() {
    hostile::runaway_compute_times_out(
        &json!({ "codeRuntime": { "poolSize": 3 } }),
        &ComputeBudget {
            compute_ms: 200,
            // Also type stripping and handing the run to a warm isolate.
            process_margin: Duration::from_millis(400),
        },
        &[
            "while (true) {}",
            "await Promise.resolve();\nfor (;;) {}",
            "setTimeout(() => { while (true) {} }, 1);\nawait new Promise((resolve) => setTimeout(resolve, 60000));",
        ],
        SERVING,
    );
}

#[test]
fn the_wall_budget_ends_a_waiting_run_and_aborts_its_sub_call() {
    let mut host = Host::code_mode(
        Framing::Ndjson,
        "code",
        json!({ "codeRuntime": { "maxWallMs": 300 } }),
    );
    let transcript = hostile::wall_budget_ends_a_waiting_run(
        &mut host,
        "console.log('waiting');\nawait tools.hang({});",
        300,
    );
    // The in-flight sub-call was aborted, not orphaned, before the answer.
    let dispatched = with_method(&transcript, "tools/codeDispatch");
    assert_eq!(
        dispatched[0]["params"]["content"],
        json!([{ "type": "text", "text": "Error: tool call aborted" }])
    );
    still_serving(&mut host);
    assert_eq!(host.finish(), 0);
}

#[test]
fn allocation_bombs_end_as_worker_exit_with_the_host_alive() {
    let mut host = Host::code_mode(
        Framing::Lsp,
        "code",
        json!({ "codeRuntime": { "maxHeapMb": 32 } }),
    );
    for program in [
        "const a = [];\nwhile (true) a.push('x'.repeat(1000) + a.length);",
        "const m = new Map();\nfor (let i = 0; ; i++) m.set(i, { i, pad: [i, i, i] });",
        "const a = [];\nwhile (true) a.push('x'.repeat(100000) + a.length);",
        "const chunks = [];\nwhile (true) chunks.push(new Array(100000).fill(chunks.length));",
    ] {
        let result = host.run_code("bomb", program);
        assert_eq!(
            result,
            failure("code run failed (worker-exit): heap limit of 32 MiB exceeded"),
            "{program}"
        );
        still_serving(&mut host);
    }
    assert_eq!(host.finish(), 0);
}

#[test]
fn log_floods_end_as_output_limit_and_stop_streaming_at_the_cap() {
    const CAP: usize = 1000;
    for framing in FRAMINGS {
        let mut host = Host::code_mode(
            framing,
            "code",
            json!({ "codeRuntime": { "maxOutputBytes": CAP } }),
        );
        hostile::flood_stops_at_the_cap(
            &mut host,
            framing,
            "for (let i = 0; ; i++) console.log('line ' + i);",
            CAP,
        );

        // One enormous line: never streamed, but the failure keeps its longest prefix that
        // fits beside the 34-byte message (962 characters: 964 bytes as JSON, 966 with the
        // brackets of the logs array).
        let result = host.run_code("huge", "console.log('x'.repeat(200_000));\nreturn 1;");
        let kept = "x".repeat(962);
        assert_eq!(
            result,
            failure(&format!(
                "code run failed (output-limit): outer output exceeded 1000 bytes\nCaptured output:\n{kept}"
            )),
            "{framing:?}"
        );
        // An oversized completion.
        let result = host.run_code("big", "return 'y'.repeat(5000);");
        assert_eq!(
            result,
            failure("code run failed (output-limit): outer output exceeded 1000 bytes")
        );
        still_serving(&mut host);
        assert_eq!(host.finish(), 0);
    }
}

/// A run that floods logs up to its output cap costs the host less than three times the
/// cap (plus 64 MB for the engine): what was printed is held once, not once per layer (the
/// captured lines, the failure's message, and the response and `tools/result` each written
/// once into the buffer that is sent). One pool slot, so the isolate that replaces the one
/// used before is not being built while the flood runs: this measures the output path.
#[test]
fn an_output_capped_run_costs_the_host_under_three_times_its_cap() {
    const CAP: u64 = 16 * 1024 * 1024;
    let mut host = Host::code_mode(
        Framing::Ndjson,
        "code",
        json!({ "codeRuntime": { "maxOutputBytes": CAP, "poolSize": 1 } }),
    );
    still_serving(&mut host);
    let before = host.peak_memory_kib();
    let result = host.run_code(
        "flood",
        "const line = 'x'.repeat(1000); for (;;) console.log(line);",
    );
    let growth_kib = host.peak_memory_kib().saturating_sub(before);
    assert_eq!(result["isError"], true, "{result}");
    let message = result["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("code run failed (output-limit)"),
        "{message}"
    );
    let bound_kib = 3 * CAP / 1024 + 64 * 1024;
    assert!(
        growth_kib < bound_kib,
        "peak grew by {growth_kib} KiB (bound {bound_kib})"
    );
    still_serving(&mut host);
    assert_eq!(host.finish(), 0);
}

/// Turning an uncaught exception into an error makes the engine create an `Error`; it used
/// to call the program's global `Error` for that, and a program that had replaced it (or a
/// termination pending at that moment) panicked the isolate's thread. The same program with
/// and without the replacement fails the same way, in time.
#[test]
fn a_replaced_error_constructor_changes_nothing_in_how_a_run_fails() {
    let mut host = Host::code_mode(
        Framing::Ndjson,
        "code",
        json!({ "codeRuntime": { "computeMs": 2000 } }),
    );
    let unhandled =
        "Promise.reject({});\nawait new Promise((resolve) => setTimeout(resolve, 10));\nreturn 1;";
    let plain = host.run_code("plain", unhandled);
    assert_eq!(
        plain,
        failure("code run failed (exception): [object Object]"),
    );
    for replaced in ["globalThis.Error = null;", "delete globalThis.Error;"] {
        let started = std::time::Instant::now();
        let answer = host.run_code("replaced", &format!("{replaced}\n{unhandled}"));
        assert_eq!(answer, plain, "{replaced}");
        assert!(
            started.elapsed() < Duration::from_secs(2) + hostile::BUSY_MACHINE,
            "{replaced}"
        );
    }
    still_serving(&mut host);
    assert_eq!(host.finish(), 0);
}

#[test]
fn pollution_and_forged_calls_change_nothing_outside_the_run() {
    for framing in FRAMINGS {
        let mut host = Host::code_mode(framing, "code", json!({}));
        host.register(echo_spec("echo"));
        let schemas = host.request("tools/schemas", json!({}))["result"].clone();
        let prompt = host.request("tools/prompt", json!({}))["result"].clone();
        host.inbox.clear();
        let polluting = concat!(
            "Object.prototype.polluted = 'yes';\n",
            "Array.prototype.push = null;\n",
            "JSON.parse = () => 'hijacked';\n",
            "JSON.stringify = () => 'hijacked';\n",
            "Function.prototype.call = () => 'hijacked';\n",
            "globalThis.leftover = 1;\n",
            "ToolCallError.prototype.toolName = 'forged';\n",
            "try { tools.echo = () => 'replaced'; } catch (e) { console.log('assign:', e.name); }\n",
            "try { delete tools.echo; } catch (e) { console.log('delete:', e.name); }\n",
            // The bridge still works, with forged correlation fields as mere arguments.
            "const reply = await tools.echo({ text: 'real', callId: 'forged', parent: 'forged', token: 'forged' });\n",
            // Writing something that looks like protocol only ever produces log text.
            "console.log('{\"jsonrpc\":\"2.0\",\"id\":\"outer\",\"result\":{\"forged\":true}}');\n",
            "console.log('Content-Length: 52\\r\\n\\r\\n{\"jsonrpc\":\"2.0\",\"id\":\"outer\",\"result\":1}');\n",
            "const attempts = [];\n",
            "for (const name of ['tools/register', 'run_code', '../echo', 'initialize']) {\n",
            "  try { await tools[name]({ code: 'return 1', description: 'escape' }); attempts[attempts.length] = 'ran ' + name; }\n",
            "  catch (e) { attempts[attempts.length] = (name in tools) + ' ' + e.name; }\n",
            "}\n",
            "return { reply, attempts, deno: typeof Deno };",
        );
        host.send_run_code(json!("outer"), "polluter", polluting);
        let (response, transcript) = host.serve_until(&json!("outer"), |call| {
            assert_eq!(
                call["callId"], "polluter:code:1",
                "forged ids change nothing"
            );
            assert_ne!(call["parent"], "forged");
            Some(Ok(json!({ "value": call["arguments"]["text"] })))
        });
        let value = &response["result"]["value"];
        assert_eq!(
            value["result"],
            json!({
                "reply": "real",
                // None of these names is a binding: reading one throws, and nothing is called.
                "attempts": [
                    "false ToolCallError",
                    "false ToolCallError",
                    "false ToolCallError",
                    "false ToolCallError"
                ],
                "deno": "undefined"
            }),
            "{framing:?}: {response}"
        );
        assert_eq!(
            value["logs"],
            json!([
                "{\"jsonrpc\":\"2.0\",\"id\":\"outer\",\"result\":{\"forged\":true}}",
                "Content-Length: 52\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":\"outer\",\"result\":1}"
            ]),
            "{framing:?}"
        );
        assert!(with_method(&transcript, "tools/listChanged").is_empty());
        // Nothing survived into the next run.
        let clean = host.run_code(
            "clean",
            "return [typeof ({}).polluted, typeof [].push, JSON.stringify(JSON.parse('{\"a\":1}')), typeof leftover, typeof Function.prototype.call, new ToolCallError('t', 'm').toolName];",
        );
        assert_eq!(
            clean["value"]["result"],
            json!([
                "undefined",
                "function",
                "{\"a\":1}",
                "undefined",
                "function",
                "t"
            ]),
            "{framing:?}"
        );
        // Nor into the registry or the prompt.
        assert_eq!(host.request("tools/schemas", json!({}))["result"], schemas);
        assert_eq!(host.request("tools/prompt", json!({}))["result"], prompt);
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn two_hundred_concurrent_runs_are_all_answered() {
    const RUNS: u64 = 200;
    // No run is refused: the cap on runs alive (64 by default) is raised past them all.
    let mut host = Host::code_mode(
        Framing::Ndjson,
        "code",
        json!({ "codeRuntime": { "maxConcurrentRuns": RUNS } }),
    );
    host.register(echo_spec("echo"));
    for i in 0..RUNS {
        // Every fourth run also waits on a client tool.
        let program = if i % 4 == 0 {
            format!("console.log('run {i}');\nreturn [{i}, await tools.echo({{ text: 'e{i}' }})];")
        } else {
            format!("console.log('run {i}');\nreturn [{i}, {i} * 2];")
        };
        host.send_run_code(json!(format!("r{i}")), &format!("c{i}"), &program);
    }
    let mut answered = std::collections::BTreeMap::new();
    while (answered.len() as u64) < RUNS {
        let message = host.next_message();
        if message["method"] == "client/executeTool" {
            let text = message["params"]["arguments"]["text"].clone();
            host.answer(&message, json!({ "value": text }));
            continue;
        }
        if message.get("method").is_none() {
            let id = message["id"].as_str().unwrap().to_string();
            assert!(answered.insert(id, message).is_none(), "answered twice");
        }
    }
    for i in 0..RUNS {
        let response = &answered[&format!("r{i}")];
        let second = if i % 4 == 0 {
            json!(format!("e{i}"))
        } else {
            json!(i * 2)
        };
        assert_eq!(
            response["result"]["value"],
            json!({ "logs": [format!("run {i}")], "result": [i, second] }),
            "{response}"
        );
    }
    still_serving(&mut host);
    assert_eq!(host.finish(), 0);
}
