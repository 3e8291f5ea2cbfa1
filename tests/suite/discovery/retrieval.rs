//! Retrieval quality of `search_tools`: a catalog of 413 tools of 47 real-looking MCP servers
//! (`tests/tool-catalog/tools.json`; `everything` and `filesystem` as the real servers in
//! `tests/mcp-servers/` list them) searched with 114 labeled queries
//! (`tests/tool-catalog/queries.json`), everything deferred, each search a complete
//! `ToolRuntime::execute`. A query is found when one of its relevant tools (several when
//! they answer it equally) is among the first 5; the suite needs 90 % of them found.

#![allow(clippy::unwrap_used, clippy::print_stderr)]

use crate::support::catalog::{Catalog, runtime};
use dsh_tools::tool::ToolExecutionInput;
use serde_json::json;

#[tokio::test]
async fn recall_at_5_over_the_labeled_queries_is_at_least_90_percent() {
    let catalog = Catalog::load();
    assert!(catalog.tools.len() >= 300, "{}", catalog.tools.len());
    assert!(catalog.queries.len() >= 60, "{}", catalog.queries.len());
    let runtime = runtime(&catalog.tools, json!({ "tools": { "deferred": ["*"] } }));
    let mut found = 0;
    let mut recall = 0.0;
    let mut misses = Vec::new();
    for (query, relevant) in &catalog.queries {
        let input = ToolExecutionInput::new("q", "search_tools", json!({ "query": query }));
        let result = runtime.execute(input).await;
        let value = result
            .value()
            .unwrap_or_else(|| panic!("{query}: {result:?}"));
        let top: Vec<&str> = value["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        let hits = relevant
            .iter()
            .filter(|r| top.contains(&r.as_str()))
            .count();
        recall += hits as f64 / relevant.len() as f64;
        if hits > 0 {
            found += 1;
        } else {
            misses.push(format!("{query:?}: wanted {relevant:?}, got {top:?}"));
        }
    }
    let queries = catalog.queries.len() as f64;
    let found_share = f64::from(found) / queries;
    eprintln!(
        "search_tools over {} tools: {found} of {} queries found in the top 5 ({:.1} %), mean recall@5 over every relevant tool {:.3}; misses:\n{}",
        catalog.tools.len(),
        catalog.queries.len(),
        100.0 * found_share,
        recall / queries,
        misses.join("\n")
    );
    assert!(
        found_share >= 0.9,
        "found {found_share:.3}:\n{}",
        misses.join("\n")
    );
}
