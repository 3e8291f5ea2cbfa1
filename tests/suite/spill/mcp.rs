//! An MCP tool's large answer is spilled like any result: `read_text_file` of
//! `@modelcontextprotocol/server-filesystem` on a 300 KB file.

#![allow(clippy::unwrap_used)]

use crate::support::mcp::{Host, filesystem, scratch};
use crate::support::spill::{READ_MORE, THRESHOLD, marker_path, numbered_lines};
use dsh_tools_protocol::PresentationMode;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_tools_large_text_is_spilled_with_its_value_intact() {
    let root = scratch("spill-mcp");
    let text = numbered_lines("mcp line", 25_000);
    assert!(text.len() > 300_000);
    std::fs::write(root.join("big.txt"), &text).unwrap();
    let host = Host::start(
        PresentationMode::Native,
        json!({ "fs": filesystem(root.to_str().unwrap()) }),
    )
    .await;
    let path = format!("{}/big.txt", root.display());
    let result = host
        .call("mcp__fs__read_text_file", json!({ "path": path }))
        .await;
    assert!(!result.is_error(), "{:?}", result.error());
    assert_eq!(result.value(), Some(&json!({ "content": text })));
    let preview = result.text();
    assert!(preview.len() <= THRESHOLD, "{} bytes", preview.len());
    assert!(preview.starts_with("mcp line 0\n"), "{preview}");
    assert!(preview.ends_with(READ_MORE));
    let meta = result.meta.as_ref().unwrap();
    let saved = marker_path(&preview);
    assert_eq!(meta["spill"]["path"], saved.display().to_string());
    assert_eq!(std::fs::read_to_string(&saved).unwrap(), text);
    host.mcp.shutdown().await;
}
