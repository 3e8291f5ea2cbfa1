//! `config.permissions`: Claude Code permission rules (`Read`, `Bash(git status)`,
//! `Bash(npm run test:*)`, `Read(src/**)`, `WebFetch(domain:x.com)`, `mcp__server__tool`),
//! translated to harness names at load and indexed by tool name, so a call checks only the
//! rules of its own tool. Deny wins over ask over allow; no match follows the default.

use super::cc_names::harness_names;
use crate::pipeline::hooks::{PreDecision, PreExecuteHook};
use crate::tool::{ToolError, ToolExecution};
use dsh_tools_protocol::{PermissionDefault, PermissionsConfig};
use futures::future::BoxFuture;
use globset::{Glob, GlobMatcher};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// A rule's verdict, ordered from weakest to strongest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Run it.
    Allow,
    /// Ask the user.
    Ask,
    /// Refuse.
    Deny,
}

/// What part of a call a rule looks at.
#[derive(Clone, Debug)]
enum Spec {
    /// Any call of the tool.
    Any,
    /// `Bash(cmd)`: the whole (sub)command equals it.
    Command(String),
    /// `Bash(prefix:*)`: the (sub)command starts with it.
    CommandPrefix(String),
    /// `Read(glob)`: the path argument matches.
    Path(GlobMatcher),
    /// `WebFetch(domain:x.com)`: the URL's host is it or a subdomain.
    Domain(String),
}

#[derive(Clone, Debug)]
struct Rule {
    source: String,
    verdict: Verdict,
    spec: Spec,
}

/// A permission rule that cannot be parsed (reported at `initialize`, naming the rule).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("config.permissions.{list}[{index}]: {message}")]
pub struct RuleError {
    list: &'static str,
    index: usize,
    message: String,
}

/// The compiled rule set.
#[derive(Debug, Default)]
pub struct Permissions {
    by_tool: HashMap<String, Vec<Rule>>,
    /// `mcp__server` and `mcp__server__*` rules: every tool of a server.
    by_server_prefix: Vec<(String, Rule)>,
    default: Option<Verdict>,
}

impl Permissions {
    /// Compiles `config`; every rule is validated.
    pub fn compile(config: &PermissionsConfig) -> Result<Self, RuleError> {
        let mut permissions = Permissions {
            default: config.default.map(|d| match d {
                PermissionDefault::Allow => Verdict::Allow,
                PermissionDefault::Ask => Verdict::Ask,
                PermissionDefault::Deny => Verdict::Deny,
            }),
            ..Permissions::default()
        };
        let lists = [
            ("allow", Verdict::Allow, &config.allow),
            ("ask", Verdict::Ask, &config.ask),
            ("deny", Verdict::Deny, &config.deny),
        ];
        for (list, verdict, rules) in lists {
            for (index, source) in rules.iter().enumerate() {
                let error = |message: String| RuleError {
                    list,
                    index,
                    message,
                };
                let (name, spec) = parse(source).map_err(error)?;
                let rule = Rule {
                    source: source.clone(),
                    verdict,
                    spec,
                };
                if let Some(server) = name.strip_suffix("__*").or_else(|| server_wide(&name)) {
                    permissions
                        .by_server_prefix
                        .push((format!("{server}__"), rule));
                    continue;
                }
                let names: Vec<String> = match harness_names(&name) {
                    Some(mapped) => mapped.iter().map(|n| n.to_string()).collect(),
                    None => vec![name],
                };
                for name in names {
                    permissions
                        .by_tool
                        .entry(name)
                        .or_default()
                        .push(rule.clone());
                }
            }
        }
        Ok(permissions)
    }

    /// Whether any rule or default is configured (no listener is installed otherwise).
    pub fn is_empty(&self) -> bool {
        self.by_tool.is_empty() && self.by_server_prefix.is_empty() && self.default.is_none()
    }

    /// The verdict for one call and the rule that decided it (`None`: the default).
    pub fn decide(&self, name: &str, arguments: &Value) -> (Verdict, Option<&str>) {
        let rules = self.by_tool.get(name).into_iter().flatten();
        let server_rules = self
            .by_server_prefix
            .iter()
            .filter(|(p, _)| name.starts_with(p.as_str()))
            .map(|(_, r)| r);
        let rules: Vec<&Rule> = rules.chain(server_rules).collect();
        let default = self.default.unwrap_or(Verdict::Allow);
        if rules.is_empty() {
            return (default, None);
        }
        // A compound shell command is judged part by part: `safe:*` does not allow
        // `safe && other`, and a deny on any part denies the whole.
        let parts = match arguments.get("command").and_then(Value::as_str) {
            Some(command) => split_shell(command),
            None => vec![String::new()],
        };
        let mut worst: (Verdict, Option<&str>) = (Verdict::Allow, None);
        for part in &parts {
            let matched = rules
                .iter()
                .filter(|r| r.spec.matches(part, arguments))
                .max_by_key(|r| r.verdict);
            let verdict = matched.map_or((default, None), |r| (r.verdict, Some(r.source.as_str())));
            if verdict.0 > worst.0 || (worst.1.is_none() && verdict.0 == worst.0) {
                worst = verdict;
            }
        }
        worst
    }
}

impl Spec {
    fn matches(&self, command_part: &str, arguments: &Value) -> bool {
        match self {
            Spec::Any => true,
            Spec::Command(command) => command_part == command,
            Spec::CommandPrefix(prefix) => {
                command_part == prefix
                    || command_part
                        .strip_prefix(prefix.as_str())
                        .is_some_and(|rest| rest.starts_with(' '))
            }
            Spec::Path(glob) => ["file_path", "path", "notebook_path"]
                .iter()
                .filter_map(|key| arguments.get(*key).and_then(Value::as_str))
                .any(|path| glob.is_match(path.trim_start_matches("./"))),
            Spec::Domain(domain) => arguments
                .get("url")
                .and_then(Value::as_str)
                .and_then(host_of)
                .is_some_and(|host| {
                    host == *domain
                        || host
                            .strip_suffix(domain.as_str())
                            .is_some_and(|sub| sub.ends_with('.'))
                }),
        }
    }
}

/// `mcp__server` alone names every tool of that server.
fn server_wide(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("mcp__")?;
    (!rest.is_empty() && !rest.contains("__")).then_some(name)
}

fn parse(source: &str) -> Result<(String, Spec), String> {
    let source = source.trim();
    let Some(open) = source.find('(') else {
        if source.is_empty() || source.contains(')') {
            return Err(format!("invalid rule {source:?}"));
        }
        return Ok((source.to_string(), Spec::Any));
    };
    let name = source[..open].trim();
    let inner = source[open + 1..]
        .strip_suffix(')')
        .ok_or_else(|| format!("rule {source:?} lacks a closing parenthesis"))?;
    let inner = inner.trim();
    if name.is_empty() {
        return Err(format!("rule {source:?} lacks a tool name"));
    }
    let spec = match name {
        "Bash" | "bash" => match inner.strip_suffix(":*") {
            Some(prefix) => Spec::CommandPrefix(prefix.trim_end().to_string()),
            None if inner == "*" || inner.is_empty() => Spec::Any,
            None => Spec::Command(inner.to_string()),
        },
        "WebFetch" | "web_fetch" => match inner.strip_prefix("domain:") {
            Some(domain) if !domain.is_empty() => Spec::Domain(domain.to_ascii_lowercase()),
            _ => return Err(format!("rule {source:?}: WebFetch takes domain:<host>")),
        },
        "Read" | "Write" | "Edit" | "MultiEdit" | "Glob" | "Grep" | "NotebookEdit" | "read"
        | "write" | "edit" | "glob" | "grep" => {
            let glob = Glob::new(inner.trim_start_matches("./"))
                .map_err(|e| format!("rule {source:?}: {e}"))?;
            Spec::Path(glob.compile_matcher())
        }
        other => {
            return Err(format!(
                "rule {source:?}: {other} takes no argument pattern (use the bare name)"
            ));
        }
    };
    Ok((name.to_string(), spec))
}

/// Splits a shell command at `&&`, `||`, `;`, `|` and newlines outside quotes.
fn split_shell(command: &str) -> Vec<String> {
    let (mut parts, mut current) = (Vec::new(), String::new());
    let (mut quote, mut chars) = (None::<char>, command.chars().peekable());
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), _) if c == q => {
                quote = None;
                current.push(c);
            }
            (Some(_), _) => current.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                current.push(c);
            }
            (None, ';' | '\n') => parts.push(std::mem::take(&mut current)),
            (None, '&' | '|') => {
                if chars.peek() == Some(&c) {
                    chars.next();
                }
                parts.push(std::mem::take(&mut current));
            }
            (None, _) => current.push(c),
        }
    }
    parts.push(current);
    parts
        .into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit('@').next()?.split(':').next()?;
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// The permission matcher as a pre-execute listener.
pub struct PermissionHook(pub Arc<Permissions>);

impl PreExecuteHook for PermissionHook {
    fn name(&self) -> &str {
        "permissions"
    }

    fn decide(
        &self,
        execution: &Arc<ToolExecution>,
    ) -> BoxFuture<'static, Result<PreDecision, ToolError>> {
        let (verdict, rule) = self.0.decide(&execution.name, &execution.arguments);
        let name = &execution.name;
        let decision = match (verdict, rule) {
            (Verdict::Allow, _) => PreDecision::Allow,
            (Verdict::Deny, Some(rule)) => PreDecision::Deny(format!(
                "tool \"{name}\" is denied by permission rule {rule}"
            )),
            (Verdict::Deny, None) => PreDecision::Deny(format!(
                "tool \"{name}\" is denied by the default permission"
            )),
            (Verdict::Ask, Some(rule)) => PreDecision::Ask(Some(format!(
                "permission rule {rule} requires approval for tool \"{name}\""
            ))),
            (Verdict::Ask, None) => PreDecision::Ask(None),
        };
        Box::pin(std::future::ready(Ok(decision)))
    }
}
