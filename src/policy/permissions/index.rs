//! The rule index: rules parsed from their Claude Code spelling and filed by tool and by
//! what they look at, so a call costs lookups, not a scan.

use super::Verdict;
use globset::{Glob, GlobSet, GlobSetBuilder};
use serde_json::Value;
use std::collections::HashMap;

/// What part of a call a rule looks at.
#[derive(Clone, Debug)]
pub(super) enum Spec {
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
pub(super) struct Hit {
    pub verdict: Verdict,
    /// Among equally strong rules a server-wide one, then the later one, is reported.
    pub server: bool,
    pub index: usize,
}

/// Keeps the stronger of two hits.
pub(super) fn strongest(best: &mut Option<Hit>, hit: Hit) {
    if best.is_none_or(|b| hit > b) {
        *best = Some(hit);
    }
}

/// One tool's rules, indexed by what they look at, so a call costs lookups, not a scan.
#[derive(Debug, Default)]
pub(super) struct ToolRules {
    pub any: Option<Hit>,
    pub commands: HashMap<String, Hit>,
    pub prefixes: HashMap<String, Hit>,
    pub globs: Vec<(Glob, Hit)>,
    /// `globs` compiled into one set (index i is `globs[i]`).
    paths: Option<(GlobSet, Vec<Hit>)>,
    domains: HashMap<String, Hit>,
}

impl ToolRules {
    pub(super) fn add(&mut self, spec: Spec, hit: Hit) {
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
    pub(super) fn seal(&mut self) -> Result<(), globset::Error> {
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
    pub(super) fn argument_hit(&self, arguments: &Value, best: &mut Option<Hit>) {
        if let Some(hit) = self.any {
            strongest(best, hit);
        }
        if let Some((set, hits)) = &self.paths {
            let paths = ["file_path", "path", "notebook_path"]
                .iter()
                .filter_map(|key| arguments.get(*key).and_then(Value::as_str));
            for path in paths {
                paths_hit(set, hits, path, best);
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

    /// The strongest rule for a file the command writes: any-call and path rules.
    pub(super) fn write_hit(&self, path: &str, best: &mut Option<Hit>) {
        if let Some(hit) = self.any {
            strongest(best, hit);
        }
        if let Some((set, hits)) = &self.paths {
            paths_hit(set, hits, path, best);
        }
    }

    /// The strongest command rule for one (sub)command.
    pub(super) fn command_hit(&self, part: &str, best: &mut Option<Hit>) {
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

fn paths_hit(set: &GlobSet, hits: &[Hit], path: &str, best: &mut Option<Hit>) {
    let matched = set.matches(path.trim_start_matches("./"));
    for hit in matched.into_iter().filter_map(|i| hits.get(i)) {
        strongest(best, *hit);
    }
}

pub(super) fn strongest_in(slot: &mut Hit, hit: Hit) {
    if hit > *slot {
        *slot = hit;
    }
}

/// `mcp__server` alone names every tool of that server.
pub(super) fn server_wide(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("mcp__")?;
    (!rest.is_empty() && !rest.contains("__")).then_some(name)
}

pub(super) fn parse(source: &str) -> Result<(String, Spec), String> {
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

pub(super) fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit('@').next()?.split(':').next()?;
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}
