//! The agent-scope scenario player: a scenario is a sequence of wire requests and what each
//! agent then sees (`tools/schemas`, `tools/get`, `tools/isAdmitted`,
//! `tools/executionMode`), is offered (`tools/prompt`) and runs (`tools/execute`, with the
//! host→client requests that run asked for), played through the real binary.

#![allow(dead_code, unused_macros, unused_imports, clippy::unwrap_used)]

use super::wire::{Framing, Host, error_of};

use serde_json::{Value, json};
use std::collections::HashMap;

/// One step of a scenario.
pub enum Step {
    /// A client tool named `name` whose description (and whatever value it returns) is
    /// `label`, registered in `agent`'s layer (global without one).
    Register(&'static str, &'static str, Option<&'static str>),
    /// A request that must succeed; the registration or subscription it returns is kept
    /// under the label, when there is one.
    Ok(Option<&'static str>, &'static str, Value),
    /// Disposing the labelled registration (or subscription) answers this error code, or
    /// succeeds when there is none.
    Dispose(&'static str, Option<&'static str>),
    /// A request that fails with this `data.code`.
    Refused(&'static str, Value, &'static str),
    /// `tools/schemas` names, in order.
    Sees(Option<&'static str>, &'static [&'static str]),
    /// `tools/get`'s description (the label), or `null`.
    Gets(Option<&'static str>, &'static str, Option<&'static str>),
    /// Whether `tools/get` resolves the name at all (for tools whose description is long).
    Has(Option<&'static str>, &'static str, bool),
    /// `tools/isAdmitted`.
    Admits(Option<&'static str>, &'static str, bool),
    /// `tools/executionMode` with no arguments: `"parallel"` or `"exclusive"`.
    Mode(Option<&'static str>, &'static str, &'static str),
    /// `tools/prompt`: tool names, then section names.
    Offers(
        Option<&'static str>,
        &'static [&'static str],
        &'static [&'static str],
    ),
    /// `tools/execute` without arguments: the whole result, and the methods of the
    /// host→client requests the run made, in order.
    Runs(
        Option<&'static str>,
        &'static str,
        Value,
        &'static [&'static str],
    ),
    /// `tools/execute` of `run_code` with this program, as [`Step::Runs`].
    RunsCode(
        Option<&'static str>,
        &'static str,
        Value,
        &'static [&'static str],
    ),
}

pub use Step::*;

/// A successful run of the client tool labelled `label`.
pub fn ran(label: &str) -> Value {
    json!({ "isError": false, "value": label, "content": [{ "type": "text", "text": label }] })
}

/// A run of a `run_code` program that returned `label`.
pub fn program_returned(label: &str) -> Value {
    json!({
        "isError": false,
        "value": { "logs": [], "result": label },
        "content": [{ "type": "text", "text": label }]
    })
}

pub fn unknown_tool_message(message: String) -> Value {
    json!({
        "isError": true,
        "error": { "message": message, "info": { "name": "HarnessError", "code": "UNKNOWN_TOOL" } },
        "content": [{ "type": "text", "text": format!("Error: {message}") }]
    })
}

/// `UNKNOWN_TOOL` for a tool the scope cannot see.
pub fn unknown(name: &str) -> Value {
    unknown_tool_message(format!("unknown tool \"{name}\""))
}

/// `UNKNOWN_TOOL` for a direct call under `code`.
pub fn routed(name: &str) -> Value {
    unknown_tool_message(format!(
        "unknown tool \"{name}\": only `run_code` is callable directly — call `{name}` from inside a `run_code` program instead"
    ))
}

pub fn open(agent: &str, parent: Option<&str>) -> Step {
    match parent {
        Some(parent) => Ok(
            None,
            "agents/open",
            json!({ "agent": agent, "parent": parent }),
        ),
        None => Ok(None, "agents/open", json!({ "agent": agent })),
    }
}

/// A concurrency-safe tool named `name` (never executed), in `agent`'s layer.
pub fn safe(name: &str, agent: Option<&str>) -> Step {
    let tool = json!({
        "name": name,
        "output": { "schema": { "type": "string" } },
        "concurrencySafe": true
    });
    Ok(
        None,
        "tools/register",
        scoped(agent, json!({ "tool": tool })),
    )
}

pub fn restrict(label: &'static str, agent: &str, kind: &str, names: &[&str]) -> Step {
    Ok(
        Some(label),
        "tools/restrict",
        json!({ "agent": agent, kind: names }),
    )
}

/// Plays one scenario against a fresh host.
pub struct Player {
    pub host: Host,
    /// Labels of registrations and subscriptions → their ids.
    ids: HashMap<&'static str, String>,
    /// Tool registration ids → labels (what `client/executeTool` answers).
    labels: HashMap<String, &'static str>,
}

impl Player {
    pub fn new(framing: Framing) -> Player {
        let capabilities = json!({ "executeTools": true, "hooks": true });
        Player {
            host: Host::initialized(framing, capabilities, json!({})),
            ids: HashMap::new(),
            labels: HashMap::new(),
        }
    }

    pub fn play(&mut self, step: Step) {
        match step {
            Register(name, label, agent) => {
                let mut params = json!({ "tool": {
                    "name": name,
                    "description": label,
                    "output": { "schema": { "type": "string" } }
                } });
                if let Some(agent) = agent {
                    params["agent"] = json!(agent);
                }
                let id = self.succeeded("tools/register", params)["registration"]
                    .as_str()
                    .unwrap()
                    .to_string();
                self.labels.insert(id.clone(), label);
                self.ids.insert(label, id);
            }
            Ok(label, method, params) => {
                let result = self.succeeded(method, params);
                if let Some(label) = label {
                    let id = result
                        .get("registration")
                        .or(result.get("subscription"))
                        .and_then(Value::as_str)
                        .unwrap();
                    self.ids.insert(label, id.to_string());
                }
            }
            Dispose(label, expected) => {
                let id = self.ids[label].clone();
                let response = if id.starts_with("hook:") {
                    self.host
                        .request("hooks/unsubscribe", json!({ "subscription": id }))
                } else {
                    self.host
                        .request("tools/unregister", json!({ "registration": id }))
                };
                match expected {
                    Some(code) => assert_eq!(error_of(&response).1, code, "dispose {label}"),
                    None => assert_eq!(response["result"], json!(null), "dispose {label}"),
                }
            }
            Refused(method, params, code) => {
                let response = self.host.request(method, params.clone());
                assert_eq!(error_of(&response).1, code, "{method} {params}");
            }
            Sees(agent, expected) => {
                let schemas = self.succeeded("tools/schemas", scoped(agent, json!({})));
                assert_eq!(names(&schemas), expected, "tools/schemas for {agent:?}");
            }
            Gets(agent, name, expected) => {
                let tool = self.succeeded("tools/get", scoped(agent, json!({ "name": name })));
                let description = expected.map_or(Value::Null, |label| json!(label));
                assert_eq!(
                    tool.get("description").cloned().unwrap_or(Value::Null),
                    description,
                    "tools/get {name} for {agent:?}: {tool}"
                );
            }
            Has(agent, name, expected) => {
                let tool = self.succeeded("tools/get", scoped(agent, json!({ "name": name })));
                assert_eq!(
                    !tool.is_null(),
                    expected,
                    "tools/get {name} for {agent:?}: {tool}"
                );
            }
            Admits(agent, name, expected) => {
                let admitted =
                    self.succeeded("tools/isAdmitted", scoped(agent, json!({ "name": name })));
                assert_eq!(admitted, json!(expected), "isAdmitted {name} for {agent:?}");
            }
            Mode(agent, name, expected) => {
                let params = scoped(agent, json!({ "name": name, "arguments": {} }));
                let mode = self.succeeded("tools/executionMode", params);
                assert_eq!(mode, json!(expected), "executionMode {name} for {agent:?}");
            }
            Offers(agent, tools, sections) => {
                let prompt = self.succeeded("tools/prompt", scoped(agent, json!({})));
                assert_eq!(names(&prompt["tools"]), tools, "prompt tools of {agent:?}");
                assert_eq!(
                    names(&prompt["sections"]),
                    sections,
                    "prompt sections of {agent:?}"
                );
            }
            Runs(agent, name, expected, asked) => {
                self.runs(agent, name, json!({}), expected, asked);
            }
            RunsCode(agent, code, expected, asked) => {
                let arguments = json!({ "code": code, "description": "a program" });
                self.runs(agent, "run_code", arguments, expected, asked);
            }
        }
    }

    /// Executes `name`, answering the host's requests (a client tool returns its label;
    /// pre-execute hooks allow), and checks the result and which requests were made.
    fn runs(
        &mut self,
        agent: Option<&str>,
        name: &str,
        arguments: Value,
        expected: Value,
        asked: &[&str],
    ) {
        let params = scoped(
            agent,
            json!({ "callId": "call", "name": name, "arguments": arguments }),
        );
        let labels = &self.labels;
        let mut seen = Vec::new();
        let response = self
            .host
            .request_answering("tools/execute", params, |request| {
                let method = request["method"].as_str().unwrap().to_string();
                let answer = match method.as_str() {
                    "client/executeTool" => {
                        let registration = request["params"]["registration"].as_str().unwrap();
                        json!({ "value": labels[registration] })
                    }
                    "hooks/preExecute" => json!({ "kind": "allow" }),
                    other => panic!("unexpected host request {other}"),
                };
                seen.push(method);
                answer
            });
        assert_eq!(
            response["result"], expected,
            "execute {name} as {agent:?}: {response}"
        );
        assert_eq!(seen, asked, "host requests of {name} as {agent:?}");
        self.host.inbox.clear();
    }

    fn succeeded(&mut self, method: &str, params: Value) -> Value {
        let response = self.host.request(method, params.clone());
        assert!(
            response.get("error").is_none(),
            "{method} {params}: {response}"
        );
        response["result"].clone()
    }
}

pub fn scoped(agent: Option<&str>, mut params: Value) -> Value {
    if let Some(agent) = agent {
        params["agent"] = json!(agent);
    }
    params
}

pub fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap_or_else(|| panic!("expected a list: {list}"))
        .iter()
        .map(|item| item["name"].as_str().unwrap())
        .collect()
}

/// Plays `steps` against a fresh host in each framing.
pub fn play_in_both_framings(steps: fn() -> Vec<Step>) {
    for framing in [Framing::Lsp, Framing::Ndjson] {
        let mut player = Player::new(framing);
        for step in steps() {
            player.play(step);
        }
        assert_eq!(player.host.finish(), 0, "{framing:?}");
    }
}

/// One test per scenario function of the calling file, each played in both framings.
macro_rules! scenarios {
    ($($row:ident),* $(,)?) => {
        mod scenario {
            $(
                #[test]
                fn $row() {
                    crate::support::agents::play_in_both_framings(super::$row);
                }
            )*
        }
    };
}
pub(crate) use scenarios;
