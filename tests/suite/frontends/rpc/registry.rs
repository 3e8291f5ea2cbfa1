//! The registry over the wire, through the real binary: register (DSL `parameters` and raw
//! `inputSchema`), unregister, reserve, schemas, get, isAdmitted, restrict, presentAs,
//! agents/open and agents/close, `tools/listChanged`, errors with `data.code`, and
//! 10,000-deep schemas and arguments.

#![allow(clippy::unwrap_used)]

use crate::support::pipeline as pipeline_support;

use pipeline_support::{Framing, Host, echo_spec, with_big_stack};
use serde_json::{Value, json};

const FRAMINGS: [Framing; 2] = [Framing::Lsp, Framing::Ndjson];

fn host(framing: Framing) -> Host {
    Host::initialized(framing, json!({ "executeTools": true }), json!({}))
}

/// The registration id of a successful registration-like request.
fn registered(host: &mut Host, method: &str, params: Value) -> String {
    let response = host.request(method, params);
    response["result"]["registration"]
        .as_str()
        .unwrap_or_else(|| panic!("{method} failed: {response}"))
        .to_string()
}

fn register(host: &mut Host, tool: Value, agent: Option<&str>) -> String {
    let mut params = json!({ "tool": tool });
    if let Some(agent) = agent {
        params["agent"] = json!(agent);
    }
    registered(host, "tools/register", params)
}

/// `(error.code, error.data.code, error.message)` of a failed request.
fn error_of(response: &Value) -> (i64, String, String) {
    let error = &response["error"];
    (
        error["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("no error: {response}")),
        error["data"]["code"].as_str().unwrap_or("").to_string(),
        error["message"].as_str().unwrap_or("").to_string(),
    )
}

fn names(host: &mut Host, agent: Option<&str>) -> Vec<String> {
    let params = agent.map_or(json!({}), |a| json!({ "agent": a }));
    let response = host.request("tools/schemas", params);
    response["result"]
        .as_array()
        .unwrap_or_else(|| panic!("{response}"))
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect()
}

fn labelled(name: &str, description: &str) -> Value {
    json!({ "name": name, "description": description, "output": { "schema": { "type": "string" } } })
}

#[test]
fn schemas_are_lexicographic_and_get_resolves_one_in_both_framings() {
    for framing in FRAMINGS {
        let mut host = host(framing);
        for name in ["b", "a", "C", "a_b"] {
            register(&mut host, echo_spec(name), None);
        }
        let raw_input = json!({
            "type": "object",
            "properties": { "n": { "type": "integer", "minimum": 3 } },
            "required": ["n"]
        });
        register(
            &mut host,
            json!({
                "name": "raw",
                "description": "Raw schema.",
                "inputSchema": raw_input,
                "output": { "jsonSchema": { "type": "array", "items": { "type": "string" } } }
            }),
            None,
        );
        assert_eq!(names(&mut host, None), ["C", "a", "a_b", "b", "raw"]);
        let schemas = host.request("tools/schemas", json!({}));
        assert_eq!(
            schemas["result"][1],
            json!({
                "name": "a",
                "description": "Echo the text back.",
                "inputSchema": {
                    "type": "object",
                    "properties": { "text": { "type": "string" } },
                    "required": ["text"]
                },
                "outputSchema": { "type": "string" }
            })
        );
        let raw = host.request("tools/get", json!({ "name": "raw" }));
        assert_eq!(
            raw["result"],
            json!({
                "name": "raw",
                "description": "Raw schema.",
                "inputSchema": raw_input,
                "outputSchema": { "type": "array", "items": { "type": "string" } }
            })
        );
        let missing = host.request("tools/get", json!({ "name": "zzz" }));
        assert_eq!(missing["result"], json!(null), "{missing}");
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn the_host_validates_dsl_arguments_and_leaves_raw_ones_to_the_client() {
    let mut host = host(Framing::Ndjson);
    register(&mut host, echo_spec("dsl"), None);
    register(
        &mut host,
        json!({
            "name": "raw",
            "inputSchema": {
                "type": "object",
                "properties": { "text": { "type": "string" } },
                "required": ["text"],
                "additionalProperties": false
            },
            "output": { "schema": { "type": "string" } }
        }),
        None,
    );
    let invalid = host.request(
        "tools/execute",
        json!({ "callId": "c1", "name": "dsl", "arguments": { "text": 1 } }),
    );
    assert_eq!(
        invalid["result"],
        json!({
            "isError": true,
            "error": {
                "message": "invalid arguments: \"text\" must be a string",
                "info": { "name": "ToolArgsError", "code": "INVALID_ARGS" }
            },
            "content": [{ "type": "text", "text": "Error: invalid arguments: \"text\" must be a string" }]
        })
    );
    assert_eq!(host.drain("client/executeTool"), Vec::<Value>::new());
    // The raw schema says otherwise, but the client owns validation: the host dispatches.
    let id = host.start(
        "tools/execute",
        json!({ "callId": "c2", "name": "raw", "arguments": { "text": 1, "extra": [] } }),
    );
    let call = host.next_with_method("client/executeTool");
    assert_eq!(
        call["params"]["arguments"],
        json!({ "text": 1, "extra": [] })
    );
    host.answer(&call, json!({ "value": "validated by the client" }));
    let response = host.response_to(&id);
    assert_eq!(response["result"]["value"], "validated by the client");
    assert_eq!(host.finish(), 0);
}

#[test]
fn agent_scopes_shadow_restrict_and_close_over_the_wire() {
    let mut host = host(Framing::Lsp);
    for (agent, parent) in [("x", None), ("x-child", Some("x")), ("y", None)] {
        let mut params = json!({ "agent": agent });
        if let Some(parent) = parent {
            params["parent"] = json!(parent);
        }
        assert_eq!(host.request("agents/open", params)["result"], json!(null));
    }
    register(&mut host, labelled("read", "global read"), None);
    register(&mut host, labelled("bash", "global bash"), None);
    register(&mut host, labelled("read", "x's read"), Some("x"));
    let reservation = registered(&mut host, "tools/reserve", json!({ "name": "later" }));
    registered(
        &mut host,
        "tools/restrict",
        json!({ "agent": "x", "deny": ["bash"] }),
    );
    registered(
        &mut host,
        "tools/restrict",
        json!({ "agent": "y", "allow": ["read", "later"] }),
    );
    assert_eq!(names(&mut host, None), ["bash", "read"]);
    assert_eq!(names(&mut host, Some("x")), ["read"]);
    assert_eq!(names(&mut host, Some("x-child")), ["read"]);
    assert_eq!(names(&mut host, Some("y")), ["read"]);
    let description = |host: &mut Host, name: &str, agent: &str| {
        host.request("tools/get", json!({ "name": name, "agent": agent }))["result"]["description"]
            .clone()
    };
    assert_eq!(description(&mut host, "read", "x"), "x's read");
    // x-child inherits x's layer, whose `read` shadows the global one.
    assert_eq!(description(&mut host, "read", "x-child"), "x's read");
    assert_eq!(description(&mut host, "bash", "x"), json!(null));
    let admitted = |host: &mut Host, name: &str, agent: Option<&str>| {
        let mut params = json!({ "name": name });
        if let Some(agent) = agent {
            params["agent"] = json!(agent);
        }
        host.request("tools/isAdmitted", params)["result"].clone()
    };
    let cases = [
        ("bash", None, true),
        ("bash", Some("x"), false),
        ("bash", Some("x-child"), false),
        ("bash", Some("y"), false),
        ("later", Some("y"), true),
        ("later", Some("x"), true),
        ("never", Some("x"), true),
        ("never", Some("y"), false),
    ];
    for (name, agent, expected) in cases {
        assert_eq!(
            admitted(&mut host, name, agent),
            json!(expected),
            "{name} {agent:?}"
        );
    }
    // The reservation made `later` restrictable; disposing it makes it unknown again.
    host.request("tools/unregister", json!({ "registration": reservation }));
    let refused = host.request(
        "tools/restrict",
        json!({ "agent": "x", "allow": ["later"] }),
    );
    assert_eq!(error_of(&refused).1, "UNKNOWN_NAME");
    assert_eq!(
        host.request("agents/close", json!({ "agent": "x" }))["result"],
        json!(null)
    );
    for agent in ["x", "x-child"] {
        let gone = host.request("tools/schemas", json!({ "agent": agent }));
        assert_eq!(
            error_of(&gone),
            (
                -32803,
                "UNKNOWN_AGENT".into(),
                format!("unknown agent \"{agent}\" (open it with agents/open first)")
            )
        );
    }
    assert_eq!(
        host.request("agents/open", json!({ "agent": "x" }))["result"],
        json!(null)
    );
    assert_eq!(names(&mut host, Some("x")), ["bash", "read"]);
    assert_eq!(description(&mut host, "read", "x"), "global read");
    assert_eq!(host.finish(), 0);
}

#[test]
fn unregister_disposes_any_kind_of_registration() {
    let mut host = host(Framing::Ndjson);
    host.request("agents/open", json!({ "agent": "x" }));
    let tool = register(&mut host, labelled("a", "global"), None);
    register(&mut host, labelled("b", "global"), None);
    let local = register(&mut host, labelled("a", "local"), Some("x"));
    let restriction = registered(
        &mut host,
        "tools/restrict",
        json!({ "agent": "x", "deny": ["b"] }),
    );
    let presentation = registered(
        &mut host,
        "tools/presentAs",
        json!({ "agent": "x", "mode": "code" }),
    );
    let reservation = registered(
        &mut host,
        "tools/reserve",
        json!({ "name": "r", "agent": "x" }),
    );
    assert_eq!(names(&mut host, Some("x")), ["a"]);
    for id in [&restriction, &presentation, &local, &reservation, &tool] {
        let response = host.request("tools/unregister", json!({ "registration": id }));
        assert_eq!(response["result"], json!(null), "{response}");
    }
    assert_eq!(names(&mut host, Some("x")), ["b"]);
    assert_eq!(names(&mut host, None), ["b"]);
    let again = host.request("tools/unregister", json!({ "registration": tool }));
    assert_eq!(
        error_of(&again),
        (
            -32803,
            "UNKNOWN_REGISTRATION".into(),
            format!("unknown registration \"{tool}\"")
        )
    );
    // The presentation is gone: a direct call from x runs natively again.
    let id = host.start(
        "tools/execute",
        json!({ "callId": "c", "name": "b", "arguments": {}, "agent": "x" }),
    );
    let call = host.next_with_method("client/executeTool");
    host.answer(&call, json!({ "value": "native again" }));
    assert_eq!(host.response_to(&id)["result"]["value"], "native again");
    assert_eq!(host.finish(), 0);
}

#[test]
fn registry_errors_carry_a_harness_data_code() {
    let mut host = host(Framing::Lsp);
    register(&mut host, echo_spec("echo"), None);
    host.request("agents/open", json!({ "agent": "x" }));
    register(&mut host, echo_spec("mine"), Some("x"));
    host.request("tools/presentAs", json!({ "agent": "x", "mode": "both" }));
    let reserved =
        "\"run_code\" is reserved for Code Mode and cannot be registered, reserved or restricted";
    let empty = "restrict needs exactly one non-empty allow or deny list";
    let cases: Vec<(&str, Value, &str, String)> = vec![
        ("tools/register", json!({ "tool": echo_spec("echo") }), "DUPLICATE_TOOL",
            "tool \"echo\" is already registered in this layer".into()),
        ("tools/register", json!({ "tool": echo_spec("run_code") }), "RESERVED_NAME", reserved.into()),
        ("tools/register", json!({ "tool": echo_spec("run_code"), "agent": "x" }), "RESERVED_NAME", reserved.into()),
        ("tools/register", json!({ "tool": { "name": "o" } }), "MISSING_OUTPUT",
            "tool definition needs an output declaration: output.schema (DSL) or output.jsonSchema (raw)".into()),
        ("tools/register", json!({ "tool": { "name": "o", "output": {} } }), "MISSING_OUTPUT",
            "tool definition needs an output declaration: output.schema (DSL) or output.jsonSchema (raw)".into()),
        ("tools/register",
            json!({ "tool": { "name": "o", "output": { "schema": { "type": "string" }, "jsonSchema": { "type": "string" } } } }),
            "INVALID_DEFINITION", "output declaration takes exactly one of output.schema or output.jsonSchema".into()),
        ("tools/register",
            json!({ "tool": { "name": "o", "parameters": {}, "inputSchema": {}, "output": { "schema": { "type": "string" } } } }),
            "INVALID_DEFINITION", "tool definition takes at most one of parameters (DSL) or inputSchema (raw)".into()),
        ("tools/register", json!({ "tool": { "name": "o", "output": { "schema": { "type": "text" } } } }),
            "UNSUPPORTED_SCHEMA", "unsupported schema: output.schema: unknown type \"text\"".into()),
        ("tools/register", json!({ "tool": { "name": "o", "output": { "schema": { "type": "string" } }, "timeoutMs": 0 } }),
            "INVALID_TIMEOUT", "timeoutMs must be a positive, finite number of milliseconds (got 0)".into()),
        ("tools/register", json!({ "tool": echo_spec("z"), "agent": "ghost" }), "UNKNOWN_AGENT",
            "unknown agent \"ghost\" (open it with agents/open first)".into()),
        ("tools/reserve", json!({ "name": "run_code" }), "RESERVED_NAME", reserved.into()),
        ("tools/restrict", json!({ "deny": ["echo"] }), "NEEDS_AGENT",
            "restrict needs an agent scope: the process-wide setting is the host config".into()),
        ("tools/restrict", json!({ "agent": "x" }), "EMPTY_FILTER", empty.into()),
        ("tools/restrict", json!({ "agent": "x", "allow": [] }), "EMPTY_FILTER", empty.into()),
        ("tools/restrict", json!({ "agent": "x", "allow": ["echo"], "deny": ["echo"] }), "EMPTY_FILTER", empty.into()),
        ("tools/restrict", json!({ "agent": "x", "deny": ["nope"] }), "UNKNOWN_NAME",
            "restrict names unknown tool \"nope\" (register or reserve it globally or in an ancestor scope first)".into()),
        ("tools/restrict", json!({ "agent": "x", "deny": ["mine"] }), "LOCAL_NAME",
            "restrict names \"mine\", which is local to agent \"x\": restrictions mask inherited tools only".into()),
        ("tools/restrict", json!({ "agent": "x", "deny": ["run_code"] }), "RESERVED_NAME", reserved.into()),
        ("tools/restrict", json!({ "agent": "ghost", "deny": ["echo"] }), "UNKNOWN_AGENT",
            "unknown agent \"ghost\" (open it with agents/open first)".into()),
        ("tools/presentAs", json!({ "mode": "code" }), "NEEDS_AGENT",
            "presentAs needs an agent scope: the process-wide setting is the host config".into()),
        ("tools/presentAs", json!({ "agent": "x", "mode": "code" }), "PRESENTATION_DECLARED",
            "agent \"x\" already declared a presentation".into()),
        ("tools/unregister", json!({ "registration": "tool:999" }), "UNKNOWN_REGISTRATION",
            "unknown registration \"tool:999\"".into()),
        ("agents/open", json!({ "agent": "x" }), "AGENT_EXISTS", "agent \"x\" is already open".into()),
        ("agents/open", json!({ "agent": "y", "parent": "ghost" }), "UNKNOWN_AGENT",
            "unknown agent \"ghost\" (open it with agents/open first)".into()),
        ("agents/close", json!({ "agent": "ghost" }), "UNKNOWN_AGENT",
            "unknown agent \"ghost\" (open it with agents/open first)".into()),
        ("tools/get", json!({ "name": "echo", "agent": "ghost" }), "UNKNOWN_AGENT",
            "unknown agent \"ghost\" (open it with agents/open first)".into()),
        ("tools/execute", json!({ "callId": "c", "name": "echo", "agent": "ghost" }), "UNKNOWN_AGENT",
            "unknown agent \"ghost\" (open it with agents/open first)".into()),
    ];
    for (method, params, code, message) in cases {
        let response = host.request(method, params.clone());
        assert_eq!(
            error_of(&response),
            (-32803, code.to_string(), message),
            "{method} {params}"
        );
    }
    // Nothing above changed what any scope sees.
    assert_eq!(names(&mut host, None), ["echo"]);
    assert_eq!(names(&mut host, Some("x")), ["echo", "mine"]);
    assert_eq!(host.finish(), 0);
}

#[test]
fn registering_client_tools_needs_the_execute_tools_capability() {
    let mut host = Host::initialized(Framing::Ndjson, json!({}), json!({}));
    let response = host.request("tools/register", json!({ "tool": echo_spec("echo") }));
    assert_eq!(
        error_of(&response),
        (
            -32803,
            "CLIENT_CAPABILITY".into(),
            "tools/register registers client-executed tools: declare capabilities.executeTools in initialize".into()
        )
    );
    assert_eq!(host.finish(), 0);
}

#[test]
fn list_changed_names_the_scope_once_per_visible_change() {
    let mut host = host(Framing::Ndjson);
    let check = |host: &mut Host, method: &str, params: Value, expected: Vec<Value>| {
        let response = host.request(method, params.clone());
        assert!(response.get("error").is_none(), "{method}: {response}");
        let seen: Vec<Value> = host
            .drain("tools/listChanged")
            .into_iter()
            .map(|m| m["params"].clone())
            .collect();
        assert_eq!(seen, expected, "{method} {params}");
        response
    };
    let x = json!({ "agent": "x" });
    check(
        &mut host,
        "agents/open",
        json!({ "agent": "x" }),
        vec![x.clone()],
    );
    let global = check(
        &mut host,
        "tools/register",
        json!({ "tool": echo_spec("a") }),
        vec![json!({})],
    );
    check(
        &mut host,
        "tools/register",
        json!({ "tool": echo_spec("a"), "agent": "x" }),
        vec![x.clone()],
    );
    let reservation = check(
        &mut host,
        "tools/reserve",
        json!({ "name": "later" }),
        vec![],
    );
    check(&mut host, "tools/schemas", json!({}), vec![]);
    check(
        &mut host,
        "tools/restrict",
        json!({ "agent": "x", "deny": ["later"] }),
        vec![x.clone()],
    );
    check(
        &mut host,
        "tools/presentAs",
        json!({ "agent": "x", "mode": "both" }),
        vec![x.clone()],
    );
    check(
        &mut host,
        "tools/unregister",
        json!({ "registration": reservation["result"]["registration"] }),
        vec![],
    );
    check(
        &mut host,
        "tools/unregister",
        json!({ "registration": global["result"]["registration"] }),
        vec![json!({})],
    );
    check(
        &mut host,
        "agents/open",
        json!({ "agent": "c", "parent": "x" }),
        vec![json!({ "agent": "c" })],
    );
    check(
        &mut host,
        "agents/close",
        json!({ "agent": "x" }),
        vec![x, json!({ "agent": "c" })],
    );
    // A refused change notifies nobody.
    let refused = host.request("tools/restrict", json!({ "agent": "ghost", "deny": ["a"] }));
    assert_eq!(error_of(&refused).1, "UNKNOWN_AGENT");
    assert_eq!(host.drain("tools/listChanged"), Vec::<Value>::new());
    assert_eq!(host.finish(), 0);
}

#[test]
fn under_code_a_direct_call_is_routed_back_and_a_wire_parent_cannot_exempt_it() {
    let mut host = host(Framing::Lsp);
    register(&mut host, echo_spec("read"), None);
    host.request("agents/open", json!({ "agent": "coder" }));
    registered(
        &mut host,
        "tools/presentAs",
        json!({ "agent": "coder", "mode": "code" }),
    );
    let message = "unknown tool \"read\": only `run_code` is callable directly — call `read` from inside a `run_code` program instead";
    for params in [
        json!({ "callId": "c1", "name": "read", "arguments": { "text": "x" }, "agent": "coder" }),
        json!({ "callId": "c2", "name": "read", "arguments": { "text": "x" }, "agent": "coder", "parent": "t1" }),
    ] {
        let response = host.request("tools/execute", params);
        assert_eq!(
            response["result"],
            json!({
                "isError": true,
                "error": { "message": message, "info": { "name": "HarnessError", "code": "UNKNOWN_TOOL" } },
                "content": [{ "type": "text", "text": format!("Error: {message}") }]
            })
        );
    }
    assert_eq!(host.drain("client/executeTool"), Vec::<Value>::new());
    // The catalog is unchanged for the coder.
    assert_eq!(names(&mut host, Some("coder")), ["read"]);
    assert_eq!(host.finish(), 0);
}

/// An object from `(key, value)` members, moving `value` in (`json!` would re-serialize it,
/// which is quadratic when building deep values level by level).
fn object(members: Vec<(&str, Value)>) -> Value {
    Value::Object(
        members
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

/// `{"type":"array","items": … }` nested `depth` times around a string schema.
fn deep_array_spec(depth: usize) -> Value {
    let mut spec = json!({ "type": "string" });
    for _ in 0..depth {
        spec = object(vec![("type", json!("array")), ("items", spec)]);
    }
    spec
}

/// An object spec `{ "a": { "a": … } }` nested `depth` DSL levels (two JSON levels each).
fn deep_object_spec(depth: usize) -> Value {
    let mut spec = json!({ "type": "string" });
    for _ in 0..depth {
        spec = object(vec![
            ("type", json!("object")),
            ("additionalProperties", json!(false)),
            ("properties", object(vec![("a", spec)])),
        ]);
    }
    spec
}

fn deep_value(depth: usize, wrap: impl Fn(Value) -> Value) -> Value {
    let mut value = json!("leaf");
    for _ in 0..depth {
        value = wrap(value);
    }
    value
}

fn deep_round_trip(host: &mut Host, spec: Value, argument: Value) {
    let registration = register(
        host,
        json!({
            "name": "deep",
            "parameters": { "v": spec },
            "output": { "schema": { "type": "json" } }
        }),
        None,
    );
    let schema = host.request("tools/get", json!({ "name": "deep" }));
    assert_eq!(schema["result"]["name"], "deep");
    let schemas = host.request("tools/schemas", json!({}));
    assert_eq!(schemas["result"][0]["name"], "deep");
    let id = host.start(
        "tools/execute",
        json!({ "callId": "c", "name": "deep", "arguments": { "v": argument } }),
    );
    let call = host.next_with_method("client/executeTool");
    assert!(
        call["params"]["arguments"]["v"] == argument,
        "the deep argument did not arrive intact"
    );
    host.answer(&call, json!({ "value": argument }));
    let response = host.response_to(&id);
    assert_eq!(
        response["result"]["isError"], false,
        "{}",
        response["result"]["error"]
    );
    assert!(response["result"]["value"] == argument);
    let observed = host.next_with_method("tools/result");
    assert_eq!(observed["params"]["execution"]["callId"], "c");
    // An invalid deep argument is a path-qualified INVALID_ARGS result, not a crash.
    let response = host.request(
        "tools/execute",
        json!({ "callId": "d", "name": "deep", "arguments": { "v": 5 } }),
    );
    assert_eq!(response["result"]["error"]["info"]["code"], "INVALID_ARGS");
    let response = host.request("tools/unregister", json!({ "registration": registration }));
    assert_eq!(response["result"], json!(null));
}

#[test]
fn a_10000_deep_array_schema_and_argument_round_trip_without_a_crash() {
    with_big_stack(|| {
        for framing in FRAMINGS {
            let mut host = host(framing);
            let argument = deep_value(10_000, |v| Value::Array(vec![v]));
            deep_round_trip(&mut host, deep_array_spec(10_000), argument);
            assert_eq!(names(&mut host, None), Vec::<String>::new());
            assert_eq!(host.finish(), 0);
        }
    });
}

#[test]
fn a_10000_deep_object_schema_and_argument_round_trip_with_a_raised_nesting_limit() {
    with_big_stack(|| {
        let mut host = Host::initialized_with_file(
            Framing::Ndjson,
            &json!({ "transport": { "maxNestingDepth": 50_000 } }),
            json!({ "executeTools": true }),
            json!({}),
        );
        let argument = deep_value(10_000, |v| object(vec![("a", v)]));
        deep_round_trip(&mut host, deep_object_spec(10_000), argument);
        assert_eq!(host.finish(), 0);
    });
}
