//! `config.permissions`: Claude Code permission rules (`Read`, `Bash(git status)`,
//! `Bash(npm run test:*)`, `Read(src/**)`, `WebFetch(domain:x.com)`, `mcp__server__tool`),
//! translated to harness names at load and indexed by tool name, so a call checks only the
//! rules of its own tool. Deny wins over ask over allow; no match follows the default.

use super::cc_names::harness_names;
use crate::pipeline::hooks::{PreDecision, PreExecuteHook};
use crate::tool::{ToolError, ToolExecution};
use dsh_tools_protocol::{PermissionDefault, PermissionsConfig};
use futures::future::BoxFuture;
use globset::{Glob, GlobSet, GlobSetBuilder};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// A rule's verdict, ordered from weakest to strongest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[derive(serde::Serialize)]
#[serde(rename_all = "lowercase")]
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
    /// `Bash(prefix:*)`: the (sub)command is it or starts with it and a space.
    CommandPrefix(String),
    /// `Read(glob)`: the path argument matches.
    Path(Glob),
    /// `WebFetch(domain:x.com)`: the URL's host is it or a subdomain.
    Domain(String),
}

/// One matching rule: its verdict and where it stands (index into `Permissions::sources`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Hit {
    verdict: Verdict,
    /// Among equally strong rules a server-wide one, then the later one, is reported.
    server: bool,
    index: usize,
}

/// Keeps the stronger of two hits.
fn strongest(best: &mut Option<Hit>, hit: Hit) {
    if best.is_none_or(|b| hit > b) {
        *best = Some(hit);
    }
}

/// One tool's rules, indexed by what they look at, so a call costs lookups, not a scan.
#[derive(Debug, Default)]
struct ToolRules {
    any: Option<Hit>,
    commands: HashMap<String, Hit>,
    prefixes: HashMap<String, Hit>,
    globs: Vec<(Glob, Hit)>,
    /// `globs` compiled into one set (index i is `globs[i]`).
    paths: Option<(GlobSet, Vec<Hit>)>,
    domains: HashMap<String, Hit>,
}

impl ToolRules {
    fn add(&mut self, spec: Spec, hit: Hit) {
        let keep = |map: &mut HashMap<String, Hit>, key: String| {
            strongest_in(map.entry(key).or_insert(hit), hit);
        };
        match spec {
            Spec::Any => strongest(&mut self.any, hit),
            Spec::Command(command) => keep(&mut self.commands, command),
            Spec::CommandPrefix(prefix) => keep(&mut self.prefixes, prefix),
            Spec::Domain(domain) => keep(&mut self.domains, domain),
            Spec::Path(glob) => self.globs.push((glob, hit)),
        }
    }

    /// Compiles the path globs into one set.
    fn seal(&mut self) -> Result<(), globset::Error> {
        if self.globs.is_empty() {
            return Ok(());
        }
        let mut set = GlobSetBuilder::new();
        let mut hits = Vec::with_capacity(self.globs.len());
        for (glob, hit) in self.globs.drain(..) {
            set.add(glob);
            hits.push(hit);
        }
        self.paths = Some((set.build()?, hits));
        Ok(())
    }

    /// The strongest rule that looks at the arguments only (any, path, domain).
    fn argument_hit(&self, arguments: &Value, best: &mut Option<Hit>) {
        if let Some(hit) = self.any {
            strongest(best, hit);
        }
        if let Some((set, hits)) = &self.paths {
            let paths = ["file_path", "path", "notebook_path"]
                .iter()
                .filter_map(|key| arguments.get(*key).and_then(Value::as_str));
            for path in paths {
                let matched = set.matches(path.trim_start_matches("./"));
                for hit in matched.into_iter().filter_map(|i| hits.get(i)) {
                    strongest(best, *hit);
                }
            }
        }
        if !self.domains.is_empty()
            && let Some(host) = arguments
                .get("url")
                .and_then(Value::as_str)
                .and_then(host_of)
        {
            // The host itself and every parent domain.
            let suffixes = std::iter::once(host.as_str())
                .chain(host.match_indices('.').map(|(i, _)| &host[i + 1..]));
            for domain in suffixes {
                if let Some(hit) = self.domains.get(domain) {
                    strongest(best, *hit);
                }
            }
        }
    }

    /// The strongest command rule for one (sub)command.
    fn command_hit(&self, part: &str, best: &mut Option<Hit>) {
        if let Some(hit) = self.commands.get(part) {
            strongest(best, *hit);
        }
        if self.prefixes.is_empty() {
            return;
        }
        // `prefix:*` matches the part itself or any of its leading words.
        let candidates =
            std::iter::once(part).chain(part.match_indices(' ').map(|(i, _)| &part[..i]));
        for prefix in candidates {
            if let Some(hit) = self.prefixes.get(prefix) {
                strongest(best, *hit);
            }
        }
    }
}

fn strongest_in(slot: &mut Hit, hit: Hit) {
    if hit > *slot {
        *slot = hit;
    }
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
    by_tool: HashMap<String, ToolRules>,
    /// `mcp__server` and `mcp__server__*` rules by prefix (`mcp__server__`): every tool of
    /// a server.
    by_server_prefix: HashMap<String, Hit>,
    /// Rule texts, by `Hit::index`.
    sources: Vec<String>,
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
        // (list, index) of every rule, by `Hit::index`.
        let mut origins: Vec<(&'static str, usize)> = Vec::new();
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
                let index = permissions.sources.len();
                let hit = |server| Hit {
                    verdict,
                    server,
                    index,
                };
                if let Some(server) = name.strip_suffix("__*").or_else(|| server_wide(&name)) {
                    let hit = hit(true);
                    strongest_in(
                        permissions
                            .by_server_prefix
                            .entry(format!("{server}__"))
                            .or_insert(hit),
                        hit,
                    );
                } else {
                    let hit = hit(false);
                    let names: Vec<String> = match harness_names(&name) {
                        Some(mapped) => mapped.iter().map(|n| n.to_string()).collect(),
                        None => vec![name],
                    };
                    for name in names {
                        let rules = permissions.by_tool.entry(name).or_default();
                        rules.add(spec.clone(), hit);
                    }
                }
                permissions.sources.push(source.clone());
                origins.push((list, index));
            }
        }
        for (tool, rules) in &mut permissions.by_tool {
            // The set can still fail as a whole (size limits): name the tool's first path rule.
            let first = rules.globs.first().map(|(_, hit)| hit.index);
            rules.seal().map_err(|e| {
                let (list, index) = first
                    .and_then(|i| origins.get(i))
                    .copied()
                    .unwrap_or(("allow", 0));
                RuleError {
                    list,
                    index,
                    message: format!(
                        "the path rules of tool \"{tool}\" do not compile together: {e}"
                    ),
                }
            })?;
        }
        Ok(permissions)
    }

    /// Whether any rule or default is configured (no listener is installed otherwise).
    pub fn is_empty(&self) -> bool {
        self.by_tool.is_empty() && self.by_server_prefix.is_empty() && self.default.is_none()
    }

    /// The verdict for one call and the rule that decided it (`None`: the default).
    pub fn decide(&self, name: &str, arguments: &Value) -> (Verdict, Option<&str>) {
        let default = self.default.unwrap_or(Verdict::Allow);
        let rules = self.by_tool.get(name);
        // Rules that do not look at the command: any-call, path, domain, server-wide.
        let mut fixed = None;
        if !self.by_server_prefix.is_empty() {
            // Every prefix of the name that ends in `__` (overlapping ones included).
            let ends = name.as_bytes().windows(2).enumerate();
            for (i, _) in ends.filter(|(_, pair)| *pair == b"__") {
                if let Some(hit) = self.by_server_prefix.get(&name[..i + 2]) {
                    strongest(&mut fixed, *hit);
                }
            }
        }
        let Some(rules) = rules else {
            return self.verdict(fixed, default);
        };
        rules.argument_hit(arguments, &mut fixed);
        if rules.commands.is_empty() && rules.prefixes.is_empty() {
            return self.verdict(fixed, default);
        }
        // A compound shell command is judged part by part: `safe:*` does not allow
        // `safe && other`, and a deny on any part denies the whole.
        // A command with no part at all (`""`, `";"`) is judged once, as the empty command.
        let mut parts = match arguments.get("command").and_then(Value::as_str) {
            Some(command) => split_shell(command),
            None => Vec::new(),
        };
        if parts.is_empty() {
            parts.push("");
        }
        let mut worst: (Verdict, Option<&str>) = (Verdict::Allow, None);
        for part in parts {
            let mut best = fixed;
            rules.command_hit(part, &mut best);
            let verdict = self.verdict(best, default);
            if verdict.0 > worst.0 || (worst.1.is_none() && verdict.0 == worst.0) {
                worst = verdict;
            }
        }
        worst
    }

    fn verdict(&self, hit: Option<Hit>, default: Verdict) -> (Verdict, Option<&str>) {
        match hit {
            Some(hit) => (hit.verdict, self.sources.get(hit.index).map(String::as_str)),
            None => (default, None),
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
            Spec::Path(glob)
        }
        other => {
            return Err(format!(
                "rule {source:?}: {other} takes no argument pattern (use the bare name)"
            ));
        }
    };
    Ok((name.to_string(), spec))
}

/// Splits a shell command at `&&`, `||`, `;`, `|`, `&` and newlines outside quotes; each
/// part is a trimmed, non-empty slice of `command`.
fn split_shell(command: &str) -> Vec<&str> {
    let (mut parts, mut start, mut quote) = (Vec::new(), 0, None::<char>);
    let mut chars = command.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, ';' | '\n') => {
                parts.push(&command[start..i]);
                start = i + 1;
            }
            (None, '&' | '|') => {
                parts.push(&command[start..i]);
                start = i + 1;
                if let Some(&(j, next)) = chars.peek()
                    && next == c
                {
                    chars.next();
                    start = j + 1;
                }
            }
            (None, _) => {}
        }
    }
    parts.push(&command[start..]);
    parts
        .into_iter()
        .map(str::trim)
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

// ---- TEMPORARY STUB of the helper's contract (replaced at merge) ----
use serde::Serialize;
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision { pub decision: Verdict, pub parts: Vec<PartDecision> }
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PartKind { Call, Command, Write, Unreadable }
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartDecision { pub kind: PartKind, pub text: String, pub decision: Verdict,
  #[serde(skip_serializing_if = "Option::is_none")] pub rule: Option<RuleRef>,
  #[serde(skip_serializing_if = "Option::is_none")] pub inside: Option<String>,
  #[serde(skip_serializing_if = "Option::is_none")] pub reason: Option<String> }
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleRef { pub list: &'static str, pub index: usize, pub rule: String, pub origin: String }
pub struct RuleSource<'a> { pub origin: &'a str, pub config: &'a PermissionsConfig }
impl Permissions {
    pub fn compile_from(sources: &[RuleSource<'_>]) -> Result<Self, RuleError> {
        let mut all = PermissionsConfig::default();
        for s in sources { all.allow.extend(s.config.allow.clone()); all.ask.extend(s.config.ask.clone()); all.deny.extend(s.config.deny.clone()); if s.config.default.is_some() { all.default = s.config.default; } }
        Self::compile(&all)
    }
    pub fn decide_with(&self, n: &str, a: &Value, _g: Option<&Permissions>) -> Decision {
        let (v, r) = self.decide(n, a);
        Decision { decision: v, parts: vec![PartDecision { kind: PartKind::Call, text: n.into(), decision: v, rule: r.map(|r| RuleRef { list: "allow", index: 0, rule: r.into(), origin: "x".into() }), inside: None, reason: None }] }
    }
}
impl Decision {
    pub fn denial(&self, _t: &str) -> Option<String> { Some("denied".into()) }
    pub fn ask_reason(&self, _t: &str) -> Option<String> { None }
    pub fn suggested_rule(&self, _t: &str, _a: &Value) -> Option<String> { None }
}
