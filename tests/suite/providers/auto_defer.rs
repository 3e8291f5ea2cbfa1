//! `tools.autoDefer` at a small budget: past it whole MCP servers are deferred, the
//! largest first, until the rest fits; `initialize`'s capabilities and the prompt say
//! which and why; off without the setting.

#![allow(clippy::unwrap_used)]

use crate::support::discovery::{section, tool_names};
use crate::support::mcp::{Binary, all_running, fixture, time};
use serde_json::json;

#[test]
fn past_the_budget_the_largest_server_is_deferred_and_reported() {
    let servers = json!({ "time": time(), "fixture": fixture(&[]) });
    let mut host = Binary::spawn_with_env(&["serve", "--framing", "ndjson"], &[]);
    let config = json!({ "mcpServers": servers, "tools": { "autoDefer": { "aboveTokens": 200 } } });
    let answer = host.request(
        "initialize",
        json!({ "protocolVersion": "1", "config": config }),
    );
    let auto = answer["result"]["capabilities"]["autoDeferred"].clone();
    assert_eq!(auto["aboveTokens"], 200, "{answer}");
    assert_eq!(auto["tokenizer"], "o200k_base");
    let before = auto["tokensBefore"].as_u64().unwrap();
    let after = auto["tokensAfter"].as_u64().unwrap();
    assert!(before > 200 && after < before, "{auto}");
    let deferred = auto["servers"].as_array().unwrap();
    assert!(!deferred.is_empty(), "{auto}");
    // Largest first, and each server's tokens account for the difference.
    let tokens: Vec<u64> = deferred
        .iter()
        .map(|s| s["tokens"].as_u64().unwrap())
        .collect();
    assert!(tokens.windows(2).all(|w| w[0] >= w[1]), "{auto}");
    assert_eq!(before - after, tokens.iter().sum::<u64>(), "{auto}");
    // It stopped as soon as the rest fit (or no server was left).
    let last = tokens.last().unwrap();
    assert!(after <= 200 || deferred.len() == 2, "{auto}");
    assert!(
        after + last > 200,
        "one server fewer would not have fit: {auto}"
    );

    host.wait_for_status(all_running);
    let prompt = host.request("tools/prompt", json!({}))["result"].clone();
    assert_eq!(prompt["autoDeferred"], auto, "{prompt}");
    let text = section(&prompt, "tools:auto-deferred").unwrap();
    let first = deferred[0]["name"].as_str().unwrap();
    assert!(
        text.contains(&format!("`{first}`")) && text.contains("over this host's budget of 200"),
        "{text}"
    );
    let names = tool_names(&prompt);
    assert!(names.contains(&"search_tools".to_string()), "{names:?}");
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with(&format!("mcp__{first}__"))),
        "{names:?}"
    );
}

#[test]
fn without_auto_defer_nothing_is_measured_or_deferred() {
    let mut host = Binary::spawn_with_env(&["serve", "--framing", "ndjson"], &[]);
    let config = json!({ "mcpServers": { "time": time() } });
    let answer = host.request(
        "initialize",
        json!({ "protocolVersion": "1", "config": config }),
    );
    assert!(
        answer["result"]["capabilities"]
            .get("autoDeferred")
            .is_none(),
        "{answer}"
    );
    host.wait_for_status(all_running);
    let prompt = host.request("tools/prompt", json!({}))["result"].clone();
    assert!(prompt.get("autoDeferred").is_none());
    assert!(tool_names(&prompt).contains(&"mcp__time__get_current_time".to_string()));
}
