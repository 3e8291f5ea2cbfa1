//! Elicitation by ingested servers (`tests/mcp-servers/elicit_server.py`, the official
//! Python SDK's `ctx.elicit`): forwarded to the RPC client as `client/elicit` and answered
//! back; declined with the reason on the call's result when the client did not declare the
//! capability (which is then not declared to the server either); `dsh-tools run --elicit
//! defaults`; and passed through `dsh-tools mcp` to an MCP client (the Python SDK's).

#![allow(clippy::unwrap_used)]

use crate::support::mcp::{
    Binary, PATIENCE, all_running, config_file, installed, python_client, scratch,
};
use crate::support::wire::{Framing, Host as Wire};
use serde_json::{Value, json};

fn hotel() -> Value {
    json!({ "command": installed(".venv/bin/python"), "args": [installed("elicit_server.py")] })
}

/// `dsh-tools serve` initialized with `capabilities`, the hotel server running.
fn rpc_host(capabilities: Value) -> Binary {
    let mut host = Binary::spawn(&["serve", "--framing", "ndjson"]);
    let answer = host.request(
        "initialize",
        json!({ "protocolVersion": "1", "capabilities": capabilities,
                "config": { "mcpServers": { "hotel": hotel() } } }),
    );
    assert_eq!(answer["result"]["protocolVersion"], "1", "{answer}");
    host.wait_for_status(all_running);
    host
}

/// Calls `mcp__hotel__<tool>`, answering every host request with `answer`.
fn call(host: &mut Binary, tool: &str, answer: Value) -> (Value, Vec<Value>) {
    let params = json!({ "callId": tool, "name": format!("mcp__hotel__{tool}"), "arguments": {} });
    let (response, asked) = host.request_answering("tools/execute", params, |_| answer.clone());
    (response["result"].clone(), asked)
}

/// The server's own answer (its tools return JSON text, structured as `{ "result": … }`).
fn served(result: &Value) -> Value {
    let text = result["value"]["result"]
        .as_str()
        .unwrap_or_else(|| panic!("{result}"));
    serde_json::from_str(text).unwrap()
}

/// The text of the call's last content block (where a host decline is noted).
fn last_block(result: &Value) -> String {
    let content = result["content"]
        .as_array()
        .unwrap_or_else(|| panic!("{result}"));
    content.last().unwrap()["text"].as_str().unwrap().to_owned()
}

#[test]
fn a_form_and_a_url_elicitation_reach_the_rpc_client_and_its_answers_reach_the_server() {
    let mut host = rpc_host(json!({ "elicitation": { "form": {}, "url": {} } }));
    let (declared, _) = call(&mut host, "capability", json!(null));
    assert_eq!(served(&declared), json!({ "form": {}, "url": {} }));

    let accept = json!({ "action": "accept",
        "content": { "guest": "Ada", "nights": 3, "breakfast": false } });
    let (booked, asked) = call(&mut host, "book", accept);
    assert_eq!(booked["isError"], false, "{booked}");
    assert_eq!(
        served(&booked),
        json!({ "action": "accept", "content": { "guest": "Ada", "nights": 3, "breakfast": false } })
    );
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["method"], "client/elicit");
    let params = &asked[0]["params"];
    assert_eq!(params["server"], "hotel");
    assert_eq!(params["mode"], "form");
    assert_eq!(params["message"], "Who is the booking for?");
    assert_eq!(params["execution"]["name"], "mcp__hotel__book");
    assert_eq!(params["requestedSchema"]["required"], json!(["guest"]));
    assert_eq!(
        params["requestedSchema"]["properties"]["nights"]["default"],
        2
    );

    let (opened, asked) = call(&mut host, "open", json!({ "action": "decline" }));
    assert_eq!(
        served(&opened),
        json!({ "action": "decline", "content": null })
    );
    let params = &asked[0]["params"];
    assert_eq!(
        (&params["mode"], &params["url"], &params["elicitationId"]),
        (
            &json!("url"),
            &json!("https://example.com/authorize"),
            &json!("auth-1")
        )
    );
    assert_eq!(params["message"], "Authorize the calendar");
}

#[test]
fn aborting_the_call_cancels_its_client_elicit() {
    let config = json!({ "mcpServers": { "hotel": hotel() } });
    let mut host = Wire::initialized(Framing::Ndjson, json!({ "elicitation": {} }), config);
    let deadline = std::time::Instant::now() + PATIENCE;
    while host.request("mcp/status", json!({}))["result"][0]["state"] != "running" {
        assert!(
            std::time::Instant::now() < deadline,
            "the server did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let id = host.start(
        "tools/execute",
        json!({ "callId": "b", "name": "mcp__hotel__book", "arguments": {} }),
    );
    let asked = host.next_with_method("client/elicit");
    host.send(&json!({ "jsonrpc": "2.0", "method": "$/cancelRequest", "params": { "id": id } }));
    let forwarded = host.next_with_method("$/cancelRequest");
    assert_eq!(forwarded["params"]["id"], asked["id"]);
    let aborted = host.response_to(&id);
    assert_eq!(
        aborted["result"]["error"]["info"]["code"], "ABORTED",
        "{aborted}"
    );
}

#[test]
fn a_form_only_client_is_not_asked_for_a_url_and_the_result_says_why() {
    let mut host = rpc_host(json!({ "elicitation": {} }));
    let (declared, _) = call(&mut host, "capability", json!(null));
    assert_eq!(served(&declared), json!({ "form": {} }));
    let (opened, asked) = call(&mut host, "open", json!({ "action": "accept" }));
    assert!(asked.is_empty(), "{asked:?}");
    assert_eq!(
        served(&opened),
        json!({ "action": "decline", "content": null })
    );
    let text = last_block(&opened);
    assert!(
        text.ends_with(
            "dsh-tools declined it: the client did not declare URL elicitation in initialize"
        ),
        "{text}"
    );
}

#[test]
fn without_the_capability_nothing_is_declared_or_asked_and_the_decline_is_explained() {
    let mut host = rpc_host(json!({}));
    let (declared, _) = call(&mut host, "capability", json!(null));
    assert_eq!(served(&declared), json!(null));
    let (booked, asked) = call(&mut host, "book", json!({ "action": "accept" }));
    assert!(asked.is_empty(), "{asked:?}");
    assert_eq!(booked["isError"], false, "{booked}");
    assert_eq!(
        served(&booked),
        json!({ "action": "decline", "content": null })
    );
    let note = "MCP server \"hotel\" asked for input (form elicitation: \"Who is the booking for?\") \
                and dsh-tools declined it: the client did not declare the elicitation capability in initialize";
    assert_eq!(last_block(&booked), note, "{booked}");
}

/// `dsh-tools run` of a program calling `confirm` (every field has a default) and `book`
/// (`guest` has none), with `extra` arguments; returns stdout and stderr.
fn run_booking(name: &str, extra: &[&str]) -> (String, String) {
    let dir = scratch(name);
    let config = config_file(name, &json!({ "mcpServers": { "hotel": hotel() } }));
    let program = dir.join("book.ts");
    std::fs::write(
        &program,
        "return [await tools.mcp__hotel__confirm({}), await tools.mcp__hotel__book({})];",
    )
    .unwrap();
    let mut args = vec!["--config", config.to_str().unwrap()];
    args.extend_from_slice(extra);
    args.extend(["run", program.to_str().unwrap()]);
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
        .args(&args)
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(0), "{stdout}{stderr}");
    (stdout, stderr)
}

#[test]
fn run_with_elicit_defaults_accepts_defaults_and_declines_a_required_field_without_one() {
    let (stdout, stderr) = run_booking("elicit-defaults", &["--elicit", "defaults"]);
    let accepted =
        r#"{\"action\": \"accept\", \"content\": {\"nights\": 2, \"room\": \"double\"}}"#;
    let declined = r#"{\"action\": \"decline\", \"content\": null}"#;
    assert!(
        stdout.contains(accepted) && stdout.contains(declined),
        "{stdout}"
    );
    assert_eq!(
        stderr,
        "dsh-tools run: MCP server \"hotel\" asked for input (form elicitation: \"Who is the booking for?\") \
         and dsh-tools declined it: --elicit defaults: the form's required field \"guest\" has no default\n"
    );
}

#[test]
fn run_off_a_terminal_without_the_flag_declines_saying_no_one_can_be_asked() {
    let (stdout, stderr) = run_booking("elicit-none", &[]);
    let declined = r#"{\"action\": \"decline\", \"content\": null}"#;
    assert_eq!(stdout.matches(declined).count(), 2, "{stdout}");
    let reason = "dsh-tools declined it: no one can be asked: dsh-tools run is not on a terminal and --elicit defaults was not given\n";
    assert_eq!(stderr.matches(reason).count(), 2, "{stderr}");
}

#[test]
fn dsh_tools_mcp_passes_an_elicitation_to_its_mcp_client_and_the_answer_back() {
    let config = json!({ "mcpServers": { "hotel": hotel() } });
    let answer = json!({ "action": "accept", "content": { "guest": "Grace", "nights": 1, "breakfast": true } });
    let report = python_client(
        "elicit-through-mcp",
        "native",
        &config,
        json!({ "calls": [{ "name": "mcp__hotel__book" }, { "name": "mcp__hotel__open" }],
                "elicit": answer }),
    );
    let booked = report["calls"][0]["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(booked).unwrap(),
        json!({ "action": "accept", "content": { "guest": "Grace", "nights": 1, "breakfast": true } })
    );
    let opened = report["calls"][1]["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(opened).unwrap(),
        json!({ "action": "accept", "content": null })
    );
    let asked = &report["elicitations"];
    assert_eq!(asked[0]["mode"], "form");
    assert_eq!(asked[0]["message"], "Who is the booking for?");
    assert_eq!(
        asked[0]["requestedSchema"]["properties"]["nights"]["default"],
        2
    );
    assert_eq!(asked[1]["mode"], "url");
    assert_eq!(asked[1]["url"], "https://example.com/authorize");
}

#[test]
fn dsh_tools_mcp_declines_for_a_client_without_elicitation_saying_so() {
    let config = json!({ "mcpServers": { "hotel": hotel() } });
    let report = python_client(
        "elicit-mcp-no-capability",
        "native",
        &config,
        json!({ "calls": [{ "name": "mcp__hotel__book" }] }),
    );
    let content = report["calls"][0]["content"].as_array().unwrap();
    let texts: Vec<&str> = content
        .iter()
        .map(|b| b["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        [
            r#"{"action": "decline", "content": null}"#,
            "MCP server \"hotel\" asked for input (form elicitation: \"Who is the booking for?\") \
             and dsh-tools declined it: the MCP client did not declare form elicitation"
        ]
    );
}

#[test]
fn dsh_tools_mcp_with_elicit_defaults_answers_for_a_client_without_elicitation() {
    let config = config_file(
        "elicit-mcp-defaults",
        &json!({ "mcpServers": { "hotel": hotel() } }),
    );
    let mut host = Binary::spawn(&[
        "mcp",
        "--elicit",
        "defaults",
        "--config",
        config.to_str().unwrap(),
    ]);
    let initialized = host.request(
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": { "name": "elicit-test", "version": "1" } }),
    );
    assert!(
        initialized["result"]["serverInfo"].is_object(),
        "{initialized}"
    );
    host.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    let params = json!({ "name": "mcp__hotel__confirm", "arguments": {} });
    let (response, asked) = host.request_answering("tools/call", params, |_| json!({}));
    assert!(asked.is_empty(), "the client was asked: {asked:?}");
    let text = response["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(text).unwrap(),
        json!({ "action": "accept", "content": { "nights": 2, "room": "double" } })
    );
}
