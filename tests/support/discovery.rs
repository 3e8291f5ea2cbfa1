//! Shared pieces of the tool-discovery suites: a wire client with client-executed tools,
//! tool specs with realistic names, and readers of prompts, searches and `tools/listChanged`.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use super::wire::{Framing, Host};
use serde_json::{Value, json};

/// A client-executed tool spec whose body returns its arguments' `text` (or `"ok"`).
pub fn spec(name: &str, description: &str, parameters: Value) -> Value {
    json!({
        "name": name,
        "description": description,
        "parameters": parameters,
        "output": { "schema": { "type": "string" } },
        "concurrencySafe": true
    })
}

/// [`spec`] with `deferred: true`.
pub fn deferred_spec(name: &str, description: &str, parameters: Value) -> Value {
    let mut spec = spec(name, description, parameters);
    spec["deferred"] = json!(true);
    spec
}

/// A small realistic tool set: `(name, description, parameters)`.
pub fn issue_tracker() -> Vec<(&'static str, &'static str, Value)> {
    vec![
        (
            "gh_create_issue",
            "Create a new issue in a GitHub repository.",
            json!({ "owner": { "type": "string", "required": true }, "repo": { "type": "string", "required": true },
                    "title": { "type": "string", "required": true, "description": "Issue title" } }),
        ),
        (
            "gh_list_pull_requests",
            "List pull requests of a repository, optionally filtered by state.",
            json!({ "repo": { "type": "string", "required": true }, "state": { "type": "string", "enum": ["open", "closed"] } }),
        ),
        (
            "gh_merge_pull_request",
            "Merge a pull request.",
            json!({ "repo": { "type": "string", "required": true }, "number": { "type": "integer", "required": true } }),
        ),
        (
            "slack_post_message",
            "Post a message to a Slack channel.",
            json!({ "channel": { "type": "string", "required": true }, "text": { "type": "string", "required": true } }),
        ),
        (
            "calendar_create_event",
            "Create a calendar event with a title, start and end time.",
            json!({ "title": { "type": "string", "required": true }, "start": { "type": "string", "required": true, "description": "ISO 8601 start time" } }),
        ),
    ]
}

/// A host over the real binary whose client executes tools (and answers every
/// `client/executeTool` with the call's `text`, or `"ok"`).
pub struct Client {
    pub wire: Host,
    next_call: u64,
}

super::wire::wraps_host!(Client => Host);

impl Client {
    /// `initialize` with `config` and the `executeTools` capability.
    pub fn new(config: Value) -> Client {
        Client {
            wire: Host::initialized(Framing::Ndjson, json!({ "executeTools": true }), config),
            next_call: 0,
        }
    }

    /// Registers `tool` (in `agent`'s layer when given); returns the registration id.
    pub fn register(&mut self, tool: Value, agent: Option<&str>) -> String {
        let response = self.request("tools/register", scoped(agent, json!({ "tool": tool })));
        response["result"]["registration"]
            .as_str()
            .unwrap_or_else(|| panic!("register failed: {response}"))
            .to_string()
    }

    /// Opens `agent` (under `parent`).
    pub fn open(&mut self, agent: &str, parent: Option<&str>) {
        let mut params = json!({ "agent": agent });
        if let Some(parent) = parent {
            params["parent"] = json!(parent);
        }
        let response = self.request("agents/open", params);
        assert_eq!(response["result"], Value::Null, "{response}");
    }

    /// `tools/prompt` of `agent`'s scope (the `result`).
    pub fn prompt(&mut self, agent: Option<&str>) -> Value {
        let response = self.request("tools/prompt", scoped(agent, json!({})));
        assert!(response.get("result").is_some(), "{response}");
        response["result"].clone()
    }

    /// The exact text of `tools/prompt`'s result, as the host wrote it.
    pub fn prompt_bytes(&mut self, agent: Option<&str>) -> String {
        self.request_raw_result("tools/prompt", scoped(agent, json!({})))
    }

    /// Runs one call through `tools/execute`, answering client tool calls; the result.
    pub fn execute(&mut self, agent: Option<&str>, name: &str, arguments: Value) -> Value {
        self.next_call += 1;
        let call = json!({ "callId": format!("c{}", self.next_call), "name": name, "arguments": arguments });
        let response =
            self.wire
                .request_answering("tools/execute", scoped(agent, call), |request| {
                    let text = request["params"]["arguments"]["text"]
                        .as_str()
                        .unwrap_or("ok")
                        .to_string();
                    json!({ "value": text })
                });
        response["result"].clone()
    }

    /// `search_tools` with `arguments` from `agent`'s scope: the result.
    pub fn search(&mut self, agent: Option<&str>, arguments: Value) -> Value {
        self.execute(agent, "search_tools", arguments)
    }

    /// Every `tools/listChanged` received so far (taken from the inbox), as its params.
    pub fn list_changes(&mut self) -> Vec<Value> {
        // A round trip first, so notifications sent before it have arrived.
        self.request("mcp/status", json!({}));
        self.drain("tools/listChanged")
            .into_iter()
            .map(|n| n["params"].clone())
            .collect()
    }
}

/// `params` with `agent` set when given.
pub fn scoped(agent: Option<&str>, mut params: Value) -> Value {
    if let Some(agent) = agent {
        params["agent"] = json!(agent);
    }
    params
}

/// The tool names of a prompt assembly, in order.
pub fn tool_names(prompt: &Value) -> Vec<String> {
    prompt["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("not an assembly: {prompt}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

/// The text of the prompt section `name` (`None` when absent).
pub fn section(prompt: &Value, name: &str) -> Option<String> {
    prompt["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .map(|s| s["text"].as_str().unwrap().to_string())
}

/// The names a `search_tools` result matched, in order.
pub fn found(result: &Value) -> Vec<String> {
    assert_eq!(result["isError"], false, "{result}");
    result["value"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

/// `(error.info.code, error.message)` of a failed result.
pub fn failure(result: &Value) -> (String, String) {
    assert_eq!(result["isError"], true, "{result}");
    (
        result["error"]["info"]["code"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        result["error"]["message"].as_str().unwrap().to_string(),
    )
}
