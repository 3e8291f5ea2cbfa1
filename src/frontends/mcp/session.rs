//! The agent scope of one MCP session over Streamable HTTP: opened when rmcp creates the
//! session's server (on its `initialize`), closed, with everything registered or loaded
//! in it, when rmcp drops that server (the client's `DELETE`, an idle expiry, shutdown).

use crate::pipeline::ToolRuntime;
use crate::registry::RegistryError;
use crate::tool::AgentId;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Closes its agent scope on drop.
pub struct SessionScope {
    runtime: Arc<ToolRuntime>,
    agent: AgentId,
    /// Cancelled on drop: ends the session's list-change announcer.
    pub closed: CancellationToken,
}

impl SessionScope {
    /// Opens `agent` as a child of the host's own scope.
    pub fn open(runtime: &Arc<ToolRuntime>, agent: AgentId) -> Result<Self, RegistryError> {
        runtime.registry().open_agent(agent.clone(), None)?;
        tracing::info!(target: "mcp", "MCP session opened agent scope {agent}");
        Ok(SessionScope {
            runtime: runtime.clone(),
            agent,
            closed: CancellationToken::new(),
        })
    }
}

impl Drop for SessionScope {
    fn drop(&mut self) {
        self.closed.cancel();
        match self.runtime.close_agent(&self.agent) {
            Ok(()) => {
                tracing::info!(target: "mcp", "MCP session closed agent scope {}", self.agent);
            }
            Err(e) => tracing::warn!(target: "mcp", "closing agent scope {}: {e}", self.agent),
        }
    }
}
