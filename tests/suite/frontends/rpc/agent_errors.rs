//! Every error the seed and the protocol name for the scope and presentation APIs
//! (register, reserve, restrict, presentAs, unregister, agents/open and agents/close,
//! scoped lookups, prompt assembly), each through the real binary with its exact JSON-RPC
//! code, `data.code` and message, and with nothing announced or changed by the refusal.

#![allow(clippy::unwrap_used)]

use crate::support::wire as support;

use serde_json::{Value, json};
use support::{Framing, Host, echo_spec, error_of, registration_of};

/// LSP's RequestFailed: every registry and policy refusal.
const REQUEST_FAILED: i64 = -32803;

const RESERVED: &str =
    "\"run_code\" is reserved for Code Mode and cannot be registered, reserved or restricted";
const EMPTY_FILTER: &str = "restrict needs exactly one non-empty allow or deny list";

fn unknown_agent(agent: &str) -> String {
    format!("unknown agent \"{agent}\" (open it with agents/open first)")
}

/// A host (in `mode`) with global `echo` and reserved `later`; agent `x` with its own tool
/// `mine` and reservation `mine-later`; agent `gone`, opened then closed.
fn fixture(framing: Framing, mode: &str) -> Host {
    let config = json!({ "tools": { "mode": mode } });
    let capabilities = json!({ "executeTools": true, "hooks": true });
    let mut host = Host::initialized(framing, capabilities, config);
    let setup = [
        ("tools/register", json!({ "tool": echo_spec("echo") })),
        ("tools/reserve", json!({ "name": "later" })),
        ("agents/open", json!({ "agent": "x" })),
        (
            "tools/register",
            json!({ "tool": echo_spec("mine"), "agent": "x" }),
        ),
        (
            "tools/reserve",
            json!({ "name": "mine-later", "agent": "x" }),
        ),
        ("agents/open", json!({ "agent": "gone" })),
        ("agents/close", json!({ "agent": "gone" })),
    ];
    for (method, params) in setup {
        let response = host.request(method, params);
        assert!(response.get("error").is_none(), "{method}: {response}");
    }
    host
}

/// What every scope sees, to show a refusal changed nothing.
fn views(host: &mut Host) -> Value {
    json!([
        host.request("tools/schemas", json!({}))["result"],
        host.request("tools/schemas", json!({ "agent": "x" }))["result"],
        host.request("tools/prompt", json!({}))["result"],
        host.request("tools/prompt", json!({ "agent": "x" }))["result"],
    ])
}

/// In both framings, on the fixture (in `mode`) after `setup`: each request is refused
/// with `code` and `message`, announces nothing and changes nothing any scope sees.
fn refuses_in(
    mode: &str,
    setup: &[(&str, Value)],
    requests: &[(&str, Value)],
    expected: (&str, &str),
) {
    for framing in [Framing::Lsp, Framing::Ndjson] {
        let mut host = fixture(framing, mode);
        for (method, params) in setup {
            let response = host.request(method, params.clone());
            assert!(response.get("error").is_none(), "{method}: {response}");
        }
        let before = views(&mut host);
        host.inbox.clear();
        for (method, params) in requests {
            let response = host.request(method, params.clone());
            assert_eq!(
                error_of(&response),
                (
                    REQUEST_FAILED,
                    expected.0.to_string(),
                    expected.1.to_string()
                ),
                "{method} {params} ({framing:?})"
            );
            assert_eq!(host.drain("tools/listChanged"), Vec::<Value>::new());
        }
        assert_eq!(views(&mut host), before, "{framing:?}");
        assert_eq!(host.finish(), 0);
    }
}

/// [`refuses_in`] the native mode.
fn refuses(setup: &[(&str, Value)], requests: &[(&str, Value)], expected: (&str, &str)) {
    refuses_in("native", setup, requests, expected);
}

fn with_output(mut tool: Value) -> Value {
    tool["output"] = json!({ "schema": { "type": "string" } });
    tool
}

#[test]
fn register_of_a_name_already_in_the_global_layer_is_a_duplicate() {
    refuses(
        &[],
        &[("tools/register", json!({ "tool": echo_spec("echo") }))],
        (
            "DUPLICATE_TOOL",
            "tool \"echo\" is already registered in this layer",
        ),
    );
}

#[test]
fn register_of_a_name_already_in_the_agent_layer_is_a_duplicate() {
    refuses(
        &[],
        &[(
            "tools/register",
            json!({ "tool": echo_spec("mine"), "agent": "x" }),
        )],
        (
            "DUPLICATE_TOOL",
            "tool \"mine\" is already registered in this layer",
        ),
    );
}

#[test]
fn register_of_the_run_code_name_is_refused_in_every_mode_and_layer() {
    for mode in ["native", "code", "both"] {
        refuses_in(
            mode,
            &[],
            &[
                ("tools/register", json!({ "tool": echo_spec("run_code") })),
                (
                    "tools/register",
                    json!({ "tool": echo_spec("run_code"), "agent": "x" }),
                ),
            ],
            ("RESERVED_NAME", RESERVED),
        );
    }
}

#[test]
fn register_of_an_empty_name_is_refused() {
    refuses(
        &[],
        &[("tools/register", json!({ "tool": echo_spec("") }))],
        ("INVALID_NAME", "tool name must be a non-empty string"),
    );
}

#[test]
fn register_without_an_output_declaration_is_refused() {
    let message = "tool definition needs an output declaration: output.schema (DSL) or output.jsonSchema (raw)";
    refuses(
        &[],
        &[
            ("tools/register", json!({ "tool": { "name": "o" } })),
            (
                "tools/register",
                json!({ "tool": { "name": "o", "output": {} } }),
            ),
        ],
        ("MISSING_OUTPUT", message),
    );
}

#[test]
fn register_with_an_unsupported_output_schema_is_refused() {
    refuses(
        &[],
        &[(
            "tools/register",
            json!({ "tool": { "name": "o", "output": { "schema": { "type": "text" } } } }),
        )],
        (
            "UNSUPPORTED_SCHEMA",
            "unsupported schema: output.schema: unknown type \"text\"",
        ),
    );
}

#[test]
fn register_with_a_non_positive_timeout_is_refused() {
    for (timeout, shown) in [(json!(0), "0"), (json!(-5), "-5")] {
        let tool = with_output(json!({ "name": "o", "timeoutMs": timeout }));
        let message =
            format!("timeoutMs must be a positive, finite number of milliseconds (got {shown})");
        refuses(
            &[],
            &[("tools/register", json!({ "tool": tool }))],
            ("INVALID_TIMEOUT", &message),
        );
    }
}

#[test]
fn register_with_a_non_finite_timeout_is_refused() {
    let tool =
        r#"{ "name": "o", "timeoutMs": 1e999, "output": { "schema": { "type": "string" } } }"#;
    let tool: Value = serde_json::from_str(tool).unwrap();
    refuses(
        &[],
        &[("tools/register", json!({ "tool": tool }))],
        (
            "INVALID_TIMEOUT",
            "timeoutMs must be a positive, finite number of milliseconds (got 1e+999)",
        ),
    );
}

#[test]
fn register_in_an_unknown_agent_is_refused() {
    refuses(
        &[],
        &[(
            "tools/register",
            json!({ "tool": echo_spec("z"), "agent": "ghost" }),
        )],
        ("UNKNOWN_AGENT", &unknown_agent("ghost")),
    );
}

#[test]
fn register_in_a_closed_agent_is_refused() {
    refuses(
        &[],
        &[(
            "tools/register",
            json!({ "tool": echo_spec("z"), "agent": "gone" }),
        )],
        ("UNKNOWN_AGENT", &unknown_agent("gone")),
    );
}

#[test]
fn present_as_from_no_agent_is_refused() {
    let message = "presentAs needs an agent scope: the process-wide setting is the host config";
    refuses(
        &[],
        &[
            ("tools/presentAs", json!({ "mode": "code" })),
            ("tools/presentAs", json!({ "mode": "native" })),
        ],
        ("NEEDS_AGENT", message),
    );
}

#[test]
fn present_as_twice_in_one_scope_is_refused_whatever_the_mode() {
    refuses(
        &[("tools/presentAs", json!({ "agent": "x", "mode": "code" }))],
        &[
            ("tools/presentAs", json!({ "agent": "x", "mode": "code" })),
            ("tools/presentAs", json!({ "agent": "x", "mode": "both" })),
            ("tools/presentAs", json!({ "agent": "x", "mode": "native" })),
        ],
        (
            "PRESENTATION_DECLARED",
            "agent \"x\" already declared a presentation",
        ),
    );
}

#[test]
fn present_as_for_an_unknown_or_closed_agent_is_refused() {
    for agent in ["ghost", "gone"] {
        refuses(
            &[],
            &[("tools/presentAs", json!({ "agent": agent, "mode": "code" }))],
            ("UNKNOWN_AGENT", &unknown_agent(agent)),
        );
    }
}

#[test]
fn restrict_from_no_agent_is_refused() {
    let message = "restrict needs an agent scope: the process-wide setting is the host config";
    refuses(
        &[],
        &[
            ("tools/restrict", json!({ "deny": ["echo"] })),
            ("tools/restrict", json!({ "allow": ["echo"] })),
        ],
        ("NEEDS_AGENT", message),
    );
}

#[test]
fn restrict_with_an_unknown_name_is_refused() {
    let message = "restrict names unknown tool \"nope\" (register or reserve it globally or in an ancestor scope first)";
    refuses(
        &[],
        &[
            ("tools/restrict", json!({ "agent": "x", "deny": ["nope"] })),
            (
                "tools/restrict",
                json!({ "agent": "x", "allow": ["echo", "nope"] }),
            ),
        ],
        ("UNKNOWN_NAME", message),
    );
}

#[test]
fn restrict_with_a_local_tool_name_is_refused() {
    refuses(
        &[],
        &[("tools/restrict", json!({ "agent": "x", "deny": ["mine"] }))],
        (
            "LOCAL_NAME",
            "restrict names \"mine\", which is local to agent \"x\": restrictions mask inherited tools only",
        ),
    );
}

#[test]
fn restrict_with_a_local_reservation_is_refused() {
    refuses(
        &[],
        &[(
            "tools/restrict",
            json!({ "agent": "x", "allow": ["mine-later"] }),
        )],
        (
            "LOCAL_NAME",
            "restrict names \"mine-later\", which is local to agent \"x\": restrictions mask inherited tools only",
        ),
    );
}

#[test]
fn restrict_with_the_reserved_run_code_name_is_refused() {
    refuses_in(
        "code",
        &[],
        &[
            (
                "tools/restrict",
                json!({ "agent": "x", "deny": ["run_code"] }),
            ),
            (
                "tools/restrict",
                json!({ "agent": "x", "allow": ["echo", "run_code"] }),
            ),
        ],
        ("RESERVED_NAME", RESERVED),
    );
}

#[test]
fn restrict_with_an_empty_filter_is_refused() {
    refuses(
        &[],
        &[
            ("tools/restrict", json!({ "agent": "x" })),
            ("tools/restrict", json!({ "agent": "x", "allow": [] })),
            ("tools/restrict", json!({ "agent": "x", "deny": [] })),
            (
                "tools/restrict",
                json!({ "agent": "x", "allow": ["echo"], "deny": ["later"] }),
            ),
        ],
        ("EMPTY_FILTER", EMPTY_FILTER),
    );
}

#[test]
fn restrict_for_an_unknown_or_closed_agent_is_refused() {
    for agent in ["ghost", "gone"] {
        refuses(
            &[],
            &[(
                "tools/restrict",
                json!({ "agent": agent, "deny": ["echo"] }),
            )],
            ("UNKNOWN_AGENT", &unknown_agent(agent)),
        );
    }
}

#[test]
fn reserve_of_the_run_code_name_is_refused_in_every_layer() {
    refuses(
        &[],
        &[
            ("tools/reserve", json!({ "name": "run_code" })),
            ("tools/reserve", json!({ "name": "run_code", "agent": "x" })),
        ],
        ("RESERVED_NAME", RESERVED),
    );
}

#[test]
fn reserve_of_an_empty_name_is_refused() {
    refuses(
        &[],
        &[("tools/reserve", json!({ "name": "" }))],
        ("INVALID_NAME", "tool name must be a non-empty string"),
    );
}

#[test]
fn reserve_in_an_unknown_or_closed_agent_is_refused() {
    for agent in ["ghost", "gone"] {
        refuses(
            &[],
            &[("tools/reserve", json!({ "name": "r", "agent": agent }))],
            ("UNKNOWN_AGENT", &unknown_agent(agent)),
        );
    }
}

#[test]
fn opening_an_open_agent_is_refused() {
    refuses(
        &[],
        &[
            ("agents/open", json!({ "agent": "x" })),
            ("agents/open", json!({ "agent": "x", "parent": "x" })),
        ],
        ("AGENT_EXISTS", "agent \"x\" is already open"),
    );
}

#[test]
fn opening_an_agent_with_an_empty_id_is_refused() {
    refuses(
        &[],
        &[
            ("agents/open", json!({ "agent": "" })),
            ("agents/open", json!({ "agent": "", "parent": "x" })),
        ],
        ("INVALID_NAME", "agent id must be a non-empty string"),
    );
}

#[test]
fn a_malformed_present_as_or_restrict_is_invalid_params_naming_the_field() {
    let cases = [
        (
            "tools/presentAs",
            json!({ "agent": "x", "mode": "fancy" }),
            "invalid params: mode: unknown variant `fancy`, expected one of `native`, `code`, `both` at line 1 column 27",
        ),
        (
            "tools/restrict",
            json!({ "agent": "x", "deny": "echo" }),
            "invalid params: deny: invalid type: string \"echo\", expected a sequence at line 1 column 26",
        ),
    ];
    for framing in [Framing::Lsp, Framing::Ndjson] {
        let mut host = fixture(framing, "native");
        for (method, params, message) in &cases {
            let response = host.request(method, params.clone());
            assert_eq!(
                response["error"],
                json!({ "code": -32602, "message": message }),
                "{method} ({framing:?})"
            );
        }
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn opening_under_an_unknown_or_closed_parent_is_refused() {
    for parent in ["ghost", "gone"] {
        refuses(
            &[],
            &[("agents/open", json!({ "agent": "y", "parent": parent }))],
            ("UNKNOWN_AGENT", &unknown_agent(parent)),
        );
    }
}

#[test]
fn closing_an_unknown_or_closed_agent_is_refused() {
    for agent in ["ghost", "gone"] {
        refuses(
            &[],
            &[("agents/close", json!({ "agent": agent }))],
            ("UNKNOWN_AGENT", &unknown_agent(agent)),
        );
    }
}

#[test]
fn unregister_of_an_unknown_or_disposed_registration_is_refused() {
    for framing in [Framing::Lsp, Framing::Ndjson] {
        let mut host = fixture(framing, "native");
        let id =
            registration_of(&host.request("tools/register", json!({ "tool": echo_spec("t") })));
        assert_eq!(
            host.request("tools/unregister", json!({ "registration": id }))["result"],
            json!(null)
        );
        for gone in [id.as_str(), "tool:999"] {
            let response = host.request("tools/unregister", json!({ "registration": gone }));
            assert_eq!(
                error_of(&response),
                (
                    REQUEST_FAILED,
                    "UNKNOWN_REGISTRATION".into(),
                    format!("unknown registration \"{gone}\"")
                )
            );
        }
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn unregister_of_what_a_closed_agent_registered_is_refused() {
    for framing in [Framing::Lsp, Framing::Ndjson] {
        let mut host = fixture(framing, "native");
        host.request("agents/open", json!({ "agent": "brief" }));
        let ids: Vec<String> = [
            (
                "tools/register",
                json!({ "tool": echo_spec("t"), "agent": "brief" }),
            ),
            ("tools/reserve", json!({ "name": "r", "agent": "brief" })),
            (
                "tools/restrict",
                json!({ "agent": "brief", "deny": ["echo"] }),
            ),
            (
                "tools/presentAs",
                json!({ "agent": "brief", "mode": "code" }),
            ),
        ]
        .into_iter()
        .map(|(method, params)| registration_of(&host.request(method, params)))
        .collect();
        host.request("agents/close", json!({ "agent": "brief" }));
        for id in ids {
            let response = host.request("tools/unregister", json!({ "registration": id }));
            assert_eq!(
                error_of(&response),
                (
                    REQUEST_FAILED,
                    "UNKNOWN_REGISTRATION".into(),
                    format!("unknown registration \"{id}\"")
                )
            );
        }
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn every_scoped_lookup_refuses_an_unknown_or_closed_agent() {
    for agent in ["ghost", "gone"] {
        refuses(
            &[],
            &[
                ("tools/schemas", json!({ "agent": agent })),
                ("tools/get", json!({ "name": "echo", "agent": agent })),
                (
                    "tools/isAdmitted",
                    json!({ "name": "echo", "agent": agent }),
                ),
                (
                    "tools/executionMode",
                    json!({ "name": "echo", "arguments": {}, "agent": agent }),
                ),
                (
                    "tools/execute",
                    json!({ "callId": "c", "name": "echo", "arguments": {}, "agent": agent }),
                ),
                (
                    "tools/executeBatch",
                    json!({ "calls": [{ "callId": "c", "name": "echo", "arguments": {} }], "agent": agent }),
                ),
                ("tools/prompt", json!({ "agent": agent })),
                (
                    "tools/presentCall",
                    json!({ "name": "echo", "arguments": {}, "agent": agent }),
                ),
                (
                    "tools/presentResult",
                    json!({ "name": "echo", "arguments": {}, "result": { "isError": false, "content": [] }, "agent": agent }),
                ),
                (
                    "hooks/subscribe",
                    json!({ "event": "tools/pre-execute", "agent": agent }),
                ),
            ],
            ("UNKNOWN_AGENT", &unknown_agent(agent)),
        );
    }
}

#[test]
fn prompt_refuses_a_tool_order_entry_the_mode_does_not_contribute() {
    let cases = [("native", "run_code", "native"), ("code", "echo", "code")];
    for (mode, entry, shown) in cases {
        for framing in [Framing::Lsp, Framing::Ndjson] {
            let config = json!({ "tools": { "mode": mode, "toolOrder": [entry] } });
            let mut host = Host::initialized(framing, json!({ "executeTools": true }), config);
            registration_of(&host.request("tools/register", json!({ "tool": echo_spec("echo") })));
            let response = host.request("tools/prompt", json!({}));
            assert_eq!(
                error_of(&response),
                (
                    REQUEST_FAILED,
                    "TOOL_ORDER".into(),
                    format!(
                        "tools.toolOrder lists \"{entry}\", which the {shown} presentation does not contribute"
                    )
                ),
                "{mode}"
            );
            assert_eq!(host.finish(), 0);
        }
    }
}

#[test]
fn prompt_refuses_an_agent_whose_language_has_no_loaded_runtime() {
    for framing in [Framing::Lsp, Framing::Ndjson] {
        let mut host = Host::initialized(framing, json!({ "executeTools": true }), json!({}));
        let opened = host.request("agents/open", json!({ "agent": "py" }));
        assert_eq!(opened["result"], Value::Null, "{opened}");
        let presented = host.request(
            "tools/presentAs",
            json!({ "agent": "py", "mode": "code", "language": "python" }),
        );
        assert!(
            presented["result"]["registration"].is_string(),
            "{presented}"
        );
        let response = host.request("tools/prompt", json!({ "agent": "py" }));
        assert_eq!(
            error_of(&response),
            (
                REQUEST_FAILED,
                "NO_CODE_RUNTIME".into(),
                "Code Mode language \"python\" has no runtime loaded in this host (codeRuntime.language / codeRuntime.languages)".into()
            )
        );
        assert_eq!(host.finish(), 0);
    }
}
