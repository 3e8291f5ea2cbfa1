//! `config.permissions`: Claude Code permission rules (`Read`, `Bash(git status)`,
//! `Bash(npm run test:*)`, `Read(src/**)`, `WebFetch(domain:x.com)`, `mcp__server__tool`),
//! translated to harness names at load and indexed by tool name, so a call checks only the
//! rules of its own tool. A `bash` command is parsed ([`crate::policy::shell`]) and every
//! command it would run, file it would write and construct that cannot be read is decided
//! on its own. Deny wins over ask over allow; no match follows the default.

mod decide;
mod index;
mod messages;

use super::cc_names::harness_names;
use dsh_tools_protocol::{PermissionDefault, PermissionsConfig};
use index::{Hit, ToolRules, parse, server_wide, strongest_in};
use serde::Serialize;
use std::collections::HashMap;

/// A rule's verdict, ordered from weakest to strongest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Run it.
    Allow,
    /// Ask the user.
    Ask,
    /// Refuse.
    Deny,
}

/// What a [`PartDecision`] judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PartKind {
    /// A whole call of a tool that is not a shell.
    Call,
    /// One simple command a shell command would run.
    Command,
    /// A file a shell command would write.
    Write,
    /// A construct that cannot be judged before it runs.
    Unreadable,
}

/// The decision on one call: the strongest of its parts.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    /// The call's verdict.
    pub decision: Verdict,
    /// Each part and what decided it, in source order.
    pub parts: Vec<PartDecision>,
}

/// One part of a call and its verdict.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartDecision {
    /// What was judged.
    pub kind: PartKind,
    /// Command text, write target, unreadable construct or tool name.
    pub text: String,
    /// Its verdict.
    pub decision: Verdict,
    /// The rule that decided it; `None`: the default, or an unreadable part.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<RuleRef>,
    /// The construct it sits in (`$(...)`, `xargs`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inside: Option<String>,
    /// Why, when no rule says it: an unreadable part's reason, or the default's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Where a rule comes from.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleRef {
    /// `allow`, `ask` or `deny`.
    pub list: &'static str,
    /// Its index within that list of its source.
    pub index: usize,
    /// The rule as written.
    pub rule: String,
    /// The source (`config`, a settings file's path, …).
    pub origin: String,
}

/// One set of rules and where it comes from.
pub struct RuleSource<'a> {
    /// Named in messages and explanations.
    pub origin: &'a str,
    /// The rules.
    pub config: &'a PermissionsConfig,
}

/// A permission rule that cannot be parsed (reported at `initialize`, naming the rule).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}permissions.{list}[{index}]: {message}", origin_prefix(origin))]
pub struct RuleError {
    origin: String,
    list: &'static str,
    index: usize,
    message: String,
}

/// `config.permissions…` for the host's config (as always, `initialize.config` included:
/// the path names the field in it), `<file>: permissions…` else.
fn origin_prefix(origin: &str) -> String {
    if origin == "config" || origin == "initialize.config" {
        "config.".to_string()
    } else {
        format!("{origin}: ")
    }
}

/// The compiled rule set.
#[derive(Debug, Default)]
pub struct Permissions {
    by_tool: HashMap<String, ToolRules>,
    /// `mcp__server` and `mcp__server__*` rules by prefix (`mcp__server__`): every tool of
    /// a server.
    by_server_prefix: HashMap<String, Hit>,
    /// Every rule, by `Hit::index`.
    refs: Vec<RuleRef>,
    default: Option<Verdict>,
}

impl Permissions {
    /// Compiles `config` (origin `config`); every rule is validated.
    pub fn compile(config: &PermissionsConfig) -> Result<Self, RuleError> {
        Self::compile_from(&[RuleSource {
            origin: "config",
            config,
        }])
    }

    /// Compiles the rules of every source; the last source that sets a default wins.
    pub fn compile_from(sources: &[RuleSource<'_>]) -> Result<Self, RuleError> {
        let mut permissions = Permissions::default();
        for source in sources {
            permissions.add_source(source)?;
        }
        for (tool, rules) in &mut permissions.by_tool {
            // The set can still fail as a whole (size limits): name the tool's first path rule.
            let first = rules.globs.first().map(|(_, hit)| hit.index);
            let refs = &permissions.refs;
            rules.seal().map_err(|e| {
                let rule = first.and_then(|i| refs.get(i));
                RuleError {
                    origin: rule.map_or_else(|| "config".to_string(), |r| r.origin.clone()),
                    list: rule.map_or("allow", |r| r.list),
                    index: rule.map_or(0, |r| r.index),
                    message: format!(
                        "the path rules of tool \"{tool}\" do not compile together: {e}"
                    ),
                }
            })?;
        }
        Ok(permissions)
    }

    fn add_source(&mut self, source: &RuleSource<'_>) -> Result<(), RuleError> {
        let config = source.config;
        if let Some(default) = config.default {
            self.default = Some(match default {
                PermissionDefault::Allow => Verdict::Allow,
                PermissionDefault::Ask => Verdict::Ask,
                PermissionDefault::Deny => Verdict::Deny,
            });
        }
        let lists = [
            ("allow", Verdict::Allow, &config.allow),
            ("ask", Verdict::Ask, &config.ask),
            ("deny", Verdict::Deny, &config.deny),
        ];
        for (list, verdict, rules) in lists {
            for (index, text) in rules.iter().enumerate() {
                let (name, spec) = parse(text).map_err(|message| RuleError {
                    origin: source.origin.to_string(),
                    list,
                    index,
                    message,
                })?;
                let at = self.refs.len();
                let hit = |server| Hit {
                    verdict,
                    server,
                    index: at,
                };
                if let Some(server) = name.strip_suffix("__*").or_else(|| server_wide(&name)) {
                    let hit = hit(true);
                    let slot = self
                        .by_server_prefix
                        .entry(format!("{server}__"))
                        .or_insert(hit);
                    strongest_in(slot, hit);
                } else {
                    let hit = hit(false);
                    let names: Vec<String> = match harness_names(&name) {
                        Some(mapped) => mapped.iter().map(|n| n.to_string()).collect(),
                        None => vec![name],
                    };
                    for name in names {
                        self.by_tool.entry(name).or_default().add(spec.clone(), hit);
                    }
                }
                self.refs.push(RuleRef {
                    list,
                    index,
                    rule: text.clone(),
                    origin: source.origin.to_string(),
                });
            }
        }
        Ok(())
    }

    /// Whether any rule or default is configured (no listener is installed otherwise).
    pub fn is_empty(&self) -> bool {
        self.by_tool.is_empty() && self.by_server_prefix.is_empty() && self.default.is_none()
    }

    fn rule_ref(&self, hit: Option<Hit>) -> Option<RuleRef> {
        hit.and_then(|hit| self.refs.get(hit.index).cloned())
    }
}
