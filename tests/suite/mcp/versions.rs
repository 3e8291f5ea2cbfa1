//! Protocol version negotiation of the MCP client: `initialize` offers `2025-11-25` (the
//! newest revision with a handshake), a server answering `2025-06-18`, `2025-11-25` or the
//! current revision `2026-07-28` is used, and one answering a revision dsh-tools does not
//! speak fails naming it. The servers answer a chosen version (`hostile_server.py
//! --protocol`); the real servers of tests/mcp-servers (TypeScript and Python SDKs) are
//! covered by the other MCP tests, which all negotiate through the same offer.

#![allow(clippy::unwrap_used)]

use crate::support::http::{Everything, HttpHost};
use crate::support::mcp::{Host, everything, hostile, outcome, time};
use dsh_tools_protocol::{McpServerState, PresentationMode};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_answering_each_supported_revision_are_used_and_were_offered_the_newest() {
    let host = Host::start(
        PresentationMode::Native,
        json!({
            "v0618": hostile(&["--protocol", "2025-06-18"]),
            "v1125": hostile(&["--protocol", "2025-11-25"]),
            "v0728": hostile(&["--protocol", "2026-07-28"]),
            "echo": hostile(&[]),
        }),
    )
    .await;
    for server in ["v0618", "v1125", "v0728", "echo"] {
        assert_eq!(
            host.status(server).state,
            McpServerState::Running,
            "{:?}",
            host.status(server)
        );
        let offered = host
            .call(&format!("mcp__{server}__offered"), json!({}))
            .await;
        assert_eq!(outcome(&offered), Ok(json!("2025-11-25")), "{server}");
    }
    host.mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_answering_an_unknown_revision_fails_naming_it() {
    let host = Host::start(
        PresentationMode::Native,
        json!({ "odd": hostile(&["--protocol", "1999-01-01"]) }),
    )
    .await;
    host.wait_for("odd", |s| s.state == McpServerState::Failed)
        .await;
    let error = host.status("odd").last_error.unwrap_or_default();
    assert!(
        error.contains(
            "the MCP handshake failed: the server chose MCP protocol version \"1999-01-01\", which dsh-tools does not support (it offered 2025-11-25 and speaks 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28)"
        ),
        "{error}"
    );
    assert!(host.registered("odd").is_empty());
    host.mcp.shutdown().await;
}

#[test]
fn the_real_servers_are_reached_at_2025_11_25() {
    let remote = Everything::start();
    let mut host = HttpHost::start(
        "versions-real",
        &json!({ "mcpServers": {
            "everything": everything(),
            "time": time(),
            "remote": { "url": remote.url() }
        } }),
        &[],
    );
    for server in ["everything", "time", "remote"] {
        host.wait_for_line(&format!(
            "[{server}] speaks MCP protocol version 2025-11-25"
        ));
    }
}
