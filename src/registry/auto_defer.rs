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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::registry::{Deferral, Registry};
    use crate::tool::{BodyOutput, ToolDefinition, ToolRunContext};
    use serde_json::json;

    fn tool(name: &str, words: usize) -> ToolDefinition {
        ToolDefinition::builder(name)
            .description(vec!["word"; words].join(" "))
            .output(json!({ "type": "null" }))
            .body(|_: ToolRunContext| async { Ok(BodyOutput::from(json!(null))) })
            .unwrap()
    }

    fn registry(above_tokens: u64, always_loaded: &[String]) -> Registry {
        let registry = Registry::default();
        for (name, words) in [
            ("mcp__big__a", 300),
            ("mcp__big__b", 300),
            ("mcp__mid__a", 200),
            ("mcp__small__a", 50),
            ("mcp__my__server__x", 10),
            ("local", 100),
        ] {
            registry.register(tool(name, words), None).unwrap();
        }
        let servers = ["big", "mid", "small", "my", "my__server"]
            .map(String::from)
            .to_vec();
        let auto = AutoDefer {
            above_tokens,
            servers,
        };
        registry.set_deferral(
            Deferral::new(&[], always_loaded)
                .unwrap()
                .with_auto(Some(auto)),
        );
        registry
    }

    fn deferred(registry: &Registry) -> Vec<String> {
        let view = registry.view(None);
        view.deferred()
            .map(|t| t.definition.name.to_string())
            .collect()
    }

    #[test]
    fn servers_are_deferred_largest_first_until_the_rest_fits() {
        let registry = registry(300, &[]);
        let auto = registry.auto_deferred(None).unwrap();
        let names: Vec<&str> = auto.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["big", "mid"], "{auto:?}");
        assert!(
            auto.tokens_after <= 300 && auto.tokens_before > 900,
            "{auto:?}"
        );
        assert_eq!(auto.servers[0].tools, 2);
        assert_eq!(
            deferred(&registry),
            ["mcp__big__a", "mcp__big__b", "mcp__mid__a"]
        );
        // A tool of no MCP server is never deferred automatically, even when nothing fits.
        let registry = registry_with_budget(1);
        assert!(!deferred(&registry).contains(&"local".to_string()));
    }

    fn registry_with_budget(above_tokens: u64) -> Registry {
        registry(above_tokens, &[])
    }

    #[test]
    fn within_the_budget_nothing_is_deferred_and_pinned_names_stay() {
        let registry = registry(100_000, &[]);
        let auto = registry.auto_deferred(None).unwrap();
        assert!(auto.servers.is_empty() && auto.tokens_before == auto.tokens_after);
        assert!(deferred(&registry).is_empty());
        let registry = registry_pinned();
        assert!(!deferred(&registry).contains(&"mcp__big__a".to_string()));
        assert!(deferred(&registry).contains(&"mcp__big__b".to_string()));
    }

    fn registry_pinned() -> Registry {
        registry(300, &["mcp__big__a".to_string()])
    }

    #[test]
    fn a_tool_belongs_to_the_longest_server_name_that_prefixes_it() {
        let auto = AutoDefer {
            above_tokens: 0,
            servers: vec!["my".into(), "my__server".into()],
        };
        assert_eq!(auto.server_of("mcp__my__server__x"), Some("my__server"));
        assert_eq!(auto.server_of("mcp__my__y"), Some("my"));
        assert_eq!(auto.server_of("mcp__other__y"), None);
        assert_eq!(auto.server_of("local"), None);
    }
}
