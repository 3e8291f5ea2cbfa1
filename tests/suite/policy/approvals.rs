//! Answers with a scope and decisions that explain themselves, through the real binary:
//! `client/approve` answered `allowed-for-session` (narrowed to an agent or not) or
//! `allowed-always` (written to `permissions.persistTo`, loaded by the next host), the
//! suggested rule the host proposes, `permissions/grants` and `permissions/revoke`, and
//! `permissions/explain` naming each rule's origin.

#![allow(clippy::unwrap_used)]

use crate::support::policy::{Framing, Host, Reply};
use crate::support::wire::temp_file;
use serde_json::{Value, json};
use std::path::Path;

/// A client tool `bash` taking `command` (and the escalation flag) that echoes the command.
fn client_bash() -> Value {
    json!({
        "name": "bash",
        "description": "Runs a command.",
        "parameters": {
            "command": { "type": "string", "required": true },
            "dangerouslyDisableSandbox": { "type": "boolean" }
        },
        "output": { "schema": { "type": "string" } }
    })
}

fn host_with(permissions: Value, extra: &[&str]) -> Host {
    let mut host = Host::serve(Framing::Ndjson, extra);
    let capabilities = json!({ "executeTools": true, "approval": true });
    host.initialize(capabilities, json!({ "permissions": permissions }));
    let registered = host.request("tools/register", json!({ "tool": client_bash() }));
    assert!(
        registered["result"]["registration"].is_string(),
        "{registered}"
    );
    host
}

/// What one call did: its result, and the `client/approve` requests it made.
struct Called {
    result: Value,
    approvals: Vec<Value>,
}

/// Runs `bash command` (as `agent`), answering an approval with `answer`.
fn run(host: &mut Host, command: &str, agent: Option<&str>, answer: Value) -> Called {
    let mut params = json!({ "callId": "c", "name": "bash", "arguments": { "command": command } });
    if let Some(agent) = agent {
        params["agent"] = json!(agent);
    }
    let (result, requests) = host.execute(params, |request| {
        match request["method"].as_str().unwrap_or_default() {
            "client/approve" => Reply::Result(answer.clone()),
            "client/executeTool" => {
                Reply::Result(json!({ "value": request["params"]["arguments"]["command"] }))
            }
            _ => Reply::Silent,
        }
    });
    let approvals = requests
        .into_iter()
        .filter(|r| r["method"] == "client/approve")
        .collect();
    Called { result, approvals }
}

fn ran(called: &Called, command: &str) {
    assert_eq!(called.result["isError"], false, "{}", called.result);
    assert_eq!(called.result["value"], command, "{}", called.result);
}

fn once() -> Value {
    json!({ "outcome": "allowed-once" })
}

#[test]
fn a_session_answer_covers_the_same_shape_and_not_another_until_revoked() {
    let mut host = host_with(
        json!({ "allow": ["Bash(git status:*)"], "default": "ask" }),
        &[],
    );
    let first = run(
        &mut host,
        "npm test",
        None,
        json!({ "outcome": "allowed-for-session" }),
    );
    ran(&first, "npm test");
    assert_eq!(first.approvals.len(), 1);
    let asked = &first.approvals[0]["params"];
    assert_eq!(asked["suggestedRule"], "Bash(npm test:*)", "{asked}");
    assert_eq!(asked["decision"]["decision"], "ask", "{asked}");
    assert_eq!(asked["decision"]["parts"][0]["text"], "npm test", "{asked}");

    // The same shape, alone or beside an allowed command: not asked again.
    for command in ["npm test -- --watch", "git status && npm test"] {
        let again = run(&mut host, command, None, json!({ "outcome": "rejected" }));
        ran(&again, command);
        assert!(again.approvals.is_empty(), "{command} was asked again");
    }
    // Another shape is asked.
    let other = run(
        &mut host,
        "npm run build",
        None,
        json!({ "outcome": "rejected" }),
    );
    assert_eq!(other.approvals.len(), 1);
    assert_eq!(other.result["isError"], true);

    let grants = host.request("permissions/grants", json!({}));
    assert_eq!(
        grants["result"],
        json!([{ "id": "g1", "rule": "Bash(npm test:*)", "scope": "session" }])
    );
    let revoked = host.request("permissions/revoke", json!({ "id": "g1" }));
    assert_eq!(revoked["result"]["revoked"]["id"], "g1", "{revoked}");
    let after = run(&mut host, "npm test", None, once());
    ran(&after, "npm test");
    assert_eq!(after.approvals.len(), 1, "a revoked grant still answered");
    let unknown = host.request("permissions/revoke", json!({ "id": "g1" }));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no grant \"g1\"")
    );
}

#[test]
fn a_session_answer_with_agent_only_covers_only_the_asking_agent() {
    let mut host = host_with(json!({ "default": "ask" }), &[]);
    for agent in ["a1", "a2"] {
        let opened = host.request("agents/open", json!({ "agent": agent }));
        assert!(opened.get("error").is_none(), "{opened}");
    }
    let answer = json!({ "outcome": "allowed-for-session", "agentOnly": true });
    ran(
        &run(&mut host, "make lint", Some("a1"), answer),
        "make lint",
    );
    let same_agent = run(
        &mut host,
        "make lint",
        Some("a1"),
        json!({ "outcome": "rejected" }),
    );
    ran(&same_agent, "make lint");
    assert!(same_agent.approvals.is_empty());
    let other_agent = run(&mut host, "make lint", Some("a2"), once());
    assert_eq!(
        other_agent.approvals.len(),
        1,
        "agent a2 rode on a1's grant"
    );
    let grants = host.request("permissions/grants", json!({}));
    assert_eq!(grants["result"][0]["agent"], "a1", "{grants}");
    // The grant ends with its scope.
    host.request("agents/close", json!({ "agent": "a1" }));
    let grants = host.request("permissions/grants", json!({}));
    assert_eq!(grants["result"], json!([]), "{grants}");
}

#[test]
fn a_command_needing_several_rules_is_granted_as_that_exact_call() {
    let mut host = host_with(json!({ "default": "ask" }), &[]);
    let first = run(
        &mut host,
        "make && ./run.sh",
        None,
        json!({ "outcome": "allowed-for-session" }),
    );
    ran(&first, "make && ./run.sh");
    assert!(first.approvals[0]["params"].get("suggestedRule").is_none());
    ran(
        &run(
            &mut host,
            "make && ./run.sh",
            None,
            json!({ "outcome": "rejected" }),
        ),
        "make && ./run.sh",
    );
    let other = run(&mut host, "make && ./run.sh x", None, once());
    assert_eq!(other.approvals.len(), 1);
}

#[test]
fn an_edited_rule_is_what_the_session_answer_adds() {
    let mut host = host_with(json!({ "default": "ask" }), &[]);
    let answer = json!({ "outcome": "allowed-for-session", "rule": "Bash(cargo:*)" });
    ran(&run(&mut host, "cargo build", None, answer), "cargo build");
    let covered = run(
        &mut host,
        "cargo test --release",
        None,
        json!({ "outcome": "rejected" }),
    );
    ran(&covered, "cargo test --release");
    assert!(covered.approvals.is_empty());
}

#[test]
fn a_grant_for_a_sandboxed_run_does_not_cover_an_unsandboxed_one() {
    let mut host = host_with(json!({ "default": "ask" }), &[]);
    let answer = json!({ "outcome": "allowed-for-session" });
    ran(&run(&mut host, "npm install", None, answer), "npm install");
    let params = json!({ "callId": "c", "name": "bash",
        "arguments": { "command": "npm install", "dangerouslyDisableSandbox": true } });
    let (result, requests) = host.execute(params, |request| match request["method"].as_str() {
        Some("client/approve") => Reply::Result(json!({ "outcome": "rejected" })),
        _ => Reply::Result(json!({ "value": "ran" })),
    });
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(requests[0]["method"], "client/approve");
}

#[test]
fn an_always_answer_is_written_to_persist_to_and_loaded_by_the_next_host() {
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join(".dsh/settings.json");
    let permissions = json!({ "default": "ask", "persistTo": settings });
    let mut host = host_with(permissions.clone(), &[]);
    let answer = json!({ "outcome": "allowed-always" });
    ran(
        &run(&mut host, "npm run test:unit", None, answer),
        "npm run test:unit",
    );
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(
        written["permissions"]["allow"],
        json!(["Bash(npm run test:unit:*)"])
    );
    let grants = host.request("permissions/grants", json!({}));
    assert_eq!(grants["result"][0]["scope"], "always", "{grants}");
    host.finish();

    let mut next = host_with(permissions, &[]);
    let covered = run(
        &mut next,
        "npm run test:unit -- -t x",
        None,
        json!({ "outcome": "rejected" }),
    );
    ran(&covered, "npm run test:unit -- -t x");
    assert!(covered.approvals.is_empty(), "the next host asked again");
    let explained = next.request(
        "permissions/explain",
        json!({ "name": "bash", "arguments": { "command": "npm run test:unit" } }),
    );
    let rule = &explained["result"]["parts"][0]["rule"];
    assert_eq!(
        rule["origin"],
        settings.display().to_string(),
        "{explained}"
    );
    assert_eq!(rule["list"], "allow");
    next.finish();

    // Revoking an `always` grant takes it out of the file.
    let mut third = host_with(json!({ "default": "ask", "persistTo": settings }), &[]);
    ran(
        &run(
            &mut third,
            "make docs",
            None,
            json!({ "outcome": "allowed-always" }),
        ),
        "make docs",
    );
    let revoked = third.request("permissions/revoke", json!({ "id": "g1" }));
    assert_eq!(
        revoked["result"]["revoked"]["rule"], "Bash(make docs:*)",
        "{revoked}"
    );
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(
        written["permissions"]["allow"],
        json!(["Bash(npm run test:unit:*)"])
    );
}

fn explain(host: &mut Host, command: &str) -> Value {
    let answer = host.request(
        "permissions/explain",
        json!({ "name": "bash", "arguments": { "command": command } }),
    );
    assert!(answer.get("error").is_none(), "{answer}");
    answer["result"].clone()
}

#[test]
fn explain_names_the_rule_and_its_origin_for_allow_deny_ask_and_the_default() {
    let dir = tempfile::tempdir().unwrap();
    let persisted = dir.path().join("settings.json");
    std::fs::write(
        &persisted,
        json!({ "$schema": "x", "permissions": { "allow": ["Bash(make:*)"] } }).to_string(),
    )
    .unwrap();
    let file = temp_file(
        "explain-config.json",
        &json!({ "permissions": { "allow": ["Bash(git status:*)"], "deny": ["Bash(rm:*)"],
                 "persistTo": persisted } })
        .to_string(),
    );
    let file_name = file.display().to_string();
    let mut host = Host::serve(Framing::Ndjson, &["--config", &file_name]);
    let over = json!({ "permissions": { "ask": ["Bash(git push:*)"], "default": "deny" } });
    host.initialize(json!({ "executeTools": true }), over);
    let registered = host.request("tools/register", json!({ "tool": client_bash() }));
    assert!(registered["result"]["registration"].is_string());

    let allow = explain(&mut host, "git status --short");
    assert_eq!(allow["decision"], "allow");
    assert_eq!(
        allow["parts"][0]["rule"],
        json!({ "list": "allow", "index": 0, "rule": "Bash(git status:*)", "origin": file_name })
    );
    let deny = explain(&mut host, "git status && rm -rf x");
    assert_eq!(deny["decision"], "deny");
    assert_eq!(deny["parts"][1]["text"], "rm -rf x");
    assert_eq!(deny["parts"][1]["rule"]["origin"], file_name);
    assert_eq!(deny["parts"][1]["rule"]["list"], "deny");
    let ask = explain(&mut host, "git push origin main");
    assert_eq!(ask["decision"], "ask");
    assert_eq!(ask["parts"][0]["rule"]["origin"], "initialize.config");
    assert_eq!(
        ask["approver"], false,
        "no approval capability was declared"
    );
    let persisted_rule = explain(&mut host, "make all");
    assert_eq!(
        persisted_rule["parts"][0]["rule"]["origin"],
        persisted.display().to_string()
    );
    let default = explain(&mut host, "echo $(touch pwned)");
    assert_eq!(default["decision"], "deny");
    let inner = default["parts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["text"] == "touch pwned")
        .unwrap_or_else(|| panic!("{default}"));
    assert!(inner.get("rule").is_none(), "{default}");
    assert_eq!(inner["inside"], "$(...)", "{default}");
    assert_eq!(default["known"], true);

    // The denied result carries the same record.
    let params = json!({ "callId": "c", "name": "bash", "arguments": { "command": "rm -rf x" } });
    let (result, requests) = host.execute(params, |_| Reply::Silent);
    assert!(requests.is_empty());
    assert_eq!(result["isError"], true);
    assert_eq!(result["meta"]["permission"]["decision"], "deny", "{result}");
    assert_eq!(
        result["meta"]["permission"]["parts"][0]["rule"]["rule"],
        "Bash(rm:*)"
    );
    assert!(Path::new(&file).exists());
}

#[test]
fn explain_reports_the_sandbox_a_command_would_get_and_the_hooks_it_would_meet() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().display().to_string();
    let mut host = Host::spawn(Framing::Ndjson);
    let config = json!({ "builtins": { "bash": { "cwd": workspace } },
                         "permissions": { "allow": ["Bash(ls:*)"] } });
    host.initialize(json!({ "hooks": true, "approval": true }), config);
    let subscribed = host.request("hooks/subscribe", json!({ "event": "tools/pre-execute" }));
    assert!(subscribed.get("error").is_none(), "{subscribed}");
    let sandboxed = explain(&mut host, "ls");
    assert!(sandboxed["sandbox"].is_object(), "{sandboxed}");
    let subscription = subscribed["result"]["subscription"].clone();
    let hooks = sandboxed["hooks"].as_array().unwrap();
    let client_hook = hooks.iter().find(|h| h["name"] == subscription);
    assert_eq!(
        client_hook.unwrap()["event"],
        "tools/pre-execute",
        "{sandboxed}"
    );
    assert_eq!(sandboxed["approver"], true);
    let escalated = host.request(
        "permissions/explain",
        json!({ "name": "bash", "arguments": { "command": "ls", "dangerouslyDisableSandbox": true } }),
    );
    assert_eq!(escalated["result"]["sandbox"]["mode"], "off", "{escalated}");
    let unknown = host.request(
        "permissions/explain",
        json!({ "name": "nope", "arguments": {} }),
    );
    assert_eq!(unknown["result"]["known"], false, "{unknown}");
}
