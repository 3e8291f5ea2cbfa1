//! Lifecycle (`initialize` / `shutdown` / `exit`) and host configuration (`--config FILE`
//! merged under `initialize.config`) through the real binary, in both framings.

#![allow(clippy::unwrap_used)]

use crate::support::wire as support;

use serde_json::{Value, json};
use std::path::PathBuf;
use support::{Framing, Host, echo_spec, error_response, temp_file};

const FRAMINGS: [Framing; 2] = [Framing::Lsp, Framing::Ndjson];

const NOT_INITIALIZED: &str = "server not initialized: send initialize first";
const SHUT_DOWN: &str = "invalid request: the host is shut down; only exit is accepted";

fn flag(framing: Framing) -> &'static str {
    match framing {
        Framing::Lsp => "lsp",
        Framing::Ndjson => "ndjson",
    }
}

fn initialize_request(id: Value, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "initialize", "params": params })
}

fn exit_notification() -> Value {
    json!({ "jsonrpc": "2.0", "method": "exit" })
}

#[test]
fn every_request_before_initialize_is_server_not_initialized() {
    let requests = [
        ("tools/schemas", json!({})),
        ("tools/register", json!({ "tool": echo_spec("echo") })),
        (
            "tools/execute",
            json!({ "callId": "c", "name": "x", "arguments": {} }),
        ),
        ("shutdown", json!(null)),
        ("foo/bar", json!({})),
    ];
    for framing in FRAMINGS {
        let mut host = Host::spawn(framing);
        for (method, params) in &requests {
            let response = host.request(method, params.clone());
            assert_eq!(
                response,
                error_response(response["id"].clone(), -32002, NOT_INITIALIZED),
                "{framing:?} {method}"
            );
        }
        host.send(&json!([
            { "jsonrpc": "2.0", "id": "b1", "method": "tools/schemas" },
            { "jsonrpc": "2.0", "method": "initialized" },
            { "jsonrpc": "2.0", "id": "b2", "method": "tools/get", "params": { "name": "x" } }
        ]));
        assert_eq!(
            host.read().unwrap(),
            json!([
                error_response(json!("b1"), -32002, NOT_INITIALIZED),
                error_response(json!("b2"), -32002, NOT_INITIALIZED),
            ]),
            "{framing:?}"
        );
        host.initialize(json!({}), json!({}));
        assert_eq!(
            host.request("tools/schemas", json!({}))["result"],
            json!([])
        );
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn notifications_and_responses_before_initialize_are_ignored() {
    for framing in FRAMINGS {
        let mut host = Host::spawn(framing);
        for message in [
            json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }),
            json!({ "jsonrpc": "2.0", "method": "$/cancelRequest", "params": { "id": 1 } }),
            json!({ "jsonrpc": "2.0", "method": "tools/schemas" }),
            json!({ "jsonrpc": "2.0", "id": "dsh:1", "result": {} }),
            json!({ "jsonrpc": "2.0", "id": "dsh:2", "error": { "code": -1, "message": "no" } }),
        ] {
            host.send(&message);
        }
        host.send(&initialize_request(
            json!("init"),
            json!({ "protocolVersion": "1" }),
        ));
        let first = host.read().unwrap();
        assert_eq!(first["id"], "init", "{framing:?} {first}");
        assert_eq!(first["result"]["protocolVersion"], "1", "{framing:?}");
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn initialize_twice_is_an_invalid_request_and_the_host_serves_on() {
    for framing in FRAMINGS {
        let mut host =
            Host::initialized(framing, json!({}), json!({ "tools": { "mode": "code" } }));
        host.send(&initialize_request(
            json!("again"),
            json!({ "protocolVersion": "1", "config": { "tools": { "mode": "both" } } }),
        ));
        assert_eq!(
            host.read().unwrap(),
            error_response(
                json!("again"),
                -32600,
                "invalid request: initialize was already called"
            ),
            "{framing:?}"
        );
        assert_eq!(
            host.request("tools/schemas", json!({}))["result"],
            json!([])
        );
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn shutdown_answers_null_and_every_later_request_is_an_invalid_request() {
    for framing in FRAMINGS {
        let mut host = Host::initialized(framing, json!({}), json!({}));
        host.send(&json!({ "jsonrpc": "2.0", "id": "down", "method": "shutdown" }));
        assert_eq!(
            host.read().unwrap(),
            json!({ "jsonrpc": "2.0", "id": "down", "result": null }),
            "{framing:?}"
        );
        // Notifications are still ignored, without a reply.
        host.send(&json!({ "jsonrpc": "2.0", "method": "initialized" }));
        for (method, params) in [
            ("tools/schemas", json!({})),
            ("shutdown", json!(null)),
            ("foo/bar", json!({})),
        ] {
            let response = host.request(method, params);
            assert_eq!(
                response,
                error_response(response["id"].clone(), -32600, SHUT_DOWN),
                "{framing:?} {method}"
            );
        }
        let again = host.request("initialize", json!({ "protocolVersion": "1" }));
        assert_eq!(
            again["error"],
            json!({ "code": -32600, "message": "invalid request: initialize was already called" })
        );
        host.send(&exit_notification());
        let finished = host.wait_exit();
        assert_eq!(finished.code, Some(0), "{framing:?}");
        assert_eq!(finished.stdout, b"", "{framing:?}");
    }
}

#[test]
fn shutdown_is_answered_after_the_responses_of_every_earlier_request() {
    // The race this guards against (the shutdown reply overtaking an earlier call's reply)
    // showed in about half the runs; a few rounds per framing make it show.
    for framing in FRAMINGS {
        for _ in 0..10 {
            let mut host = Host::initialized(framing, json!({ "executeTools": true }), json!({}));
            host.request("tools/register", json!({ "tool": echo_spec("echo") }));
            host.send(
                &json!({ "jsonrpc": "2.0", "id": "run", "method": "tools/execute",
                "params": { "callId": "c1", "name": "echo", "arguments": { "text": "hi" } } }),
            );
            let call = host.next_with_method("client/executeTool");
            host.send(&json!({ "jsonrpc": "2.0", "id": "down", "method": "shutdown" }));
            host.answer(&call, json!({ "value": "hi" }));
            let ids: Vec<Value> = (0..3).map(|_| host.read().unwrap()["id"].clone()).collect();
            assert_eq!(
                ids,
                [Value::Null, json!("run"), json!("down")],
                "{framing:?}"
            );
            host.send(&exit_notification());
            assert_eq!(host.wait_exit().code, Some(0), "{framing:?}");
        }
    }
}

#[test]
fn exit_code_is_zero_after_shutdown_and_one_without() {
    // (requests before `exit`, expected exit code)
    let cases: [(&[&str], i32); 4] = [
        (&[], 1),
        (&["initialize"], 1),
        (&["initialize", "shutdown"], 0),
        (&["shutdown"], 1),
    ];
    for framing in FRAMINGS {
        for (methods, code) in cases {
            let mut host = Host::spawn(framing);
            for method in methods {
                host.request(method, json!({ "protocolVersion": "1" }));
            }
            host.send(&exit_notification());
            // Stdin stays open: the process ends because of `exit`, not EOF.
            let finished = host.wait_exit();
            assert_eq!(finished.code, Some(code), "{framing:?} {methods:?}");
        }
    }
}

#[test]
fn exit_ends_the_process_while_a_call_waits_on_the_client() {
    for framing in FRAMINGS {
        let mut host = Host::initialized(framing, json!({ "executeTools": true }), json!({}));
        host.request("tools/register", json!({ "tool": echo_spec("echo") }));
        host.send(
            &json!({ "jsonrpc": "2.0", "id": "stuck", "method": "tools/execute",
            "params": { "callId": "c", "name": "echo", "arguments": { "text": "x" } } }),
        );
        host.next_with_method("client/executeTool");
        host.send(&exit_notification());
        assert_eq!(host.wait_exit().code, Some(1), "{framing:?}");
    }
}

#[test]
fn a_protocol_version_other_than_1_is_invalid_params_and_leaves_the_host_uninitialized() {
    let cases = [
        (
            json!({ "protocolVersion": "2" }),
            "invalid params: protocolVersion: unsupported version \"2\" (this host speaks \"1\")",
        ),
        (
            json!({ "protocolVersion": "1.0" }),
            "invalid params: protocolVersion: unsupported version \"1.0\" (this host speaks \"1\")",
        ),
        (
            json!({ "protocolVersion": "" }),
            "invalid params: protocolVersion: unsupported version \"\" (this host speaks \"1\")",
        ),
        (
            json!({ "protocolVersion": 1 }),
            "invalid params: protocolVersion: invalid type: integer `1`, expected a string at line 1 column 20",
        ),
        (
            json!({}),
            "invalid params: missing field `protocolVersion` at line 1 column 2",
        ),
        (
            json!({ "protocolVersion": "1", "capabilities": { "executeTools": "yes" } }),
            "invalid params: capabilities.executeTools: invalid type: string \"yes\", expected a boolean at line 1 column 59",
        ),
    ];
    for framing in FRAMINGS {
        let mut host = Host::spawn(framing);
        for (params, message) in &cases {
            let response = host.request("initialize", params.clone());
            assert_eq!(
                response["error"],
                json!({ "code": -32602, "message": message }),
                "{framing:?} {params}"
            );
            let early = host.request("tools/schemas", json!({}));
            assert_eq!(early["error"]["code"], -32002, "{framing:?} {params}");
        }
        host.initialize(json!({}), json!({}));
        assert_eq!(host.finish(), 0);
    }
}

/// The effective configuration when nothing is configured.
fn default_config() -> Value {
    json!({
        "tools": { "mode": "native", "maxParallelSubCalls": 10, "toolOrder": [], "semanticSearch": true },
        "codeRuntime": {
            "language": "typescript", "languages": [], "python": null, "computeMs": 60000, "maxWallMs": 600000,
            "maxOutputBytes": 67108864, "maxHeapMb": 512, "poolSize": 2,
            "maxConcurrentRuns": 64
        },
        "pipeline": {
            "timeout": { "enforce": true, "defaultMs": null },
            "retry": { "maxAttempts": 1, "backoffMs": 100 },
            "hookTimeoutMs": 30000,
            "cancelGraceMs": 2000
        },
        "permissions": { "allow": [], "deny": [], "ask": [] },
        "mcpServers": {},
        "builtins": {},
        "transport": { "maxMessageBytes": 67108864, "maxNestingDepth": 20000 },
        "spill": {
            "thresholdBytes": 40000,
            "previewBytes": 2000,
            "dir": null,
            "keep": false,
            "maxTotalBytes": 1073741824
        },
        "sandbox": {},
        "exec": { "maxSessions": 16, "idleTimeoutMs": 3600000, "maxLifetimeMs": 86400000 }
    })
}

#[test]
fn without_any_config_initialize_reports_the_defaults() {
    for framing in FRAMINGS {
        let mut host = Host::spawn(framing);
        let response = host.request("initialize", json!({ "protocolVersion": "1" }));
        assert_eq!(
            response["result"],
            json!({
                "protocolVersion": "1",
                "serverInfo": { "name": "dsh-tools", "version": env!("CARGO_PKG_VERSION") },
                "capabilities": {
                    "modes": ["native", "code", "both"],
                    "codeLanguages": ["typescript"],
                    "framing": flag(framing),
                    "maxMessageBytes": 67108864,
                    "config": default_config(),
                    // Nothing sandboxed is configured; the kernel's support is the probe's.
                    "sandbox": {
                        "kernel": response["result"]["capabilities"]["sandbox"]["kernel"],
                        "mcpServers": {}
                    }
                }
            }),
            "{framing:?}"
        );
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn a_config_file_in_json_or_toml_is_merged_under_initialize_config() {
    let as_json = json!({
        "tools": { "mode": "code", "maxParallelSubCalls": 3, "toolOrder": ["read", "write"] },
        "codeRuntime": { "computeMs": 5000 },
        "transport": { "maxMessageBytes": 1048576 }
    });
    let as_toml = "[tools]\nmode = \"code\"\nmaxParallelSubCalls = 3\ntoolOrder = [\"read\", \"write\"]\n\n\
                   [codeRuntime]\ncomputeMs = 5000\n\n[transport]\nmaxMessageBytes = 1048576\n";
    let files = [
        temp_file("host.json", &as_json.to_string()),
        temp_file("host.toml", as_toml),
    ];
    // initialize wins; objects merge key by key; arrays are replaced whole.
    let over = json!({
        "tools": { "mode": "both", "toolOrder": ["bash"] },
        "codeRuntime": { "maxHeapMb": 256 },
        "permissions": { "deny": ["bash"] }
    });
    let mut merged = default_config();
    merged["tools"] = json!({ "mode": "both", "maxParallelSubCalls": 3, "toolOrder": ["bash"], "semanticSearch": true });
    merged["codeRuntime"]["computeMs"] = json!(5000);
    merged["codeRuntime"]["maxHeapMb"] = json!(256);
    merged["permissions"]["deny"] = json!(["bash"]);
    merged["transport"]["maxMessageBytes"] = json!(1048576);
    let mut file_only = merged.clone();
    file_only["tools"] = json!({ "mode": "code", "maxParallelSubCalls": 3, "toolOrder": ["read", "write"], "semanticSearch": true });
    file_only["codeRuntime"]["maxHeapMb"] = json!(512);
    file_only["permissions"]["deny"] = json!([]);
    for file in &files {
        let path = file.to_str().unwrap();
        for framing in FRAMINGS {
            for (config, expected) in [(over.clone(), &merged), (json!({}), &file_only)] {
                let mut host = Host::spawn_with(
                    &["--config", path, "serve", "--framing", flag(framing)],
                    framing,
                );
                let result = host.initialize(json!({}), config);
                assert_eq!(
                    &result["capabilities"]["config"], expected,
                    "{path} {framing:?}"
                );
                assert_eq!(result["capabilities"]["maxMessageBytes"], 1048576);
                assert_eq!(host.finish(), 0);
            }
        }
    }
}

#[test]
fn an_invalid_config_field_is_invalid_params_naming_it() {
    let cases = [
        (
            json!({ "tools": { "mode": "fancy" } }),
            "config.tools.mode: unknown variant `fancy`, expected one of `native`, `code`, `both`",
        ),
        (
            json!({ "tool": {} }),
            "config.tool: unknown field `tool`, expected one of `tools`, `codeRuntime`, `pipeline`, `permissions`, `mcpServers`, `builtins`, `transport`, `spill`, `sandbox`, `exec`",
        ),
        (
            json!({ "transport": { "maxBytes": 1 } }),
            "config.transport.maxBytes: unknown field `maxBytes`, expected `maxMessageBytes` or `maxNestingDepth`",
        ),
        (
            json!({ "codeRuntime": { "computeMs": "x" } }),
            "config.codeRuntime.computeMs: invalid type: string \"x\", expected u64",
        ),
        (
            json!({ "codeRuntime": { "computeMs": -1 } }),
            "config.codeRuntime.computeMs: invalid value: integer `-1`, expected u64",
        ),
        (
            json!({ "pipeline": { "retry": { "maxAttempts": 1.5 } } }),
            "config.pipeline.retry.maxAttempts: invalid type: floating point `1.5`, expected u32",
        ),
        (
            json!({ "tools": { "maxParallelSubCalls": 4_294_967_296_u64 } }),
            "config.tools.maxParallelSubCalls: invalid value: integer `4294967296`, expected u32",
        ),
        (
            json!({ "mcpServers": { "a": { "command": "x", "args": [1] } } }),
            "config.mcpServers.a.args[0]: invalid type: number, expected a string",
        ),
        (
            json!({ "tools": { "maxParallelSubCalls": 0 } }),
            "config.tools.maxParallelSubCalls: must be at least 1",
        ),
        (
            json!({ "codeRuntime": { "maxOutputBytes": 3 } }),
            "config.codeRuntime.maxOutputBytes: must be at least 4",
        ),
        (
            json!({ "pipeline": { "timeout": { "defaultMs": 0 } } }),
            "config.pipeline.timeout.defaultMs: must be positive",
        ),
        (
            json!({ "transport": { "maxMessageBytes": 1023 } }),
            "config.transport.maxMessageBytes: must be at least 1024",
        ),
        (
            json!({ "transport": { "maxNestingDepth": 31 } }),
            "config.transport.maxNestingDepth: must be at least 32",
        ),
        (
            json!(5),
            "config: invalid type: number, expected struct HostConfig",
        ),
    ];
    for framing in FRAMINGS {
        let mut host = Host::spawn(framing);
        for (config, message) in &cases {
            let response = host.request(
                "initialize",
                json!({ "protocolVersion": "1", "config": config }),
            );
            assert_eq!(
                response["error"],
                json!({ "code": -32602, "message": format!("invalid params: {message}") }),
                "{framing:?} {config}"
            );
        }
        // A refused initialize leaves the host waiting for a valid one.
        host.initialize(json!({}), json!({}));
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn an_invalid_config_file_stops_the_binary_with_a_message_on_stderr_and_nothing_on_stdout() {
    let missing = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("no-such-config.json");
    // (file, what stderr must say)
    let cases = [
        (
            temp_file("mode.json", r#"{ "tools": { "mode": "fancy" } }"#),
            "config.tools.mode: unknown variant `fancy`",
        ),
        (
            temp_file("mode.toml", "[tools]\nmode = 5\n"),
            "config.tools.mode: invalid type: number, expected string or map",
        ),
        (
            temp_file("unknown.toml", "[tools]\nmodes = \"code\"\n"),
            "config.tools.modes: unknown field `modes`",
        ),
        (
            temp_file(
                "range.json",
                r#"{ "transport": { "maxMessageBytes": 10 } }"#,
            ),
            "config.transport.maxMessageBytes: must be at least 1024",
        ),
        (
            temp_file("broken.json", "{ \"tools\": "),
            "broken.json: invalid JSON",
        ),
        (
            temp_file("broken.toml", "tools = ["),
            "broken.toml: invalid TOML",
        ),
        (missing.clone(), "cannot read config file"),
    ];
    for (file, expected) in &cases {
        let path = file.to_str().unwrap();
        let mut host = Host::spawn_with(&["--config", path, "serve"], Framing::Lsp);
        host.send(&initialize_request(
            json!(1),
            json!({ "protocolVersion": "1" }),
        ));
        let finished = host.finish_all();
        assert!(
            finished.code.is_some_and(|code| code != 0),
            "{path}: {finished:?}"
        );
        assert_eq!(finished.stdout, b"", "{path}");
        assert!(
            finished.stderr.contains(expected),
            "{path}: stderr {:?} does not contain {expected:?}",
            finished.stderr
        );
    }
}
