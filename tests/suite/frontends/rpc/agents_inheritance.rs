//! Tools, restrictions and presentations inherited down an agent chain, through the real
//! binary (reference: the scoped registry tests): a scope sees every ancestor's tools, the
//! nearest shadowing farther ones and its own shadowing all; its restrictions filter what it
//! inherits (never its own tools, never its parent's view) and reach its descendants; the
//! nearest `presentAs` on the chain decides its presentation, with everything that follows.

#![allow(clippy::unwrap_used)]

use crate::support::agents::*;
use crate::support::wire::{Framing, Host};

use serde_json::json;

fn tools_inherit_down_the_chain() -> Vec<Step> {
    vec![
        Register("g", "global g", None),
        Register("shared", "global shared", None),
        open("p", None),
        open("kid", Some("p")),
        open("grandkid", Some("kid")),
        open("sibling", Some("p")),
        Register("p-tool", "p's tool", Some("p")),
        Register("shared", "p's shared", Some("p")),
        Register("shared", "kid's shared", Some("kid")),
        Register("kid-own", "kid's own", Some("kid")),
        Sees(None, &["g", "shared"]),
        Sees(Some("p"), &["g", "p-tool", "shared"]),
        Sees(Some("kid"), &["g", "kid-own", "p-tool", "shared"]),
        Sees(Some("grandkid"), &["g", "kid-own", "p-tool", "shared"]),
        Sees(Some("sibling"), &["g", "p-tool", "shared"]),
        // The nearest layer on the chain shadows farther ones; the global layer is farthest.
        Gets(Some("grandkid"), "shared", Some("kid's shared")),
        Gets(Some("sibling"), "shared", Some("p's shared")),
        Gets(None, "shared", Some("global shared")),
        // Nothing flows up or sideways.
        Gets(Some("p"), "kid-own", None),
        Gets(Some("sibling"), "kid-own", None),
        Runs(
            Some("grandkid"),
            "shared",
            ran("kid's shared"),
            &["client/executeTool"],
        ),
        Runs(
            Some("grandkid"),
            "p-tool",
            ran("p's tool"),
            &["client/executeTool"],
        ),
        Runs(Some("p"), "kid-own", unknown("kid-own"), &[]),
        Offers(Some("grandkid"), &["g", "kid-own", "p-tool", "shared"], &[]),
        // executionMode classifies the inherited definition.
        safe("fast", Some("p")),
        Mode(Some("grandkid"), "fast", "parallel"),
        Mode(None, "fast", "exclusive"),
        // Disposing an ancestor's tool uncovers the next one up.
        Dispose("kid's shared", None),
        Gets(Some("grandkid"), "shared", Some("p's shared")),
    ]
}

fn restrictions_filter_what_a_scope_inherits() -> Vec<Step> {
    vec![
        Register("web", "web", None),
        open("p", None),
        open("kid", Some("p")),
        open("grandkid", Some("kid")),
        Register("bash", "p's bash", Some("p")),
        Register("read", "p's read", Some("p")),
        Register("report", "kid's report", Some("kid")),
        // Any inherited name is restrictable, an ancestor's included; own and unknown are not.
        restrict("kid denies bash", "kid", "deny", &["bash"]),
        Refused(
            "tools/restrict",
            json!({ "agent": "kid", "allow": ["report"] }),
            "LOCAL_NAME",
        ),
        Refused(
            "tools/restrict",
            json!({ "agent": "kid", "deny": ["ghost"] }),
            "UNKNOWN_NAME",
        ),
        Sees(Some("kid"), &["read", "report", "web"]),
        // A restriction reaches every descendant, never the parent.
        Sees(Some("grandkid"), &["read", "report", "web"]),
        Sees(Some("p"), &["bash", "read", "web"]),
        Runs(Some("kid"), "bash", unknown("bash"), &[]),
        Admits(Some("kid"), "bash", false),
        Admits(Some("grandkid"), "bash", false),
        Admits(Some("p"), "bash", true),
        // An allow list never strips the scope's own registrations.
        restrict("kid allows read", "kid", "allow", &["read"]),
        Sees(Some("kid"), &["read", "report"]),
        Runs(
            Some("kid"),
            "report",
            ran("kid's report"),
            &["client/executeTool"],
        ),
        // An ancestor's restriction reaches every scope nested inside it.
        restrict("p denies web", "p", "deny", &["web"]),
        Sees(Some("p"), &["bash", "read"]),
        Dispose("kid allows read", None),
        Sees(Some("grandkid"), &["read", "report"]),
    ]
}

fn present_as_is_inherited() -> Vec<Step> {
    let program = "return await tools.read({})";
    vec![
        Register("read", "read", None),
        safe("quick", None),
        open("coder", None),
        open("coder-child", Some("coder")),
        open("coder-grandchild", Some("coder-child")),
        open("native-child", Some("coder")),
        open("chat", None),
        Ok(
            None,
            "tools/presentAs",
            json!({ "agent": "coder", "mode": "code" }),
        ),
        Ok(
            None,
            "tools/presentAs",
            json!({ "agent": "native-child", "mode": "native" }),
        ),
        // The catalog is the inherited one; run_code resolves where code is inherited.
        Sees(Some("coder-grandchild"), &["quick", "read"]),
        Has(Some("coder-grandchild"), "run_code", true),
        Has(Some("native-child"), "run_code", false),
        Has(Some("chat"), "run_code", false),
        Has(None, "run_code", false),
        Offers(
            Some("coder-grandchild"),
            &["run_code"],
            &["tools:code-only", "tools:sdk"],
        ),
        Offers(Some("native-child"), &["quick", "read"], &[]),
        Offers(Some("chat"), &["quick", "read"], &[]),
        Offers(None, &["quick", "read"], &[]),
        Runs(Some("coder-grandchild"), "read", routed("read"), &[]),
        RunsCode(
            Some("coder-grandchild"),
            program,
            program_returned("read"),
            &["client/executeTool"],
        ),
        Runs(
            Some("native-child"),
            "read",
            ran("read"),
            &["client/executeTool"],
        ),
        RunsCode(Some("chat"), program, unknown("run_code"), &[]),
        // Under an effective code presentation every name but run_code is exclusive.
        Mode(Some("coder"), "quick", "exclusive"),
        Mode(Some("coder-grandchild"), "quick", "exclusive"),
        Mode(Some("native-child"), "quick", "parallel"),
        Mode(Some("chat"), "quick", "parallel"),
    ]
}

scenarios!(
    tools_inherit_down_the_chain,
    restrictions_filter_what_a_scope_inherits,
    present_as_is_inherited,
);

/// `tools.mode = "code"` makes every direct name exclusive (its direct calls only fail),
/// `run_code` keeping its own classification, and an agent presenting natively is exempt.
#[test]
fn under_a_code_config_execution_mode_is_exclusive_for_every_name_but_run_code() {
    let capabilities = json!({ "executeTools": true });
    let config = json!({ "tools": { "mode": "code" } });
    let mut host = Host::initialized(Framing::Ndjson, capabilities, config);
    let tool = json!({ "name": "quick", "output": { "schema": { "type": "string" } },
        "concurrencySafe": true });
    host.request("tools/register", json!({ "tool": tool }));
    host.request("agents/open", json!({ "agent": "plain" }));
    host.request(
        "tools/presentAs",
        json!({ "agent": "plain", "mode": "native" }),
    );
    host.request(
        "agents/open",
        json!({ "agent": "plain-child", "parent": "plain" }),
    );
    let mut mode = |name: &str, agent: Option<&str>| {
        let mut params = json!({ "name": name, "arguments": {} });
        if let Some(agent) = agent {
            params["agent"] = json!(agent);
        }
        host.request("tools/executionMode", params)["result"].clone()
    };
    assert_eq!(mode("quick", None), json!("exclusive"));
    assert_eq!(mode("quick", Some("plain")), json!("parallel"));
    assert_eq!(mode("quick", Some("plain-child")), json!("parallel"));
    let run_code = json!({ "code": "return 1", "description": "d" });
    let params = json!({ "name": "run_code", "arguments": run_code });
    assert_eq!(
        host.request("tools/executionMode", params)["result"],
        json!("exclusive")
    );
    assert_eq!(host.finish(), 0);
}

/// A child of a code agent gets an SDK over what it inherits, and its bindings run the
/// ancestor's registration.
#[test]
fn a_childs_sdk_and_bindings_cover_the_tools_it_inherits() {
    use crate::support::code::{Host as CodeHost, sdk_of};
    let capabilities = json!({ "executeTools": true });
    let mut host = CodeHost::initialized(Framing::Ndjson, capabilities, json!({}));
    host.request("agents/open", json!({ "agent": "p" }));
    host.request("tools/presentAs", json!({ "agent": "p", "mode": "code" }));
    let tool = json!({ "name": "p-tool", "description": "Only p has it.",
        "parameters": {}, "output": { "schema": { "type": "string" } } });
    let registered = host.request("tools/register", json!({ "tool": tool, "agent": "p" }));
    let registration = registered["result"]["registration"].clone();
    host.request("agents/open", json!({ "agent": "kid", "parent": "p" }));
    let sdk = sdk_of(&host.request("tools/prompt", json!({ "agent": "kid" })));
    assert!(sdk.contains("\"p-tool\": {"), "{sdk}");
    let id = json!("kid-run");
    let arguments = json!({ "code": "return await tools[\"p-tool\"]({})", "description": "d" });
    host.send_request(
        id.clone(),
        "tools/execute",
        json!({ "callId": "k1", "name": "run_code", "arguments": arguments, "agent": "kid" }),
    );
    let (response, _) = host.serve_until(&id, |request| {
        assert_eq!(request["registration"], registration, "{request}");
        assert_eq!(request["agent"], json!("kid"), "{request}");
        Some(Result::Ok(json!({ "value": "from p" })))
    });
    assert_eq!(
        response["result"]["value"]["result"],
        json!("from p"),
        "{response}"
    );
    assert_eq!(host.finish(), 0);
}
