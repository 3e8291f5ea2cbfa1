//! Automatic deferral (`tools.autoDefer`): when the definitions a scope would load come to
//! more than a token budget (`o200k_base`), whole MCP servers are deferred, the largest
//! first, until the rest fits (or no server is left). Measured per scope as its view is
//! built; a tool's count is taken once and kept with it.

use super::RegisteredTool;
use dsh_tools_protocol::{AutoDeferral, DeferredServer};
use std::sync::Arc;

/// The budget and the MCP servers whose tools it may defer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AutoDefer {
    pub above_tokens: u64,
    /// Configured server names (a tool `mcp__<server>__<tool>` belongs to the longest
    /// server name that prefixes it so).
    pub servers: Vec<String>,
}

impl AutoDefer {
    /// Defers servers in `deferred` (one flag per tool of `tools`) until the tools left
    /// fit; `pinned` says which tools never defer (`tools.alwaysLoaded`).
    pub fn apply(
        &self,
        tools: &[Arc<RegisteredTool>],
        deferred: &mut [bool],
        pinned: impl Fn(&RegisteredTool) -> bool,
    ) -> AutoDeferral {
        let mut total: u64 = 0;
        // (server, tool indexes, tokens) of the servers' loadable tools.
        let mut groups: Vec<(&str, Vec<usize>, u64)> = Vec::new();
        for (index, tool) in tools.iter().enumerate() {
            if deferred[index] {
                continue;
            }
            let tokens = tool.prompt_tokens();
            total += tokens;
            if pinned(tool) {
                continue;
            }
            let Some(server) = self.server_of(&tool.definition.name) else {
                continue;
            };
            match groups.iter_mut().find(|(name, _, _)| *name == server) {
                Some((_, members, sum)) => {
                    members.push(index);
                    *sum += tokens;
                }
                None => groups.push((server, vec![index], tokens)),
            }
        }
        let before = total;
        // Largest first; equal sizes by name, so the choice is deterministic.
        groups.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(b.0)));
        let mut servers = Vec::new();
        for (server, members, tokens) in groups {
            if total <= self.above_tokens {
                break;
            }
            for &index in &members {
                deferred[index] = true;
            }
            total -= tokens;
            servers.push(DeferredServer {
                name: server.to_owned(),
                tools: members.len() as u64,
                tokens,
            });
        }
        AutoDeferral {
            above_tokens: self.above_tokens,
            tokenizer: crate::tokens::TOKENIZER.into(),
            tokens_before: before,
            tokens_after: total,
            servers,
        }
    }

    fn server_of(&self, name: &str) -> Option<&str> {
        let rest = name.strip_prefix("mcp__")?;
        self.servers
            .iter()
            .filter(|server| {
                rest.strip_prefix(server.as_str())
                    .is_some_and(|tail| tail.starts_with("__"))
            })
            .max_by_key(|server| server.len())
            .map(String::as_str)
    }
}

impl RegisteredTool {
    /// `o200k_base` tokens of the definition as a prompt lists it (name, description and
    /// compact input schema), counted once.
    pub fn prompt_tokens(&self) -> u64 {
        *self.tokens.get_or_init(|| {
            let definition = &self.definition;
            let text = format!(
                "{}\n{}\n{}",
                definition.name,
                definition.description,
                crate::json::render_compact(definition.input.json_schema())
            );
            crate::tokens::count(&text) as u64
        })
    }
}
