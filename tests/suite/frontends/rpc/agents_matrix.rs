//! Agent scopes through the real binary, as a table of scenarios: each row is a sequence
//! of wire requests and what each agent then sees (`tools/schemas`, `tools/get`,
//! `tools/isAdmitted`, `tools/executionMode`), is offered (`tools/prompt`) and runs
//! (`tools/execute`, with the host→client requests that run asked for).

#![allow(clippy::unwrap_used)]

use crate::support::wire as support;

use serde_json::{Value, json};
use std::collections::HashMap;
use support::{Framing, Host, error_of};

/// One step of a scenario.
enum Step {
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

use Step::*;

/// A successful run of the client tool labelled `label`.
fn ran(label: &str) -> Value {
    json!({ "isError": false, "value": label, "content": [{ "type": "text", "text": label }] })
}

/// A run of a `run_code` program that returned `label`.
fn program_returned(label: &str) -> Value {
    json!({
        "isError": false,
        "value": { "logs": [], "result": label },
        "content": [{ "type": "text", "text": label }]
    })
}

fn unknown_tool_message(message: String) -> Value {
    json!({
        "isError": true,
        "error": { "message": message, "info": { "name": "HarnessError", "code": "UNKNOWN_TOOL" } },
        "content": [{ "type": "text", "text": format!("Error: {message}") }]
    })
}

/// `UNKNOWN_TOOL` for a tool the scope cannot see.
fn unknown(name: &str) -> Value {
    unknown_tool_message(format!("unknown tool \"{name}\""))
}

/// `UNKNOWN_TOOL` for a direct call under `code`.
fn routed(name: &str) -> Value {
    unknown_tool_message(format!(
        "unknown tool \"{name}\": only `run_code` is callable directly — call `{name}` from inside a `run_code` program instead"
    ))
}

fn open(agent: &str, parent: Option<&str>) -> Step {
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
fn safe(name: &str, agent: Option<&str>) -> Step {
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

fn restrict(label: &'static str, agent: &str, kind: &str, names: &[&str]) -> Step {
    Ok(
        Some(label),
        "tools/restrict",
        json!({ "agent": agent, kind: names }),
    )
}

fn global_vs_agent_registration() -> Vec<Step> {
    vec![
        open("x", None),
        open("y", None),
        Register("g", "global g", None),
        Register("own", "x's own", Some("x")),
        Sees(None, &["g"]),
        Sees(Some("x"), &["g", "own"]),
        Sees(Some("y"), &["g"]),
        Gets(Some("y"), "own", None),
        Runs(Some("x"), "own", ran("x's own"), &["client/executeTool"]),
        Runs(Some("y"), "own", unknown("own"), &[]),
        Runs(None, "own", unknown("own"), &[]),
        Runs(Some("y"), "g", ran("global g"), &["client/executeTool"]),
    ]
}

fn shadowing() -> Vec<Step> {
    vec![
        open("x", None),
        open("x-child", Some("x")),
        Register("read", "global read", None),
        Register("read", "x's read", Some("x")),
        Sees(Some("x"), &["read"]),
        Gets(Some("x"), "read", Some("x's read")),
        Gets(None, "read", Some("global read")),
        Gets(Some("x-child"), "read", Some("global read")),
        Runs(Some("x"), "read", ran("x's read"), &["client/executeTool"]),
        Runs(None, "read", ran("global read"), &["client/executeTool"]),
        Runs(
            Some("x-child"),
            "read",
            ran("global read"),
            &["client/executeTool"],
        ),
        Dispose("x's read", None),
        Runs(
            Some("x"),
            "read",
            ran("global read"),
            &["client/executeTool"],
        ),
        // executionMode classifies the definition the scope resolves.
        safe("fast", None),
        Register("fast", "x's fast", Some("x")),
        Mode(None, "fast", "parallel"),
        Mode(Some("x"), "fast", "exclusive"),
        Mode(Some("x-child"), "fast", "parallel"),
    ]
}

fn nested_agents_with_intersecting_masks() -> Vec<Step> {
    vec![
        Register("a", "a", None),
        Register("b", "b", None),
        Register("c", "c", None),
        Register("d", "d", None),
        open("p", None),
        open("kid", Some("p")),
        restrict("p allows abc", "p", "allow", &["a", "b", "c"]),
        restrict("kid denies b", "kid", "deny", &["b"]),
        Sees(Some("p"), &["a", "b", "c"]),
        Sees(Some("kid"), &["a", "c"]),
        restrict("p allows abd", "p", "allow", &["a", "b", "d"]),
        Sees(Some("p"), &["a", "b"]),
        Sees(Some("kid"), &["a"]),
        Admits(Some("kid"), "b", false),
        Admits(Some("p"), "b", true),
        Admits(Some("p"), "d", false),
        Runs(Some("kid"), "c", unknown("c"), &[]),
        Runs(Some("kid"), "a", ran("a"), &["client/executeTool"]),
        // A scope-local tool merges after the masks.
        Register("b", "kid's b", Some("kid")),
        Sees(Some("kid"), &["a", "b"]),
        Runs(Some("kid"), "b", ran("kid's b"), &["client/executeTool"]),
        Dispose("p allows abc", None),
        Sees(Some("p"), &["a", "b", "d"]),
        Sees(Some("kid"), &["a", "b", "d"]),
    ]
}

fn deny_vs_allow_with_later_registrations() -> Vec<Step> {
    vec![
        Register("a", "a", None),
        Ok(Some("r reserved"), "tools/reserve", json!({ "name": "r" })),
        open("denier", None),
        open("allower", None),
        restrict("deny a", "denier", "deny", &["a"]),
        restrict("allow a r", "allower", "allow", &["a", "r"]),
        Sees(Some("denier"), &[]),
        Sees(Some("allower"), &["a"]),
        Register("later", "later", None),
        Register("r", "r", None),
        Sees(Some("denier"), &["later", "r"]),
        Sees(Some("allower"), &["a", "r"]),
        Runs(Some("allower"), "later", unknown("later"), &[]),
        Runs(
            Some("denier"),
            "later",
            ran("later"),
            &["client/executeTool"],
        ),
        Runs(Some("allower"), "r", ran("r"), &["client/executeTool"]),
        Admits(Some("allower"), "later", false),
        Admits(Some("denier"), "later", true),
        Admits(Some("denier"), "a", false),
        Admits(Some("allower"), "never-registered", false),
        Admits(Some("denier"), "never-registered", true),
        // A hidden tool is exclusive whatever it declares.
        safe("quick", None),
        Mode(Some("denier"), "quick", "parallel"),
        Mode(Some("allower"), "quick", "exclusive"),
    ]
}

fn reservations_then_registration() -> Vec<Step> {
    vec![
        // Reservations of one name do not conflict; the name stays known until the last
        // is disposed.
        Ok(
            Some("lazy reserved"),
            "tools/reserve",
            json!({ "name": "lazy" }),
        ),
        Ok(
            Some("lazy again"),
            "tools/reserve",
            json!({ "name": "lazy" }),
        ),
        Dispose("lazy again", None),
        open("x", None),
        open("y", None),
        Sees(None, &[]),
        Gets(None, "lazy", None),
        Offers(None, &[], &[]),
        restrict("x denies lazy", "x", "deny", &["lazy"]),
        Admits(Some("x"), "lazy", false),
        Admits(Some("y"), "lazy", true),
        Admits(None, "lazy", true),
        Register("lazy", "lazy", None),
        Sees(None, &["lazy"]),
        Sees(Some("x"), &[]),
        Sees(Some("y"), &["lazy"]),
        Offers(Some("y"), &["lazy"], &[]),
        Runs(Some("x"), "lazy", unknown("lazy"), &[]),
        Runs(Some("y"), "lazy", ran("lazy"), &["client/executeTool"]),
        Dispose("lazy reserved", None),
        Sees(Some("y"), &["lazy"]),
    ]
}

fn close_disposes_everything() -> Vec<Step> {
    let pre_execute = |agent: &str| json!({ "event": "tools/pre-execute", "agent": agent });
    vec![
        Register("g", "g", None),
        Register("h", "h", None),
        open("p", None),
        open("kid", Some("p")),
        Register("own", "p's own", Some("p")),
        Ok(
            Some("p reserves r"),
            "tools/reserve",
            json!({ "name": "r", "agent": "p" }),
        ),
        restrict("p denies h", "p", "deny", &["h"]),
        Ok(
            Some("p presents both"),
            "tools/presentAs",
            json!({ "agent": "p", "mode": "both" }),
        ),
        Register("kid-own", "kid's own", Some("kid")),
        restrict("kid denies h", "kid", "deny", &["h"]),
        Ok(Some("p's hook"), "hooks/subscribe", pre_execute("p")),
        Ok(Some("kid's hook"), "hooks/subscribe", pre_execute("kid")),
        Sees(Some("p"), &["g", "own"]),
        Sees(Some("kid"), &["g", "kid-own"]),
        Offers(
            Some("p"),
            &["g", "own", "run_code"],
            &["tools:code-only", "tools:sdk"],
        ),
        Runs(
            Some("p"),
            "g",
            ran("g"),
            &["hooks/preExecute", "client/executeTool"],
        ),
        Runs(
            Some("kid"),
            "g",
            ran("g"),
            &["hooks/preExecute", "client/executeTool"],
        ),
        Ok(None, "agents/close", json!({ "agent": "p" })),
        Refused("tools/schemas", json!({ "agent": "p" }), "UNKNOWN_AGENT"),
        Refused("tools/schemas", json!({ "agent": "kid" }), "UNKNOWN_AGENT"),
        Dispose("p's own", Some("UNKNOWN_REGISTRATION")),
        Dispose("p reserves r", Some("UNKNOWN_REGISTRATION")),
        Dispose("p denies h", Some("UNKNOWN_REGISTRATION")),
        Dispose("p presents both", Some("UNKNOWN_REGISTRATION")),
        Dispose("kid's own", Some("UNKNOWN_REGISTRATION")),
        Dispose("kid denies h", Some("UNKNOWN_REGISTRATION")),
        Dispose("p's hook", Some("UNKNOWN_SUBSCRIPTION")),
        Dispose("kid's hook", Some("UNKNOWN_SUBSCRIPTION")),
        // The same names reopen empty: no mask, no presentation, no hook, no local tool.
        open("p", None),
        open("kid", Some("p")),
        Sees(Some("p"), &["g", "h"]),
        Sees(Some("kid"), &["g", "h"]),
        Offers(Some("p"), &["g", "h"], &[]),
        Runs(Some("p"), "g", ran("g"), &["client/executeTool"]),
        Runs(Some("kid"), "g", ran("g"), &["client/executeTool"]),
        Runs(Some("p"), "own", unknown("own"), &[]),
        Register("own", "p's new own", Some("p")),
        Ok(
            None,
            "tools/presentAs",
            json!({ "agent": "p", "mode": "code" }),
        ),
        Offers(Some("p"), &["run_code"], &["tools:code-only", "tools:sdk"]),
    ]
}

fn present_as_per_agent() -> Vec<Step> {
    let program = "return await tools.read({})";
    vec![
        Register("read", "read", None),
        Register("my-search", "my-search", None),
        open("coder", None),
        open("chat", None),
        open("mixed", None),
        open("coder-child", Some("coder")),
        Ok(
            None,
            "tools/presentAs",
            json!({ "agent": "coder", "mode": "code" }),
        ),
        Ok(
            None,
            "tools/presentAs",
            json!({ "agent": "mixed", "mode": "both" }),
        ),
        restrict("coder denies search", "coder", "deny", &["my-search"]),
        // The catalog is unchanged by presentation; only the assembly collapses.
        Sees(Some("coder"), &["read"]),
        Sees(Some("chat"), &["my-search", "read"]),
        Sees(Some("mixed"), &["my-search", "read"]),
        Offers(
            Some("coder"),
            &["run_code"],
            &["tools:code-only", "tools:sdk"],
        ),
        Offers(Some("chat"), &["my-search", "read"], &[]),
        Offers(
            Some("mixed"),
            &["my-search", "read", "run_code"],
            &["tools:code-only", "tools:sdk"],
        ),
        // A child without its own presentAs gets the config mode, not its parent's, while
        // its parent's mask still applies.
        Offers(Some("coder-child"), &["read"], &[]),
        Offers(None, &["my-search", "read"], &[]),
        Runs(Some("chat"), "read", ran("read"), &["client/executeTool"]),
        Runs(Some("coder"), "read", routed("read"), &[]),
        Runs(
            Some("coder-child"),
            "read",
            ran("read"),
            &["client/executeTool"],
        ),
        Runs(Some("mixed"), "read", ran("read"), &["client/executeTool"]),
        RunsCode(
            Some("coder"),
            program,
            program_returned("read"),
            &["client/executeTool"],
        ),
        RunsCode(
            Some("mixed"),
            program,
            program_returned("read"),
            &["client/executeTool"],
        ),
        RunsCode(Some("chat"), program, unknown("run_code"), &[]),
    ]
}

/// Plays one scenario against a fresh host.
struct Player {
    host: Host,
    /// Labels of registrations and subscriptions → their ids.
    ids: HashMap<&'static str, String>,
    /// Tool registration ids → labels (what `client/executeTool` answers).
    labels: HashMap<String, &'static str>,
}

impl Player {
    fn new(framing: Framing) -> Player {
        let capabilities = json!({ "executeTools": true, "hooks": true });
        Player {
            host: Host::initialized(framing, capabilities, json!({})),
            ids: HashMap::new(),
            labels: HashMap::new(),
        }
    }

    fn play(&mut self, step: Step) {
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

fn scoped(agent: Option<&str>, mut params: Value) -> Value {
    if let Some(agent) = agent {
        params["agent"] = json!(agent);
    }
    params
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap_or_else(|| panic!("expected a list: {list}"))
        .iter()
        .map(|item| item["name"].as_str().unwrap())
        .collect()
}

/// Plays `steps` against a fresh host in each framing.
fn play_in_both_framings(steps: fn() -> Vec<Step>) {
    for framing in [Framing::Lsp, Framing::Ndjson] {
        let mut player = Player::new(framing);
        for step in steps() {
            player.play(step);
        }
        assert_eq!(player.host.finish(), 0, "{framing:?}");
    }
}

/// One test per row of the matrix.
macro_rules! scenarios {
    ($($row:ident),* $(,)?) => {
        mod scenario {
            $(
                #[test]
                fn $row() {
                    super::play_in_both_framings(super::$row);
                }
            )*
        }
    };
}

scenarios!(
    global_vs_agent_registration,
    shadowing,
    nested_agents_with_intersecting_masks,
    deny_vs_allow_with_later_registrations,
    reservations_then_registration,
    close_disposes_everything,
    present_as_per_agent,
);
