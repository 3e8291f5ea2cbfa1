//! Transport through the real binary over stdio: framings (LSP, ndjson, auto), batches,
//! host→client ids, `$/cancelRequest` both ways, size and nesting limits, bad input, EOF.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::wire as support;

use serde_json::{Value, json};
use support::{Framing, Host, anonymous_error, echo_spec, error_response, temp_file};

const FRAMINGS: [Framing; 2] = [Framing::Lsp, Framing::Ndjson];

fn flag(framing: Framing) -> &'static str {
    match framing {
        Framing::Lsp => "lsp",
        Framing::Ndjson => "ndjson",
    }
}

/// Reads until a batch reply (an array) arrives; other messages go to the inbox.
fn next_batch(host: &mut Host) -> Value {
    loop {
        let message = host
            .read()
            .expect("host closed stdout before the batch reply");
        if message.is_array() {
            return message;
        }
        host.inbox.push(message);
    }
}

/// The result of a successful echo call.
fn echoed(text: &str) -> Value {
    json!({ "isError": false, "value": text, "content": [{ "type": "text", "text": text }] })
}

/// The result of a call aborted after its body started.
fn aborted() -> Value {
    json!({
        "isError": true,
        "error": { "message": "tool call aborted", "info": { "name": "HarnessError", "code": "ABORTED" } },
        "content": [{ "type": "text", "text": "Error: tool call aborted" }]
    })
}

fn execute_echo(id: Value, text: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/execute",
        "params": { "callId": format!("call-{text}"), "name": "echo", "arguments": { "text": text } } })
}

fn with_echo_tool(framing: Framing) -> Host {
    let mut host = Host::initialized(framing, json!({ "executeTools": true }), json!({}));
    let registered = host.request("tools/register", json!({ "tool": echo_spec("echo") }));
    assert!(registered.get("result").is_some(), "{registered}");
    host
}

#[test]
fn lsp_is_the_default_framing() {
    let launches: [&[&str]; 3] = [&[], &["serve"], &["serve", "--framing", "lsp"]];
    for args in launches {
        let mut host = Host::spawn_with(args, Framing::Lsp);
        let result = host.initialize(json!({}), json!({}));
        assert_eq!(result["capabilities"]["framing"], "lsp", "{args:?}");
        assert_eq!(host.finish(), 0, "{args:?}");
    }
}

#[test]
fn ndjson_framing_is_selected_by_the_flag() {
    let mut host = Host::spawn(Framing::Ndjson);
    let result = host.initialize(json!({}), json!({}));
    assert_eq!(result["capabilities"]["framing"], "ndjson");
    assert_eq!(host.finish(), 0);
}

#[test]
fn lsp_header_variants_are_accepted() {
    let request =
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1"}}"#;
    let length = request.len();
    let headers = [
        format!("content-length: {length}\r\n\r\n"),
        format!("CONTENT-LENGTH:{length}\n\n"),
        format!(
            "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: {length}\r\n\r\n"
        ),
        format!("\r\n\r\nContent-Length:  {length} \r\nX-Other: 1\r\n\r\n"),
    ];
    for header in headers {
        let mut host = Host::spawn(Framing::Lsp);
        host.write_raw(format!("{header}{request}").as_bytes());
        let response = host.read().unwrap();
        assert_eq!(response["result"]["protocolVersion"], "1", "{header:?}");
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn auto_framing_answers_in_the_framing_of_the_first_byte() {
    let initialize = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": "1" } });
    // (client framing, first message, the framing the host must report)
    let cases = [
        (Framing::Ndjson, initialize.clone(), "ndjson"),
        (Framing::Ndjson, json!([initialize.clone()]), "ndjson"),
        (Framing::Lsp, initialize.clone(), "lsp"),
        (Framing::Lsp, json!([initialize.clone()]), "lsp"),
    ];
    for (framing, first, reported) in cases {
        let mut host = Host::spawn_with(&["serve", "--framing", "auto"], framing);
        host.send(&first);
        // `read` fails the test if the reply is not in the client's framing.
        let reply = host.read().unwrap();
        let response = if first.is_array() {
            assert_eq!(reply.as_array().map(Vec::len), Some(1), "{reply}");
            reply[0].clone()
        } else {
            reply
        };
        assert_eq!(
            response["result"]["capabilities"]["framing"], reported,
            "{framing:?} {first}"
        );
        let schemas = host.request("tools/schemas", json!({}));
        assert_eq!(
            schemas,
            json!({ "jsonrpc": "2.0", "id": 1, "result": [] }),
            "{framing:?}"
        );
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn a_batch_is_answered_as_one_array_in_request_order() {
    for framing in FRAMINGS {
        let mut host = with_echo_tool(framing);
        // The first call waits on the client; the later inline answers still come after it.
        host.send(&json!([
            execute_echo(json!("exec"), "one"),
            { "jsonrpc": "2.0", "id": "admitted", "method": "tools/isAdmitted", "params": { "name": "echo" } },
            { "jsonrpc": "2.0", "method": "initialized", "params": {} },
            { "jsonrpc": "2.0", "id": "nope", "method": "foo/bar" },
            7
        ]));
        let call = host.next_with_method("client/executeTool");
        host.answer(&call, json!({ "value": "one back" }));
        let reply = next_batch(&mut host);
        assert_eq!(
            reply,
            json!([
                { "jsonrpc": "2.0", "id": "exec", "result": echoed("one back") },
                { "jsonrpc": "2.0", "id": "admitted", "result": true },
                error_response(json!("nope"), -32601, "method not found: \"foo/bar\""),
                anonymous_error(-32600, "invalid request: a message must be a JSON object"),
            ]),
            "{framing:?}"
        );
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn notifications_and_responses_in_a_batch_get_no_entry() {
    for framing in FRAMINGS {
        let mut host = with_echo_tool(framing);
        host.send(&execute_echo(json!("exec"), "two"));
        let call = host.next_with_method("client/executeTool");
        // The client answers the host inside a batch that also carries a request.
        host.send(&json!([
            { "jsonrpc": "2.0", "id": call["id"], "result": { "value": "two back" } },
            { "jsonrpc": "2.0", "method": "initialized", "params": {} },
            { "jsonrpc": "2.0", "id": "admitted", "method": "tools/isAdmitted", "params": { "name": "echo" } }
        ]));
        let reply = next_batch(&mut host);
        assert_eq!(
            reply,
            json!([{ "jsonrpc": "2.0", "id": "admitted", "result": true }]),
            "{framing:?}"
        );
        let response = host.response_to(&json!("exec"));
        assert_eq!(response["result"], echoed("two back"), "{framing:?}");
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn an_all_notification_batch_gets_no_reply() {
    for framing in FRAMINGS {
        let mut host = Host::initialized(framing, json!({}), json!({}));
        host.send(&json!([
            { "jsonrpc": "2.0", "method": "initialized", "params": {} },
            { "jsonrpc": "2.0", "method": "$/cancelRequest", "params": { "id": 999 } },
            { "jsonrpc": "2.0", "method": "something/else" }
        ]));
        host.send(&json!({ "jsonrpc": "2.0", "id": "after", "method": "tools/schemas" }));
        assert_eq!(
            host.read().unwrap(),
            json!({ "jsonrpc": "2.0", "id": "after", "result": [] }),
            "{framing:?}"
        );
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn an_empty_batch_gets_one_invalid_request_error() {
    for framing in FRAMINGS {
        let mut host = Host::initialized(framing, json!({}), json!({}));
        for empty in ["[]", "[ ]", " [\t] "] {
            host.send_text(empty);
            assert_eq!(
                host.read().unwrap(),
                anonymous_error(-32600, "invalid request: empty batch"),
                "{framing:?} {empty:?}"
            );
        }
        let schemas = host.request("tools/schemas", json!({}));
        assert_eq!(schemas["result"], json!([]));
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn host_requests_have_distinct_dsh_string_ids_and_answers_are_routed_by_id() {
    for framing in FRAMINGS {
        let mut host = with_echo_tool(framing);
        host.send(&execute_echo(json!("a"), "a"));
        host.send(&execute_echo(json!("b"), "b"));
        let first = host.next_with_method("client/executeTool");
        let second = host.next_with_method("client/executeTool");
        for call in [&first, &second] {
            let id = call["id"].as_str().unwrap_or_default();
            assert!(id.starts_with("dsh:") && id.len() > 4, "{call}");
        }
        assert_ne!(first["id"], second["id"]);
        // Answered in reverse order, each with its own call's text.
        for call in [&second, &first] {
            let text = call["params"]["arguments"]["text"].as_str().unwrap();
            host.answer(call, json!({ "value": format!("{text} back") }));
        }
        assert_eq!(host.response_to(&json!("a"))["result"], echoed("a back"));
        assert_eq!(host.response_to(&json!("b"))["result"], echoed("b back"));
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn cancel_request_works_in_both_directions() {
    // (the id as the client spells it, the id as `$/cancelRequest` names it)
    let ids = [
        (r#""run-1""#, json!("run-1")),
        ("42", json!(42)),
        (r#""r\u0075n""#, json!("run")),
    ];
    for framing in FRAMINGS {
        for (spelled, id) in &ids {
            let mut host = with_echo_tool(framing);
            host.send_text(&format!(
                r#"{{"jsonrpc":"2.0","id":{spelled},"method":"tools/execute","params":{{"callId":"c","name":"echo","arguments":{{"text":"x"}}}}}}"#
            ));
            let call = host.next_with_method("client/executeTool");
            host.send(
                &json!({ "jsonrpc": "2.0", "method": "$/cancelRequest", "params": { "id": id } }),
            );
            let forwarded = host.next_with_method("$/cancelRequest");
            assert_eq!(
                forwarded,
                json!({ "jsonrpc": "2.0", "method": "$/cancelRequest", "params": { "id": call["id"] } }),
                "{framing:?} {spelled}"
            );
            let response = host.response_to(id);
            assert_eq!(response["result"], aborted(), "{framing:?} {spelled}");
            // A late answer to the cancelled host request is dropped quietly.
            host.answer(&call, json!({ "value": "too late" }));
            let schemas = host.request("tools/schemas", json!({}));
            assert_eq!(schemas["result"].as_array().map(Vec::len), Some(1));
            assert_eq!(host.finish(), 0);
        }
    }
}

#[test]
fn cancelling_an_unknown_request_is_ignored() {
    for framing in FRAMINGS {
        let mut host = Host::initialized(framing, json!({}), json!({}));
        for params in [
            json!({ "id": 12345 }),
            json!({ "id": "nothing" }),
            json!({}),
        ] {
            host.send(&json!({ "jsonrpc": "2.0", "method": "$/cancelRequest", "params": params }));
        }
        host.send(&json!({ "jsonrpc": "2.0", "id": "next", "method": "tools/schemas" }));
        assert_eq!(
            host.read().unwrap(),
            json!({ "jsonrpc": "2.0", "id": "next", "result": [] })
        );
        assert_eq!(host.finish(), 0);
    }
}

/// A `tools/get` request for an unknown name (answered `null`) of exactly `size` bytes.
fn request_of_size(id: u64, size: usize) -> String {
    let text = |name: &str| {
        json!({ "jsonrpc": "2.0", "id": id, "method": "tools/get", "params": { "name": name } })
            .to_string()
    };
    let padding = size - text("").len();
    let request = text(&"x".repeat(padding));
    assert_eq!(request.len(), size);
    request
}

#[test]
fn an_over_long_ndjson_line_is_refused_without_buffering_and_the_next_line_is_served() {
    // (An LSP frame over the limit ends the connection: see `oversized.rs`.)
    const LIMIT: usize = 4096;
    let config = temp_file(
        "limits.json",
        &json!({ "transport": { "maxMessageBytes": LIMIT } }).to_string(),
    );
    let config = config.to_str().unwrap();
    let framing = Framing::Ndjson;
    let mut host = Host::spawn_with(
        &["--config", config, "serve", "--framing", flag(framing)],
        framing,
    );
    let result = host.initialize(json!({}), json!({}));
    assert_eq!(result["capabilities"]["maxMessageBytes"], LIMIT);
    let null_answer = |id: u64| json!({ "jsonrpc": "2.0", "id": id, "result": null });
    let refusal = |size: usize| {
        anonymous_error(
            -32600,
            &format!("message of {size} bytes exceeds transport.maxMessageBytes ({LIMIT})"),
        )
    };
    host.send_text(&request_of_size(10, LIMIT));
    assert_eq!(host.read().unwrap(), null_answer(10));
    host.send_text(&request_of_size(11, LIMIT + 1));
    assert_eq!(host.read().unwrap(), refusal(LIMIT + 1));
    host.send_text(&request_of_size(12, 100));
    assert_eq!(host.read().unwrap(), null_answer(12));

    // 64 MiB past the limit: dropped as it streams by, never held in memory.
    let before = host.peak_memory_kib();
    let huge = 64 << 20;
    host.send_text(&request_of_size(13, huge));
    assert_eq!(host.read().unwrap(), refusal(huge));
    host.send_text(&request_of_size(14, 100));
    assert_eq!(host.read().unwrap(), null_answer(14));
    let growth = host.peak_memory_kib().saturating_sub(before);
    assert!(growth < 16 * 1024, "peak memory grew by {growth} KiB");
    assert_eq!(host.finish(), 0);
}

#[test]
fn transport_limits_from_initialize_take_effect() {
    for framing in FRAMINGS {
        let mut host = Host::initialized(
            framing,
            json!({}),
            json!({ "transport": { "maxMessageBytes": 2048, "maxNestingDepth": 40 } }),
        );
        host.send_text(&format!("{}{}", "[".repeat(41), "]".repeat(41)));
        assert_eq!(
            host.read().unwrap(),
            anonymous_error(
                -32600,
                "invalid request: JSON nested deeper than transport.maxNestingDepth (40)"
            ),
            "{framing:?}"
        );
        host.send_text(&request_of_size(21, 2048));
        assert_eq!(
            host.read().unwrap(),
            json!({ "jsonrpc": "2.0", "id": 21, "result": null })
        );
        host.send_text(&request_of_size(20, 2049));
        assert_eq!(
            host.read().unwrap(),
            anonymous_error(
                -32600,
                "message of 2049 bytes exceeds transport.maxMessageBytes (2048)"
            ),
            "{framing:?}"
        );
        match framing {
            // The frame's body was not read: the host ends the connection.
            Framing::Lsp => assert_eq!(host.wait_exit().code, Some(1)),
            Framing::Ndjson => assert_eq!(host.finish(), 0),
        }
    }
}

#[test]
fn lsp_garbage_before_a_header_is_skipped_with_a_warning_and_the_next_frame_served() {
    // (garbage, the warning the host logs)
    let cases: [(&[u8], &str); 6] = [
        (b"hello\r\n", "expected a header line (7 bytes skipped)"),
        (b"xx{", "expected a header line (3 bytes skipped)"),
        (
            b"\xff\x00\x13garbage\n",
            "expected a header line (11 bytes skipped)",
        ),
        (
            br#"{"jsonrpc":"2.0","id":5,"method":"tools/schemas"}"#,
            "expected a header line (49 bytes skipped)",
        ),
        (
            b"Content-Type: text/plain\r\n\r\n",
            "header block has no Content-Length (28 bytes skipped)",
        ),
        (
            b"Content-Length: abc\r\n\r\n",
            "invalid Content-Length (23 bytes skipped)",
        ),
    ];
    let mut host = Host::initialized(Framing::Lsp, json!({}), json!({}));
    for (index, (garbage, _)) in cases.iter().enumerate() {
        host.write_raw(garbage);
        host.send(&json!({ "jsonrpc": "2.0", "id": index, "method": "tools/schemas" }));
        assert_eq!(
            host.read().unwrap(),
            json!({ "jsonrpc": "2.0", "id": index, "result": [] }),
            "{:?}",
            String::from_utf8_lossy(garbage)
        );
    }
    let finished = host.finish_all();
    assert_eq!(finished.code, Some(0));
    for (_, warning) in cases {
        assert!(
            finished
                .stderr
                .contains(&format!("skipped input: {warning}")),
            "no warning {warning:?} in {}",
            finished.stderr
        );
    }
}

#[test]
fn an_ndjson_garbage_line_is_a_parse_error_and_the_next_line_is_served() {
    let mut host = Host::initialized(Framing::Ndjson, json!({}), json!({}));
    host.write_raw(b"hello\n\xff\xfe\n");
    assert_eq!(
        host.read().unwrap(),
        anonymous_error(-32700, "parse error: expected value at line 1 column 1")
    );
    assert_eq!(
        host.read().unwrap(),
        anonymous_error(
            -32700,
            "parse error: invalid UTF-8: invalid utf-8 sequence of 1 bytes from index 0"
        )
    );
    let schemas = host.request("tools/schemas", json!({}));
    assert_eq!(schemas["result"], json!([]));
    assert_eq!(host.finish(), 0);
}

#[test]
fn malformed_json_is_a_parse_error_with_a_null_id() {
    let cases: [(&[u8], &str); 5] = [
        (b"{not json}", "key must be a string at line 1 column 2"),
        (
            br#"{"jsonrpc":"2.0","id":1,"method":"x""#,
            "EOF while parsing an object at line 1 column 36",
        ),
        (
            br#"[{"jsonrpc":"2.0"}"#,
            "EOF while parsing a list at line 1 column 18",
        ),
        (b"5x", "trailing characters at line 1 column 2"),
        (
            b"{\"a\":\"\xff\"}",
            "invalid UTF-8: invalid utf-8 sequence of 1 bytes from index 6",
        ),
    ];
    for framing in FRAMINGS {
        let mut host = Host::initialized(framing, json!({}), json!({}));
        for (payload, message) in cases {
            host.write_raw(&framing.frame(payload));
            assert_eq!(
                host.read().unwrap(),
                anonymous_error(-32700, &format!("parse error: {message}")),
                "{framing:?} {:?}",
                String::from_utf8_lossy(payload)
            );
        }
        let schemas = host.request("tools/schemas", json!({}));
        assert_eq!(schemas["result"], json!([]));
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn wrong_shapes_are_invalid_requests_naming_the_field() {
    let version = "invalid request: \"jsonrpc\" must be \"2.0\"";
    let bad_id = "invalid request: \"id\" must be a string, a non-negative integer or null";
    let cases = [
        (
            r#"{"jsonrpc":"1.0","id":7,"method":"tools/schemas"}"#,
            json!(7),
            version,
        ),
        (r#"{"id":8,"method":"tools/schemas"}"#, json!(8), version),
        (
            r#"{"jsonrpc":2,"id":"v","method":"tools/schemas"}"#,
            json!("v"),
            version,
        ),
        (
            r#"{"jsonrpc":"2.0","id":9,"method":5}"#,
            json!(9),
            "invalid request: \"method\" must be a string",
        ),
        (
            r#"{"jsonrpc":"2.0","id":{},"method":"tools/schemas"}"#,
            json!(null),
            bad_id,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/schemas"}"#,
            json!(null),
            bad_id,
        ),
        (
            r#"{"jsonrpc":"2.0","id":true,"method":"tools/schemas"}"#,
            json!(null),
            bad_id,
        ),
        (
            r#"{"jsonrpc":"2.0","id":10,"method":"tools/schemas","params":"x"}"#,
            json!(10),
            "invalid request: \"params\" must be an object or an array",
        ),
        (
            r#"{"jsonrpc":"2.0","id":11}"#,
            json!(null),
            "invalid request: \"method\" is missing (a response needs \"result\" or \"error\")",
        ),
        (
            r#"{"jsonrpc":"2.0","id":"d","method":"tools/schemas","jsonrpc":"2.0"}"#,
            json!(null),
            "invalid request: duplicate field `jsonrpc` at line 1 column 60",
        ),
        (
            "5",
            json!(null),
            "invalid request: a message must be a JSON object",
        ),
        (
            r#""tools/schemas""#,
            json!(null),
            "invalid request: a message must be a JSON object",
        ),
        (
            "null",
            json!(null),
            "invalid request: a message must be a JSON object",
        ),
    ];
    for framing in FRAMINGS {
        let mut host = Host::initialized(framing, json!({}), json!({}));
        for (text, id, message) in &cases {
            host.send_text(text);
            assert_eq!(
                host.read().unwrap(),
                error_response(id.clone(), -32600, message),
                "{framing:?} {text}"
            );
        }
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn unknown_methods_are_method_not_found_and_unknown_notifications_are_ignored() {
    for framing in FRAMINGS {
        let mut host = Host::initialized(framing, json!({}), json!({}));
        host.send(&json!({ "jsonrpc": "2.0", "method": "foo/notify", "params": {} }));
        for method in ["foo/bar", "tools/Schemas", "", "rpc.discover"] {
            host.send(&json!({ "jsonrpc": "2.0", "id": method, "method": method }));
            assert_eq!(
                host.read().unwrap(),
                error_response(
                    json!(method),
                    -32601,
                    &format!("method not found: {method:?}")
                ),
                "{framing:?}"
            );
        }
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn wrong_params_are_invalid_params_naming_the_field_path() {
    let cases = [
        (
            "tools/register",
            json!({ "tool": { "name": 5 } }),
            "invalid params: tool.name: invalid type: integer `5`, expected a string at line 1 column 17",
        ),
        (
            "tools/get",
            json!({}),
            "invalid params: missing field `name` at line 1 column 2",
        ),
        (
            "tools/get",
            json!({ "name": ["x"] }),
            "invalid params: name: invalid type: sequence, expected a string at line 1 column 8",
        ),
        (
            "tools/executeBatch",
            json!({ "calls": [{ "callId": 1, "name": "x", "arguments": {} }] }),
            "invalid params: calls[0].callId: invalid type: integer `1`, expected a string at line 1 column 21",
        ),
        (
            "tools/execute",
            json!({ "callId": "c", "name": "x", "arguments": {}, "agent": 5 }),
            "invalid params: agent: invalid type: integer `5`, expected a string at line 1 column 49",
        ),
    ];
    for framing in FRAMINGS {
        let mut host = Host::initialized(framing, json!({ "executeTools": true }), json!({}));
        for (method, params, message) in &cases {
            let response = host.request(method, params.clone());
            assert_eq!(response["error"]["code"], -32602, "{framing:?} {response}");
            assert_eq!(
                response["error"],
                json!({ "code": -32602, "message": message }),
                "{framing:?} {method}"
            );
        }
        assert_eq!(host.finish(), 0);
    }
}

/// `tools/execute` of an unknown tool whose arguments nest `depth` objects deep.
fn deep_execute(id: u64, depth: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/execute","params":{{"callId":"deep","name":"nope","arguments":{}1{}}}}}"#,
        r#"{"a":"#.repeat(depth),
        "}".repeat(depth)
    )
}

#[test]
fn input_nested_deeper_than_the_limit_is_refused_before_parsing() {
    let config = temp_file("depth.toml", "[transport]\nmaxNestingDepth = 64\n");
    let config = config.to_str().unwrap();
    let unknown_tool = |id: u64| {
        json!({ "jsonrpc": "2.0", "id": id, "result": {
            "isError": true,
            "error": { "message": "unknown tool \"nope\"", "info": { "name": "HarnessError", "code": "UNKNOWN_TOOL" } },
            "content": [{ "type": "text", "text": "Error: unknown tool \"nope\"" }]
        } })
    };
    let refusal = |limit: u32| {
        anonymous_error(
            -32600,
            &format!(
                "invalid request: JSON nested deeper than transport.maxNestingDepth ({limit})"
            ),
        )
    };
    for framing in FRAMINGS {
        let mut host = Host::spawn_with(
            &["serve", "--framing", flag(framing), "--config", config],
            framing,
        );
        host.initialize(json!({}), json!({}));
        // The envelope and `params` are two levels: 62 more reach the limit exactly.
        host.send_text(&deep_execute(1, 62));
        assert_eq!(host.response_to(&json!(1)), unknown_tool(1), "{framing:?}");
        host.send_text(&deep_execute(2, 63));
        assert_eq!(host.read().unwrap(), refusal(64), "{framing:?}");
        // Brackets inside strings are text, not nesting.
        let bracketed = "[{".repeat(100);
        let answer = host.request("tools/get", json!({ "name": bracketed }));
        assert_eq!(answer["result"], json!(null), "{framing:?}");
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn the_default_nesting_limit_protects_the_host_and_input_within_it_is_served() {
    for framing in FRAMINGS {
        let mut host = Host::initialized(framing, json!({}), json!({}));
        host.send_text(&"[".repeat(1_000_000));
        assert_eq!(
            host.read().unwrap(),
            anonymous_error(
                -32600,
                "invalid request: JSON nested deeper than transport.maxNestingDepth (20000)"
            ),
            "{framing:?}"
        );
        host.send_text(&deep_execute(1, 19_990));
        let response = host.response_to(&json!(1));
        assert_eq!(
            response["result"]["error"]["info"]["code"], "UNKNOWN_TOOL",
            "{framing:?}"
        );
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn eof_without_input_or_inside_a_frame_exits_zero_without_output() {
    let cases: [(&[&str], &[u8]); 6] = [
        (&["serve"], b""),
        (&["serve", "--framing", "ndjson"], b""),
        (&["serve", "--framing", "auto"], b""),
        (&["serve"], b"Content-Length: 50\r\n\r\n{\"jsonrpc\""),
        (&["serve"], b"Content-Len"),
        (&["serve", "--framing", "auto"], b"  \r\n"),
    ];
    for (args, input) in cases {
        let mut host = Host::spawn_with(args, Framing::Lsp);
        host.write_raw(input);
        let finished = host.finish_all();
        assert_eq!(finished.code, Some(0), "{args:?} {input:?}");
        assert_eq!(
            String::from_utf8_lossy(&finished.stdout),
            "",
            "{args:?} {input:?}"
        );
    }
}

#[test]
fn a_final_ndjson_line_without_newline_is_still_served_at_eof() {
    let mut host = Host::spawn(Framing::Ndjson);
    host.write_raw(br#"{"jsonrpc":"2.0","id":1,"method":"tools/schemas"}"#);
    host.close_stdin();
    assert_eq!(
        host.read_to_end(),
        [error_response(
            json!(1),
            -32002,
            "server not initialized: send initialize first"
        )]
    );
    assert_eq!(host.finish(), 0);
}

#[test]
fn eof_aborts_a_call_whose_client_never_answers_and_exits_zero() {
    for framing in FRAMINGS {
        let mut host = with_echo_tool(framing);
        host.send(&execute_echo(json!("stuck"), "never"));
        let call = host.next_with_method("client/executeTool");
        // A batch whose reply waits on a second unanswered call.
        host.send(&json!([execute_echo(
            json!("stuck-in-batch"),
            "never-either"
        )]));
        let batch_call = host.next_with_method("client/executeTool");
        host.close_stdin();
        let mut rest = host.read_to_end();
        rest.retain(|message| message["method"] != "tools/listChanged");
        // Which call the host aborts first is not specified.
        rest.sort_by_key(|message| message.to_string());
        let cancel = |call: &Value| json!({ "jsonrpc": "2.0", "method": "$/cancelRequest", "params": { "id": call["id"] } });
        let observed = |call_id: &str| {
            json!({ "jsonrpc": "2.0", "method": "tools/result", "params": {
                "execution": { "token": "<token>", "callId": call_id, "name": "echo" },
                "result": aborted()
            } })
        };
        let mut expected = vec![
            cancel(&call),
            cancel(&batch_call),
            observed("call-never"),
            observed("call-never-either"),
            json!({ "jsonrpc": "2.0", "id": "stuck", "result": aborted() }),
            json!([{ "jsonrpc": "2.0", "id": "stuck-in-batch", "result": aborted() }]),
        ];
        expected.sort_by_key(|message| message.to_string());
        for message in &mut rest {
            if message["method"] == "tools/result" {
                message["params"]["execution"]["token"] = json!("<token>");
            }
        }
        assert_eq!(rest, expected, "{framing:?}");
        assert_eq!(host.finish(), 0);
    }
}
