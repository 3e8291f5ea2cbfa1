//! Deferred tools in Code Mode over the wire: the SDK declares only loaded tools in full and
//! lists the rest one line each under the `search_tools` heading; deferred tools are
//! bindings all the same; `await tools.search_tools(...)` inside a program returns the
//! matches' declarations (TypeScript and Python) and loads them, so the next SDK declares
//! them; the SDK is byte-identical for an unchanged tool set and load state.

#![allow(clippy::unwrap_used)]

use crate::support::discovery::{Client, issue_tracker, section, spec, tool_names};
use serde_json::{Value, json};

fn coder(language: &str) -> Client {
    let config = json!({
        "tools": { "mode": "code", "deferred": ["gh_*", "slack_*", "calendar_*"] },
        "codeRuntime": { "language": language }
    });
    let mut client = Client::new(config);
    for (name, description, parameters) in issue_tracker() {
        client.register(spec(name, description, parameters), None);
    }
    client.register(
        spec(
            "read",
            "Read a file. Returns its text.",
            json!({ "path": { "type": "string", "required": true } }),
        ),
        None,
    );
    client.list_changes();
    client
}

fn sdk(client: &mut Client) -> String {
    let prompt = client.prompt(None);
    assert_eq!(tool_names(&prompt), ["run_code"]);
    section(&prompt, "tools:sdk").unwrap()
}

fn run(client: &mut Client, code: &str) -> Value {
    let result = client.execute(
        None,
        "run_code",
        json!({ "code": code, "description": "find and call tools" }),
    );
    assert_eq!(result["isError"], false, "{result}");
    result["value"]["result"].clone()
}

#[test]
fn the_sdk_lists_deferred_tools_one_line_each_and_a_program_searches_and_calls_them() {
    let mut client = coder("typescript");
    let before = client.prompt_bytes(None);
    assert_eq!(before, client.prompt_bytes(None), "byte-identical");
    let text = sdk(&mut client);
    let (declared, listing) = text.split_once("\n\n### Deferred tools").unwrap();
    assert!(declared.contains("\n  read: {\n"), "{declared}");
    assert!(
        declared.contains("\n  search_tools: {\n    /** Keywords"),
        "{declared}"
    );
    assert!(!declared.contains("gh_create_issue"), "{declared}");
    assert!(
        listing
            .starts_with(": call `await tools.search_tools({ query })` for their declarations\n"),
        "{listing}"
    );
    assert!(
        listing.ends_with(
            "\n- calendar_create_event — Create a calendar event with a title, start and end time.\
             \n- gh_create_issue — Create a new issue in a GitHub repository.\
             \n- gh_list_pull_requests — List pull requests of a repository, optionally filtered by state.\
             \n- gh_merge_pull_request — Merge a pull request.\
             \n- slack_post_message — Post a message to a Slack channel."
        ),
        "{listing}"
    );

    // A deferred tool is a binding without a search; a search returns declarations and loads.
    let program = r#"
        const direct = await tools.slack_post_message({ channel: "c", text: "no search needed" });
        const found = await tools.search_tools({ query: "create an issue in github", limit: 2 });
        const [first] = found.tools;
        const created = await tools[first.name]({ owner: "o", repo: "r", title: "t", text: "made" });
        return { direct, names: found.tools.map((t) => t.name), keys: Object.keys(first),
                 declaration: first.declaration, output: first.outputSchema, created };
    "#;
    let value = run(&mut client, program);
    assert_eq!(value["direct"], "no search needed");
    assert_eq!(value["names"][0], "gh_create_issue");
    assert_eq!(
        value["keys"],
        json!([
            "name",
            "description",
            "inputSchema",
            "outputSchema",
            "declaration"
        ])
    );
    assert_eq!(value["output"], json!({ "type": "string" }));
    assert_eq!(
        value["declaration"],
        "interface ToolArgsMap {\n  /** Create a new issue in a GitHub repository. */\n  gh_create_issue: {\n    owner: string;\n    repo: string;\n    /** Issue title */\n    title: string;\n    [key: string]: JsonValue;\n  };\n}\n\ninterface ToolOutputMap {\n  gh_create_issue: string;\n}"
    );
    assert_eq!(value["created"], "made");
    assert_eq!(client.list_changes(), [json!({})]);

    // The next SDK declares what the program found and lists the rest.
    let loaded = client.request("tools/loaded", json!({}))["result"].clone();
    assert_eq!(loaded[0], "gh_create_issue");
    let text = sdk(&mut client);
    let (declared, listing) = text.split_once("\n\n### Deferred tools").unwrap();
    assert!(declared.contains("\n  gh_create_issue: {\n"), "{declared}");
    assert!(!listing.contains("- gh_create_issue"), "{listing}");
    assert!(listing.contains("- slack_post_message"), "{listing}");
    let after = client.prompt_bytes(None);
    assert_ne!(after, before);
    assert_eq!(after, client.prompt_bytes(None), "byte-identical");

    // Unloading restores the very bytes of the first SDK.
    let names: Vec<Value> = loaded.as_array().unwrap().clone();
    client.request("tools/unload", json!({ "names": names }));
    assert_eq!(client.prompt_bytes(None), before);
}

#[test]
fn a_python_program_gets_python_declarations() {
    let mut client = coder("python");
    let text = sdk(&mut client);
    assert!(
        text.contains(
            "\n\n### Deferred tools: call `await tools.search_tools({\"query\": ...})` for their declarations\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("    async def search_tools(self, args: SearchToolsArgs)"),
        "{text}"
    );
    let program = r#"
found = await tools.search_tools({"query": "select:gh_merge_pull_request"})
merged = await tools.gh_merge_pull_request({"repo": "r", "number": 7, "text": "merged"})
return {"declaration": found["tools"][0]["declaration"], "merged": merged}
"#;
    let value = run(&mut client, program);
    assert_eq!(
        value["declaration"],
        "class GhMergePullRequestArgs(TypedDict):\n    repo: str\n    number: int\n\nGhMergePullRequestOutput = str\n\nclass Tools:\n    # Merge a pull request.\n    async def gh_merge_pull_request(self, args: GhMergePullRequestArgs) -> GhMergePullRequestOutput: ..."
    );
    assert_eq!(value["merged"], "merged");
    let text = sdk(&mut client);
    assert!(
        text.contains("    async def gh_merge_pull_request(self, args: GhMergePullRequestArgs)"),
        "{text}"
    );
}

#[test]
fn under_both_the_native_list_and_the_sdk_present_the_same_load_state() {
    let config = json!({ "tools": { "mode": "both", "deferred": ["gh_*"] } });
    let mut client = Client::new(config);
    for (name, description, parameters) in issue_tracker() {
        client.register(spec(name, description, parameters), None);
    }
    let prompt = client.prompt(None);
    assert_eq!(
        tool_names(&prompt),
        [
            "calendar_create_event",
            "slack_post_message",
            "search_tools",
            "run_code"
        ]
    );
    assert_eq!(
        section(&prompt, "tools:deferred"),
        None,
        "the SDK lists them"
    );
    let result = client.search(None, json!({ "query": "select:gh_create_issue" }));
    assert_eq!(result["isError"], false, "{result}");
    let prompt = client.prompt(None);
    assert_eq!(
        tool_names(&prompt).last().map(String::as_str),
        Some("gh_create_issue")
    );
    let text = section(&prompt, "tools:sdk").unwrap();
    assert!(text.contains("\n  gh_create_issue: {\n"), "{text}");
    assert!(!text.contains("- gh_create_issue"), "{text}");
}
