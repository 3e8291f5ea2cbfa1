//! Approvals through `dsh-tools mcp`: an `ask` becomes a form elicitation to the MCP client,
//! whose "allow for this session" answer is a grant the same session is not asked again for
//! (a different command is), and a client that cannot be asked gets a refusal that says so.

#![allow(clippy::unwrap_used)]

use crate::support::mcp::{Binary, config_file, scratch};
use serde_json::{Value, json};

fn mcp_host(name: &str, elicitation: bool) -> Binary {
    let workspace = scratch(name);
    let config = json!({
        "builtins": { "bash": { "cwd": workspace } },
        "permissions": { "allow": ["Bash(echo:*)"], "default": "ask" },
    });
    let config = config_file(name, &config);
    let mut host = Binary::spawn(&["mcp", "--config", config.to_str().unwrap()]);
    let capabilities = if elicitation {
        json!({ "elicitation": { "form": {} } })
    } else {
        json!({})
    };
    let initialized = host.request(
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": capabilities,
                "clientInfo": { "name": "approvals-test", "version": "1" } }),
    );
    assert!(
        initialized["result"]["serverInfo"].is_object(),
        "{initialized}"
    );
    host.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    host
}

/// Calls `bash command`, answering an elicitation with `answer`.
fn call(host: &mut Binary, command: &str, answer: Value) -> (Value, Vec<Value>) {
    let params = json!({ "name": "bash", "arguments": { "command": command } });
    let (response, asked) = host.request_answering("tools/call", params, |_| answer.clone());
    (response["result"].clone(), asked)
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn an_mcp_client_is_asked_by_elicitation_and_its_session_answer_is_remembered() {
    let mut host = mcp_host("approvals-elicit", true);
    let session = json!({ "action": "accept", "content": { "decision": "allow-for-session" } });
    let (first, asked) = call(&mut host, "ls", session);
    assert_eq!(first["isError"], false, "{first}");
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["method"], "elicitation/create");
    let message = asked[0]["params"]["message"].as_str().unwrap();
    assert!(
        message.contains("Call: bash") && message.contains("Bash(ls:*)"),
        "{message}"
    );
    let choices = &asked[0]["params"]["requestedSchema"]["properties"]["decision"];
    let values: Vec<&Value> = choices["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["const"])
        .collect();
    assert_eq!(
        values,
        ["allow-once", "allow-for-session", "allow-always", "reject"],
        "{choices}"
    );

    let (again, asked) = call(&mut host, "ls -a", json!({ "action": "decline" }));
    assert_eq!(again["isError"], false, "{again}");
    assert!(asked.is_empty(), "the same shape was asked again");

    let (other, asked) = call(&mut host, "pwd", json!({ "action": "decline" }));
    assert_eq!(asked.len(), 1);
    assert_eq!(other["isError"], true, "{other}");
    assert!(
        text(&other).contains("the user rejected tool \"bash\""),
        "{other}"
    );
    // A rule's allow is never asked.
    let (allowed, asked) = call(&mut host, "echo hi", json!({ "action": "decline" }));
    assert_eq!(allowed["isError"], false, "{allowed}");
    assert!(asked.is_empty());
}

#[test]
fn an_mcp_client_without_elicitation_is_refused_saying_no_one_could_be_asked() {
    let mut host = mcp_host("approvals-no-elicit", false);
    let (result, asked) = call(&mut host, "ls", json!({}));
    assert!(asked.is_empty());
    assert_eq!(result["isError"], true, "{result}");
    let message = text(&result);
    assert!(
        message.contains("did not declare form elicitation"),
        "{message}"
    );
}
