//! Golden Code Mode programs through the real binary: every `tests/golden/<name>.ts` (and
//! every Python `tests/golden/<name>.py`, run with `codeRuntime.language: "python"`) runs as
//! `run_code` in both framings and must produce exactly `tests/golden/<name>.expected.json`.
//!
//! A program may start with `///` lines (`##` in Python) whose text is one JSON object
//! configuring its run:
//! - `config`: merged into the host config (the default presents `tools.mode: "code"`);
//! - `tools`: client tools to register — a full spec, or a name for a concurrency-safe tool
//!   taking any object and returning any JSON;
//! - `answers`: how the client answers `client/executeTool` per tool name: `"echo"` (the
//!   default: `{ value: arguments }`), `"text"` (`{ value: arguments.text }`),
//!   `{ "result": R }` (R verbatim) or `{ "error": M }` (a JSON-RPC error with message M);
//! - `description`: the `run_code` description (default `"golden <name>"`).
//!
//! The expected file holds `result` (the whole wire result of the outer call), `logs` (the
//! `code/log` notifications of the run, without `callId`) and `dispatches` (each sub-call's
//! `tools/codeDispatch`, by dispatch number, without `parent` and `time`). Set
//! `GOLDEN_BLESS=1` to (re)write expected files from what the host produces.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::code as code_support;

use code_support::{FRAMINGS, Framing, Host, any_spec, with_method};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// The outer call id of every golden run.
const CALL_ID: &str = "golden";

struct Golden {
    name: String,
    /// A `.py` program, run by the Python runtime.
    python: bool,
    program: String,
    header: Map<String, Value>,
    expected_path: PathBuf,
}

fn goldens() -> Vec<Golden> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "ts" || e == "py"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let program = std::fs::read_to_string(&path).unwrap();
            let python = path.extension().is_some_and(|e| e == "py");
            let prefix = if python { "##" } else { "///" };
            let header_text: String = program
                .lines()
                .take_while(|line| line.starts_with(prefix))
                .map(|line| &line[prefix.len()..])
                .collect::<Vec<_>>()
                .join("\n");
            let header = if header_text.trim().is_empty() {
                Map::new()
            } else {
                match serde_json::from_str(&header_text) {
                    Ok(Value::Object(header)) => header,
                    other => panic!(
                        "{}: the header is not a JSON object: {other:?}",
                        path.display()
                    ),
                }
            };
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            Golden {
                python,
                expected_path: path.with_file_name(format!("{name}.expected.json")),
                name,
                program,
                header,
            }
        })
        .collect()
}

/// The host config of a golden: the header's `config` over the defaults.
fn config_of(golden: &Golden) -> Value {
    let mut config = if golden.python {
        json!({ "codeRuntime": { "language": "python" } })
    } else {
        json!({})
    };
    code_support::merge(
        &mut config,
        golden.header.get("config").cloned().unwrap_or(json!({})),
    );
    config
}

/// Runs every golden in `framing`, one host per distinct config (a fresh isolate serves
/// every run either way), and returns what each expected file holds.
fn observe_all(goldens: &[Golden], framing: Framing) -> Vec<Value> {
    let mut hosts: Vec<(Value, Host)> = Vec::new();
    let observed = goldens
        .iter()
        .map(|golden| {
            let config = config_of(golden);
            let index = match hosts.iter().position(|(c, _)| c == &config) {
                Some(index) => index,
                None => {
                    hosts.push((config.clone(), Host::code_mode(framing, "code", config)));
                    hosts.len() - 1
                }
            };
            observe(golden, &mut hosts[index].1)
        })
        .collect();
    for (_, host) in hosts {
        assert_eq!(host.finish(), 0);
    }
    observed
}

/// Runs one golden on `host` (its tools registered for the run only).
fn observe(golden: &Golden, host: &mut Host) -> Value {
    let mut registrations = Vec::new();
    for tool in golden
        .header
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let spec = match tool {
            Value::String(name) => any_spec(name, true),
            spec => spec.clone(),
        };
        let response = host.request("tools/register", json!({ "tool": spec }));
        registrations.push(response["result"]["registration"].clone());
    }
    let answers = golden.header.get("answers").cloned().unwrap_or(json!({}));
    let description = golden
        .header
        .get("description")
        .cloned()
        .unwrap_or_else(|| json!(format!("golden {}", golden.name)));
    host.inbox.clear();
    let id = json!("outer");
    host.send_request(
        id.clone(),
        "tools/execute",
        json!({ "callId": CALL_ID, "name": "run_code",
            "arguments": { "code": golden.program, "description": description } }),
    );
    let (response, transcript) = host.serve_until(&id, |call| {
        let arguments = &call["arguments"];
        let answer = &answers[call["name"].as_str().unwrap()];
        Some(match answer {
            Value::Null => Ok(json!({ "value": arguments })),
            Value::String(kind) if kind == "echo" => Ok(json!({ "value": arguments })),
            Value::String(kind) if kind == "text" => Ok(json!({ "value": arguments["text"] })),
            Value::Object(o) if o.contains_key("result") => Ok(o["result"].clone()),
            Value::Object(o) if o.contains_key("error") => {
                Err(o["error"].as_str().unwrap().to_string())
            }
            other => panic!("{}: unknown answer {other}", golden.name),
        })
    });
    for registration in registrations {
        let response = host.request("tools/unregister", json!({ "registration": registration }));
        assert_eq!(response["result"], json!(null), "{response}");
    }
    let result = response
        .get("result")
        .cloned()
        .unwrap_or_else(|| panic!("{}: not a result: {response}", golden.name));
    check_correlation(&golden.name, &transcript);
    let logs: Vec<Value> = with_method(&transcript, "code/log")
        .into_iter()
        .map(|log| {
            assert_eq!(log["params"]["callId"], CALL_ID, "{}", golden.name);
            json!({ "stream": log["params"]["stream"], "text": log["params"]["text"] })
        })
        .collect();
    let mut dispatches: Vec<Value> = with_method(&transcript, "tools/codeDispatch")
        .into_iter()
        .map(|event| {
            let p = &event["params"];
            json!({ "id": p["id"], "name": p["name"], "arguments": p["arguments"],
                "isError": p["isError"], "content": p["content"] })
        })
        .collect();
    dispatches.sort_by_key(|d| dispatch_number(d["id"].as_str().unwrap()));
    json!({ "result": result, "logs": logs, "dispatches": dispatches })
}

fn dispatch_number(id: &str) -> u64 {
    let prefix = format!("{CALL_ID}:code:");
    id.strip_prefix(&prefix)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("dispatch id {id:?} is not {prefix}<n>"))
}

/// Invariants of every run: the outer `tools/result` comes last and names no parent; each
/// sub-call's `tools/result` and `client/executeTool` carry its dispatch id as `callId` and the
/// outer token as `parent`; dispatch events pair up, name the outer call id as `parent`,
/// and start in submission order numbered from 1.
fn check_correlation(name: &str, transcript: &[Value]) {
    let results = with_method(transcript, "tools/result");
    let outer = results
        .last()
        .unwrap_or_else(|| panic!("{name}: no tools/result"));
    let outer = &outer["params"]["execution"];
    assert_eq!(outer["callId"], CALL_ID, "{name}");
    assert_eq!(outer.get("parent"), None, "{name}");
    let token = &outer["token"];
    for inner in &results[..results.len() - 1] {
        let execution = &inner["params"]["execution"];
        dispatch_number(execution["callId"].as_str().unwrap());
        assert_eq!(&execution["parent"], token, "{name}: {inner}");
    }
    for call in with_method(transcript, "client/executeTool") {
        dispatch_number(call["params"]["callId"].as_str().unwrap());
        assert_eq!(&call["params"]["parent"], token, "{name}: {call}");
    }
    let starts: Vec<u64> = with_method(transcript, "tools/codeDispatchStart")
        .into_iter()
        .map(|start| {
            assert_eq!(start["params"]["parent"], CALL_ID, "{name}");
            dispatch_number(start["params"]["id"].as_str().unwrap())
        })
        .collect();
    let mut ends: Vec<u64> = with_method(transcript, "tools/codeDispatch")
        .into_iter()
        .map(|end| {
            assert_eq!(end["params"]["parent"], CALL_ID, "{name}");
            dispatch_number(end["params"]["id"].as_str().unwrap())
        })
        .collect();
    ends.sort_unstable();
    let numbered: Vec<u64> = (1..=starts.len() as u64).collect();
    assert_eq!(
        starts, numbered,
        "{name}: dispatch starts in submission order"
    );
    assert_eq!(ends, numbered, "{name}: one codeDispatch per start");
    assert_eq!(
        results.len(),
        starts.len() + 1,
        "{name}: one tools/result per sub-call"
    );
}

#[test]
fn every_golden_program_produces_its_expected_result_in_both_framings() {
    let bless = std::env::var_os("GOLDEN_BLESS").is_some();
    let goldens = goldens();
    assert!(!goldens.is_empty());
    // One thread per framing.
    let observed: Vec<Vec<Value>> = std::thread::scope(|scope| {
        let runs: Vec<_> = FRAMINGS
            .iter()
            .map(|&framing| {
                let goldens = &goldens;
                scope.spawn(move || observe_all(goldens, framing))
            })
            .collect();
        runs.into_iter().map(|run| run.join().unwrap()).collect()
    });
    let mut mismatches = Vec::new();
    for (index, golden) in goldens.iter().enumerate() {
        let (lsp, ndjson) = (&observed[0][index], &observed[1][index]);
        assert_eq!(lsp, ndjson, "{}: the framings disagree", golden.name);
        if bless {
            let text = serde_json::to_string_pretty(lsp).unwrap() + "\n";
            std::fs::write(&golden.expected_path, text).unwrap();
            continue;
        }
        let expected: Value = std::fs::read_to_string(&golden.expected_path)
            .map(|text| serde_json::from_str(&text).unwrap())
            .unwrap_or(Value::Null);
        if &expected != lsp {
            mismatches.push(format!(
                "{}:\nexpected {}\nobserved {}",
                golden.name,
                serde_json::to_string_pretty(&expected).unwrap(),
                serde_json::to_string_pretty(lsp).unwrap()
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} golden(s) differ (GOLDEN_BLESS=1 rewrites them):\n{}",
        mismatches.len(),
        mismatches.join("\n\n")
    );
}
