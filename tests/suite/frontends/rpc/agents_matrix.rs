//! Agent scopes through the real binary, as a table of scenarios (played by
//! `support::agents`): registration, shadowing, masks, reservations, closing and
//! presentation, each row checking what every agent sees, is offered and runs.

#![allow(clippy::unwrap_used)]

use crate::support::agents::*;

use serde_json::json;

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
        // A child inherits its parent's tools: the nearest layer's definition wins.
        Gets(Some("x-child"), "read", Some("x's read")),
        Runs(Some("x"), "read", ran("x's read"), &["client/executeTool"]),
        Runs(None, "read", ran("global read"), &["client/executeTool"]),
        Runs(
            Some("x-child"),
            "read",
            ran("x's read"),
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
        Mode(Some("x-child"), "fast", "exclusive"),
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
        Sees(Some("kid"), &["g", "kid-own", "own"]),
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
        // A child without its own presentAs inherits its parent's (and its parent's mask).
        Offers(
            Some("coder-child"),
            &["run_code"],
            &["tools:code-only", "tools:sdk"],
        ),
        Offers(None, &["my-search", "read"], &[]),
        Runs(Some("chat"), "read", ran("read"), &["client/executeTool"]),
        Runs(Some("coder"), "read", routed("read"), &[]),
        Runs(Some("coder-child"), "read", routed("read"), &[]),
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
        RunsCode(
            Some("coder-child"),
            program,
            program_returned("read"),
            &["client/executeTool"],
        ),
        RunsCode(Some("chat"), program, unknown("run_code"), &[]),
    ]
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
