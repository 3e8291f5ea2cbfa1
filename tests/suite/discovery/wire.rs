//! Progressive tool discovery over the wire, through the real binary: deferral by spec and
//! by glob (and `alwaysLoaded`), `search_tools` loading into a scope and changing its next
//! `tools/prompt` with `tools/listChanged`, `tools/loaded` / `tools/unload`, loading ending
//! with `agents/close`, restrictions and shadowing in search results, the reserved name and
//! bad input, and paraphrases found by the semantic signal (and not with it off).

#![allow(clippy::unwrap_used)]

use crate::support::discovery::{
    Client, deferred_spec, failure, found, issue_tracker, section, spec, tool_names,
};
use serde_json::{Value, json};

/// A client whose issue tracker tools are deferred by the `gh_*` glob (but `gh_list_*`
/// is always loaded), plus `slack_post_message` deferred by its spec and an ordinary `read`.
fn tracker() -> Client {
    let config =
        json!({ "tools": { "deferred": ["gh_*", "calendar_*"], "alwaysLoaded": ["gh_list_*"] } });
    let mut client = Client::new(config);
    for (name, description, parameters) in issue_tracker() {
        let tool = match name {
            "slack_post_message" => deferred_spec(name, description, parameters),
            _ => spec(name, description, parameters),
        };
        client.register(tool, None);
    }
    client.register(
        spec(
            "read",
            "Read a file.",
            json!({ "path": { "type": "string", "required": true } }),
        ),
        None,
    );
    client.list_changes();
    client
}

const DEFERRED: [&str; 4] = [
    "calendar_create_event",
    "gh_create_issue",
    "gh_merge_pull_request",
    "slack_post_message",
];

#[test]
fn deferral_by_spec_and_glob_keeps_tools_visible_and_callable_but_out_of_the_prompt() {
    let mut client = tracker();
    let prompt = client.prompt(None);
    assert_eq!(
        tool_names(&prompt),
        ["gh_list_pull_requests", "read", "search_tools"]
    );
    let listed: Vec<String> = DEFERRED.iter().map(|n| format!("- {n}")).collect();
    let deferred = section(&prompt, "tools:deferred").unwrap();
    assert!(
        deferred.starts_with("## Deferred tools\n\nThese tools are available"),
        "{deferred}"
    );
    assert!(deferred.ends_with(&listed.join("\n")), "{deferred}");
    let search = &prompt["tools"][2];
    assert_eq!(search["inputSchema"]["required"], json!(["query"]));
    assert!(
        search["description"]
            .as_str()
            .unwrap()
            .contains("select:<name>[,<name>]")
    );

    // Visible and executable under every existing rule: the catalog, `tools/get`, a call.
    let schemas = client.request("tools/schemas", json!({}));
    assert_eq!(schemas["result"].as_array().unwrap().len(), 6, "{schemas}");
    let get = client.request("tools/get", json!({ "name": "gh_create_issue" }));
    assert_eq!(
        get["result"]["description"],
        "Create a new issue in a GitHub repository."
    );
    let called = client.execute(
        None,
        "slack_post_message",
        json!({ "channel": "c", "text": "hi" }),
    );
    assert_eq!(called["value"], "hi", "{called}");
    assert_eq!(
        client.request("tools/loaded", json!({}))["result"],
        json!([]),
        "calling a deferred tool does not load it"
    );

    // With nothing deferred there is neither `search_tools` nor the section.
    let mut plain = Client::new(json!({}));
    plain.register(spec("read", "Read a file.", json!({})), None);
    let prompt = plain.prompt(None);
    assert_eq!(tool_names(&prompt), ["read"]);
    assert_eq!(prompt["sections"], json!([]));
    let missing = plain.execute(None, "search_tools", json!({ "query": "read" }));
    assert_eq!(
        failure(&missing),
        (
            "UNKNOWN_TOOL".into(),
            "unknown tool \"search_tools\"".into()
        )
    );
}

#[test]
fn a_search_loads_its_matches_into_the_scope_and_the_next_prompt_lists_them() {
    let mut client = tracker();
    let before = client.prompt_bytes(None);
    assert!(client.list_changes().is_empty());

    let result = client.search(None, json!({ "query": "merge a pull request" }));
    assert_eq!(found(&result)[0], "gh_merge_pull_request");
    let first = &result["value"]["tools"][0];
    assert_eq!(first["description"], "Merge a pull request.");
    assert_eq!(first["inputSchema"]["required"], json!(["repo", "number"]));
    assert_eq!(
        first.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["name", "description", "inputSchema"]
    );
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("Found "), "{text}");
    assert!(
        text.contains("{\"name\":\"gh_merge_pull_request\",\"description\":\"Merge a pull request.\",\"inputSchema\":{"),
        "{text}"
    );
    assert_eq!(client.list_changes(), [json!({})]);

    let picked = client.search(
        None,
        json!({ "query": "select:slack_post_message, calendar_create_event" }),
    );
    assert_eq!(
        found(&picked),
        ["slack_post_message", "calendar_create_event"]
    );
    assert_eq!(client.list_changes(), [json!({})]);
    let mut loaded = found(&result);
    for name in ["slack_post_message", "calendar_create_event"] {
        if !loaded.iter().any(|n| n == name) {
            loaded.push(name.to_string());
        }
    }
    assert_eq!(
        client.request("tools/loaded", json!({}))["result"],
        json!(loaded)
    );

    // The loaded tools follow the always-loaded ones, in the order found.
    let prompt = client.prompt(None);
    let mut expected = vec![
        "gh_list_pull_requests".to_string(),
        "read".into(),
        "search_tools".into(),
    ];
    expected.extend(loaded.iter().cloned());
    assert_eq!(tool_names(&prompt), expected);
    // The section still names every deferred tool: loading leaves the system prompt alone.
    assert_eq!(
        section(&prompt, "tools:deferred"),
        section(
            &serde_json::from_str::<Value>(&before).unwrap(),
            "tools:deferred"
        )
    );
    // Searching again for what is loaded changes nothing and announces nothing.
    client.search(None, json!({ "query": "select:gh_merge_pull_request" }));
    assert!(client.list_changes().is_empty());
    let unchanged = client.prompt_bytes(None);
    assert_eq!(unchanged, client.prompt_bytes(None));

    // The front end unloads (e.g. on compaction): the prompt is byte for byte what it was.
    let names: Vec<&str> = loaded.iter().map(String::as_str).collect();
    let unloaded = client.request("tools/unload", json!({ "names": names }));
    assert_eq!(unloaded["result"], Value::Null, "{unloaded}");
    assert_eq!(client.list_changes(), [json!({})]);
    assert_eq!(client.prompt_bytes(None), before);
    client.request("tools/unload", json!({ "names": ["read", "nothing"] }));
    assert!(client.list_changes().is_empty(), "nothing was loaded");
}

#[test]
fn loading_is_per_scope_and_ends_with_agents_close() {
    let mut client = tracker();
    client.open("a", None);
    client.open("child", Some("a"));
    client.open("b", None);
    client.list_changes();
    let result = client.search(Some("a"), json!({ "query": "calendar event" }));
    assert_eq!(found(&result)[0], "calendar_create_event");
    assert_eq!(client.list_changes(), [json!({ "agent": "a" })]);
    let loaded = |client: &mut Client, agent: &str| {
        client.request("tools/loaded", json!({ "agent": agent }))["result"].clone()
    };
    assert_eq!(loaded(&mut client, "a")[0], "calendar_create_event");
    for other in ["b", "child"] {
        assert_eq!(loaded(&mut client, other), json!([]), "{other}");
        let names = tool_names(&client.prompt(Some(other)));
        assert!(!names.contains(&"calendar_create_event".to_string()));
    }
    assert_eq!(
        client.request("tools/loaded", json!({}))["result"],
        json!([])
    );
    assert!(tool_names(&client.prompt(Some("a"))).contains(&"calendar_create_event".to_string()));

    client.request("agents/close", json!({ "agent": "a" }));
    client.open("a", None);
    assert_eq!(loaded(&mut client, "a"), json!([]));
    let unknown = client.request("tools/loaded", json!({ "agent": "ghost" }));
    assert_eq!(
        unknown["error"]["data"]["code"], "UNKNOWN_AGENT",
        "{unknown}"
    );
}

#[test]
fn restricted_and_shadowed_tools_obey_scoping_in_search_results() {
    let mut client = tracker();
    client.open("denied", None);
    client.open("shadowing", None);
    client.open("nothing-deferred", None);
    let restrict = client.request(
        "tools/restrict",
        json!({ "agent": "denied", "deny": ["gh_merge_pull_request"] }),
    );
    assert!(restrict["result"]["registration"].is_string(), "{restrict}");
    client.register(
        spec(
            "gh_merge_pull_request",
            "Squash and merge a pull request after checks pass (local flavor).",
            json!({ "number": { "type": "integer", "required": true } }),
        ),
        Some("shadowing"),
    );
    client.request(
        "tools/restrict",
        json!({ "agent": "nothing-deferred", "allow": ["read", "gh_list_pull_requests"] }),
    );

    let query = json!({ "query": "merge pull request", "limit": 20 });
    let global = found(&client.search(None, query.clone()));
    assert_eq!(global[0], "gh_merge_pull_request");
    let denied = found(&client.search(Some("denied"), query.clone()));
    assert!(
        !denied.contains(&"gh_merge_pull_request".to_string()),
        "{denied:?}"
    );
    let select = client.search(
        Some("denied"),
        json!({ "query": "select:gh_merge_pull_request" }),
    );
    assert_eq!(
        failure(&select),
        (
            "INVALID_ARGS".into(),
            "invalid arguments: \"query\" selects unknown tool \"gh_merge_pull_request\"".into()
        )
    );
    // The agent's own tool shadows the global one, and is deferred by the same glob.
    let shadowed = client.search(Some("shadowing"), query.clone());
    assert_eq!(found(&shadowed)[0], "gh_merge_pull_request");
    assert_eq!(
        shadowed["value"]["tools"][0]["description"],
        "Squash and merge a pull request after checks pass (local flavor)."
    );
    assert_eq!(
        shadowed["value"]["tools"][0]["inputSchema"]["required"],
        json!(["number"])
    );

    // A scope that sees no deferred tool has no `search_tools` at all.
    let names = tool_names(&client.prompt(Some("nothing-deferred")));
    assert_eq!(names, ["gh_list_pull_requests", "read"]);
    let absent = client.search(Some("nothing-deferred"), query);
    assert_eq!(failure(&absent).0, "UNKNOWN_TOOL");
}

#[test]
fn an_exact_name_ranks_first() {
    let mut client = Client::new(json!({ "tools": { "deferred": ["*"] } }));
    client.register(
        spec(
            "notes",
            "Keep notes about issues and issue comments, issue after issue.",
            json!({ "issue": { "type": "string", "description": "The issue" } }),
        ),
        None,
    );
    client.register(spec("issue", "Open a ticket.", json!({})), None);
    client.register(spec("mcp__tracker__issue_get", "Fetch.", json!({})), None);
    let result = client.search(None, json!({ "query": "issue" }));
    assert_eq!(found(&result)[0], "issue", "the full name");
    let result = client.search(None, json!({ "query": "ISSUE_GET" }));
    assert_eq!(
        found(&result)[0],
        "mcp__tracker__issue_get",
        "the name after the server prefix"
    );
}

#[test]
fn search_tools_is_reserved_like_run_code() {
    let mut client = tracker();
    client.open("a", None);
    let message = "\"search_tools\" is reserved for tool discovery and cannot be registered, reserved or restricted";
    let refused = |response: &Value| {
        assert_eq!(
            response["error"]["data"]["code"], "RESERVED_NAME",
            "{response}"
        );
        assert_eq!(response["error"]["message"], message);
    };
    for agent in [None, Some("a")] {
        let tool = spec("search_tools", "Mine.", json!({}));
        let response = client.request(
            "tools/register",
            crate::support::discovery::scoped(agent, json!({ "tool": tool })),
        );
        refused(&response);
        let response = client.request(
            "tools/reserve",
            crate::support::discovery::scoped(agent, json!({ "name": "search_tools" })),
        );
        refused(&response);
    }
    refused(&client.request(
        "tools/restrict",
        json!({ "agent": "a", "deny": ["search_tools"] }),
    ));
    let removed = client.request(
        "tools/unregister",
        json!({ "registration": "builtin:search_tools" }),
    );
    assert_eq!(removed["error"]["data"]["code"], "UNKNOWN_REGISTRATION");
    assert!(tool_names(&client.prompt(Some("a"))).contains(&"search_tools".to_string()));
    let get = client.request("tools/get", json!({ "name": "search_tools" }));
    assert_eq!(get["result"]["name"], "search_tools", "{get}");
}

#[test]
fn bad_input_is_invalid_args_and_no_match_is_an_empty_list_with_a_hint() {
    let mut client = tracker();
    let invalid = |why: &str| {
        (
            "INVALID_ARGS".to_string(),
            format!("invalid arguments: {why}"),
        )
    };
    let cases = [
        (
            json!({ "query": "" }),
            invalid("\"query\" must be a non-empty string"),
        ),
        (
            json!({ "query": "  \n" }),
            invalid("\"query\" must be a non-empty string"),
        ),
        (json!({}), invalid("missing required property \"query\"")),
        (json!({ "query": 5 }), invalid("\"query\" must be a string")),
        (
            json!({ "query": "issue", "limit": 0 }),
            invalid("\"limit\" must be an integer from 1 to 20"),
        ),
        (
            json!({ "query": "issue", "limit": 21 }),
            invalid("\"limit\" must be an integer from 1 to 20"),
        ),
        (
            json!({ "query": "issue", "limit": "5" }),
            invalid("\"limit\" must be an integer"),
        ),
        (
            json!({ "query": "issue", "max": 5 }),
            invalid("\"max\" is not a declared property (additionalProperties: false)"),
        ),
        (
            json!({ "query": "select:nope,gh_create_issue,other" }),
            invalid("\"query\" selects unknown tools \"nope\", \"other\""),
        ),
        (
            json!({ "query": "select: , " }),
            invalid("\"query\" select: names no tool (write select:<name>[,<name>])"),
        ),
    ];
    for (arguments, expected) in cases {
        let result = client.search(None, arguments.clone());
        assert_eq!(failure(&result), expected, "{arguments}");
        assert_eq!(result["error"]["info"]["name"], "ToolArgsError");
    }
    assert!(client.list_changes().is_empty());

    let result = client.search(None, json!({ "query": "zebra xylophone" }));
    assert_eq!(found(&result), Vec::<String>::new());
    let hint = "No deferred tool matches \"zebra xylophone\": try other or fewer keywords (what the tool does, or part of its name), or select:<name> for a name you know.";
    assert_eq!(result["value"], json!({ "tools": [], "hint": hint }));
    assert_eq!(result["content"], json!([{ "type": "text", "text": hint }]));
    let limited = client.search(None, json!({ "query": "create", "limit": 1 }));
    assert_eq!(found(&limited).len(), 1);
}

/// Three deferred tools none of whose words a weather question uses.
fn paraphrase_client(tools: Value) -> Client {
    let mut config = json!({ "tools": { "deferred": ["*"] } });
    for (key, value) in tools.as_object().unwrap() {
        config["tools"][key] = value.clone();
    }
    let mut client = Client::new(config);
    for (name, description) in [
        ("refund_payment", "Refund a charge to the customer."),
        ("get_forecast", "Get the weather forecast for a location."),
        ("take_screenshot", "Capture the page as an image."),
    ] {
        client.register(spec(name, description, json!({})), None);
    }
    client
}

#[test]
fn a_paraphrase_finds_a_tool_by_meaning_unless_semantic_search_is_off() {
    let query = json!({ "query": "will it rain tomorrow" });
    let mut fused = paraphrase_client(json!({}));
    assert_eq!(found(&fused.search(None, query.clone())), ["get_forecast"]);
    let money = json!({ "query": "give the client their money back", "limit": 1 });
    assert_eq!(found(&fused.search(None, money)), ["refund_payment"]);

    let mut lexical = paraphrase_client(json!({ "semanticSearch": false }));
    let result = lexical.search(None, query);
    assert_eq!(found(&result), Vec::<String>::new());
    assert!(result["value"]["hint"].is_string(), "{result}");
}
