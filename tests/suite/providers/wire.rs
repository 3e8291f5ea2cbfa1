//! `format` over the wire: `tools/prompt` and `tools/schemas` in each provider's shape, the
//! weakened-schema report, `nativeToolSearch`, and results as tool-result blocks from
//! `tools/execute { format }` and `tools/result` (`capabilities.resultFormat`).

#![allow(clippy::unwrap_used)]

use super::catalog::dsl_tools;
use crate::support::discovery::{Client, deferred_spec, spec};
use crate::support::wire::{Framing, Host};
use serde_json::{Value, json};

fn client_with(tools: &[Value]) -> Client {
    let mut client = Client::new(json!({}));
    for tool in tools {
        client.register(tool.clone(), None);
    }
    client
}

fn prompt(client: &mut Client, params: Value) -> Value {
    let response = client.request("tools/prompt", params);
    assert!(response.get("result").is_some(), "{response}");
    response["result"].clone()
}

#[test]
fn each_format_lists_the_tools_in_its_providers_shape() {
    let weather = spec(
        "weather",
        "Forecast.",
        json!({ "city": { "type": "string", "required": true }, "days": { "type": "integer" } }),
    );
    let mut client = client_with(&[weather]);
    let anthropic = prompt(&mut client, json!({ "format": "anthropic" }));
    assert_eq!(anthropic["format"], "anthropic");
    assert_eq!(anthropic["tools"][0]["name"], "weather");
    assert_eq!(
        anthropic["tools"][0]["input_schema"]["properties"]["city"]["type"],
        "string"
    );
    assert_eq!(anthropic["weakened"], json!([]), "{anthropic}");

    let responses = prompt(&mut client, json!({ "format": "openai-responses" }));
    let tool = &responses["tools"][0];
    assert_eq!(
        (
            tool["type"].as_str(),
            tool["name"].as_str(),
            &tool["strict"]
        ),
        (Some("function"), Some("weather"), &json!(true))
    );
    assert_eq!(tool["parameters"]["required"], json!(["city", "days"]));
    assert_eq!(
        tool["parameters"]["properties"]["days"]["type"],
        json!(["integer", "null"])
    );
    assert_eq!(tool["parameters"]["additionalProperties"], false);

    let chat = prompt(&mut client, json!({ "format": "openai-chat" }));
    assert_eq!(chat["tools"][0]["type"], "function");
    assert_eq!(
        chat["tools"][0]["function"]["parameters"],
        tool["parameters"]
    );

    let gemini = prompt(&mut client, json!({ "format": "gemini" }));
    let declaration = &gemini["tools"][0]["functionDeclarations"][0];
    assert_eq!(declaration["name"], "weather");
    assert_eq!(declaration["parameters"]["type"], "OBJECT");
    assert_eq!(
        declaration["parameters"]["properties"]["days"]["type"],
        "INTEGER"
    );

    let mcp = prompt(&mut client, json!({ "format": "mcp" }));
    assert_eq!(mcp["tools"][0]["inputSchema"]["required"], json!(["city"]));

    // Without a format the answer is today's `PromptAssembly`, unchanged.
    let plain = prompt(&mut client, json!({}));
    assert!(
        plain.get("format").is_none() && plain["tools"][0]["inputSchema"].is_object(),
        "{plain}"
    );
}

#[test]
fn run_code_is_shaped_too_under_code_mode() {
    let mut client = Client::new(json!({ "tools": { "mode": "code" } }));
    client.register(spec("a", "A.", json!({})), None);
    let chat = prompt(&mut client, json!({ "format": "openai-chat" }));
    let names: Vec<&str> = chat["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["run_code"], "{chat}");
    assert!(
        chat["sections"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == "tools:sdk")
    );
}

#[test]
fn the_weakened_report_names_each_tool_path_and_change() {
    let mut client = client_with(&dsl_tools());
    let responses = prompt(&mut client, json!({ "format": "openai-responses" }));
    let weakened = responses["weakened"].as_array().unwrap();
    // An open object or an untyped `json` value cannot be strict: those tools go out
    // with `strict: false`, and the report says where and why.
    let open = weakened
        .iter()
        .find(|w| w["name"] == "tool_14_open")
        .unwrap();
    assert_eq!(
        open["changes"][0]["path"], "/properties/a/additionalProperties",
        "{open}"
    );
    assert!(
        open["changes"][0]["change"]
            .as_str()
            .unwrap()
            .starts_with("strict mode off"),
        "{open}"
    );
    let listed = responses["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "tool_14_open")
        .unwrap();
    assert_eq!(listed["strict"], false);
    let union = weakened
        .iter()
        .find(|w| w["name"] == "tool_16_scalar_union")
        .unwrap();
    assert!(
        union["changes"][0]["change"]
            .as_str()
            .unwrap()
            .starts_with("oneOf became anyOf"),
        "{union}"
    );
    // A tool that needed only lossless rewrites is strict and not reported.
    assert!(
        !weakened.iter().any(|w| w["name"] == "tool_00_string"),
        "{weakened:?}"
    );
    let string = responses["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "tool_00_string")
        .unwrap();
    assert_eq!(string["strict"], true);

    let gemini = prompt(&mut client, json!({ "format": "gemini" }));
    let weakened = gemini["weakened"].as_array().unwrap();
    let enum_tool = weakened
        .iter()
        .find(|w| w["name"] == "tool_06_integer_enum")
        .unwrap();
    assert_eq!(
        enum_tool["changes"][0]["path"], "/properties/a/enum",
        "{enum_tool}"
    );
    assert_eq!(
        prompt(&mut client, json!({ "format": "anthropic" }))["weakened"],
        json!([])
    );
}

#[test]
fn a_name_the_provider_refuses_is_left_out_and_reported() {
    let mut client = client_with(&[
        spec("dotted.name", "D.", json!({})),
        spec("fine", "F.", json!({})),
    ]);
    let chat = prompt(&mut client, json!({ "format": "openai-chat" }));
    assert_eq!(chat["tools"].as_array().unwrap().len(), 1, "{chat}");
    assert_eq!(chat["weakened"][0]["name"], "dotted.name");
    assert_eq!(chat["weakened"][0]["omitted"], true);
    let gemini = prompt(&mut client, json!({ "format": "gemini" }));
    assert_eq!(
        gemini["tools"][0]["functionDeclarations"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn tools_schemas_takes_a_format_and_keeps_output_schemas_for_mcp() {
    let mut client = client_with(&[spec("t", "T.", json!({ "x": { "type": "string" } }))]);
    let response = client.request("tools/schemas", json!({ "format": "mcp" }));
    let tools = &response["result"]["tools"];
    assert_eq!(tools[0]["name"], "t", "{response}");
    assert!(tools[0]["inputSchema"].is_object());
    let response = client.request("tools/schemas", json!({ "format": "gemini" }));
    assert_eq!(
        response["result"]["tools"][0]["functionDeclarations"][0]["name"], "t",
        "{response}"
    );
    let response = client.request("tools/schemas", json!({ "format": "cohere" }));
    assert_eq!(response["error"]["code"], -32602, "{response}");
}

#[test]
fn anthropic_native_tool_search_lists_deferred_tools_with_defer_loading() {
    let mut client = client_with(&[
        spec("always", "A.", json!({})),
        deferred_spec("later", "L.", json!({ "q": { "type": "string" } })),
    ]);
    let native = prompt(
        &mut client,
        json!({ "format": "anthropic", "nativeToolSearch": "regex" }),
    );
    let expected_search =
        json!({ "type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex" });
    assert_eq!(native["toolSearch"], expected_search);
    assert_eq!(native["tools"][0], expected_search);
    let names: Vec<&str> = native["tools"].as_array().unwrap()[1..]
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["always", "later"],
        "search_tools gives way to Anthropic's: {native}"
    );
    assert_eq!(native["tools"][2]["defer_loading"], true);
    assert!(native["tools"][1].get("defer_loading").is_none());
    assert!(
        !native["sections"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == "tools:deferred")
    );
    // Without it, `anthropic` gets our `search_tools` and the deferred section.
    let ours = prompt(&mut client, json!({ "format": "anthropic" }));
    let names: Vec<&str> = ours["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["always", "search_tools"], "{ours}");
    let refused = client.request(
        "tools/prompt",
        json!({ "format": "gemini", "nativeToolSearch": "bm25" }),
    );
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("needs format \"anthropic\""),
        "{refused}"
    );
}

#[test]
fn execute_with_a_format_adds_the_providers_tool_result_block() {
    let mut client = client_with(&[spec(
        "echo",
        "Echo.",
        json!({ "text": { "type": "string" } }),
    )]);
    let call = |format: &str| json!({ "callId": "call_1", "name": "echo", "arguments": { "text": "hi" }, "format": format });
    let result = client.wire.request_answering(
        "tools/execute",
        call("anthropic"),
        |_| json!({ "value": "hi" }),
    )["result"]
        .clone();
    assert_eq!(
        result["providerResult"],
        json!({ "type": "tool_result", "tool_use_id": "call_1", "content": [{ "type": "text", "text": "hi" }] }),
        "{result}"
    );
    let result = client.wire.request_answering(
        "tools/execute",
        call("openai-responses"),
        |_| json!({ "value": "hi" }),
    )["result"]
        .clone();
    assert_eq!(
        result["providerResult"],
        json!({ "type": "function_call_output", "call_id": "call_1", "output": "hi" })
    );
    let result = client.wire.request_answering(
        "tools/execute",
        call("gemini"),
        |_| json!({ "value": "hi" }),
    )["result"]
        .clone();
    assert_eq!(
        result["providerResult"]["functionResponse"]["response"],
        json!({ "output": "hi" })
    );
    // An error is flagged where the provider has a flag.
    let failing =
        json!({ "callId": "call_2", "name": "nope", "arguments": {}, "format": "anthropic" });
    let result = client.request("tools/execute", failing)["result"].clone();
    assert_eq!(result["providerResult"]["is_error"], true, "{result}");
    let failing = json!({ "callId": "call_2", "name": "nope", "arguments": {}, "format": "mcp" });
    assert_eq!(
        client.request("tools/execute", failing)["result"]["providerResult"]["isError"],
        true
    );
}

#[test]
fn a_strict_openai_call_may_send_null_for_what_it_leaves_out() {
    let mut client = client_with(&[spec(
        "echo",
        "Echo.",
        json!({ "text": { "type": "string", "required": true }, "lang": { "type": "string" } }),
    )]);
    let call = |format: Option<&str>| {
        let mut call =
            json!({ "callId": "c", "name": "echo", "arguments": { "text": "hi", "lang": null } });
        if let Some(format) = format {
            call["format"] = json!(format);
        }
        call
    };
    let strict =
        client
            .wire
            .request_answering("tools/execute", call(Some("openai-chat")), |request| {
                assert_eq!(
                    request["params"]["arguments"],
                    json!({ "text": "hi" }),
                    "{request}"
                );
                json!({ "value": "ok" })
            });
    assert_eq!(strict["result"]["isError"], false, "{strict}");
    // Without the format a null stays what it is, and validation refuses it.
    let plain = client.request("tools/execute", call(None));
    assert_eq!(plain["result"]["isError"], true, "{plain}");
}

#[test]
fn tools_result_carries_the_block_when_the_client_asked_for_a_result_format() {
    let mut host = Host::initialized(
        Framing::Ndjson,
        json!({ "executeTools": true, "resultFormat": "openai-chat" }),
        json!({}),
    );
    let registered = host.request(
        "tools/register",
        json!({ "tool": spec("echo", "Echo.", json!({})) }),
    );
    assert!(registered.get("result").is_some(), "{registered}");
    host.request_answering(
        "tools/execute",
        json!({ "callId": "k", "name": "echo", "arguments": {} }),
        |_| json!({ "value": "done" }),
    );
    let notification = host.next_with_method("tools/result");
    assert_eq!(
        notification["params"]["result"]["providerResult"],
        json!({ "role": "tool", "tool_call_id": "k", "content": "done" }),
        "{notification}"
    );
}

#[test]
fn a_batch_with_a_format_gives_each_result_its_block_in_order() {
    let mut client = client_with(&[spec(
        "echo",
        "Echo.",
        json!({ "text": { "type": "string" } }),
    )]);
    let batch = json!({
        "format": "anthropic",
        "calls": [
            { "callId": "first", "name": "echo", "arguments": { "text": "1" } },
            { "callId": "second", "name": "missing", "arguments": {} },
        ],
    });
    let response =
        client
            .wire
            .request_answering("tools/executeBatch", batch, |_| json!({ "value": "one" }));
    let results = response["result"].as_array().unwrap();
    assert_eq!(
        results[0]["providerResult"]["tool_use_id"], "first",
        "{response}"
    );
    assert_eq!(
        results[0]["providerResult"]["content"],
        json!([{ "type": "text", "text": "one" }])
    );
    assert_eq!(results[1]["providerResult"]["tool_use_id"], "second");
    assert_eq!(results[1]["providerResult"]["is_error"], true);
    // Without a format the results are as they were.
    let plain = json!({ "calls": [{ "callId": "c", "name": "echo", "arguments": {} }] });
    let response =
        client
            .wire
            .request_answering("tools/executeBatch", plain, |_| json!({ "value": "x" }));
    assert!(
        response["result"][0].get("providerResult").is_none(),
        "{response}"
    );
}
