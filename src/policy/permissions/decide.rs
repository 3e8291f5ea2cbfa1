//! Deciding one call: a shell command part by part, any other call as a whole.

use super::index::{Hit, strongest};
use super::{Decision, PartDecision, PartKind, Permissions, Verdict};
use crate::policy::shell::{self, Part};
use serde_json::Value;

/// The harness tools whose path rules judge a file a shell command writes.
const WRITE_TOOLS: [&str; 2] = ["write", "edit"];

impl Permissions {
    /// The decision on one call.
    pub fn decide(&self, name: &str, arguments: &Value) -> Decision {
        self.decide_with(name, arguments, None)
    }

    /// The decision on one call; `grants` (session grants, allow rules) turn an `ask` part
    /// (and only an ask part) into allow, the part's rule then being the grant's.
    pub fn decide_with(
        &self,
        name: &str,
        arguments: &Value,
        grants: Option<&Permissions>,
    ) -> Decision {
        let command = arguments.get("command").and_then(Value::as_str);
        let has_command_rules = self
            .by_tool
            .get(name)
            .is_some_and(|r| !r.commands.is_empty() || !r.prefixes.is_empty());
        let parts = if has_command_rules || (name == "bash" && command.is_some()) {
            let command = command.unwrap_or_default();
            let mut parts = shell::analyze(command);
            if parts.is_empty() {
                // A command with no part at all (`""`, `";"`) is judged once, as itself.
                parts.push(Part::Command {
                    words: Vec::new(),
                    text: String::new(),
                    inside: None,
                });
            }
            parts
                .into_iter()
                .map(|part| self.shell_part(name, arguments, command, part, grants))
                .collect()
        } else {
            let verdict = self.fixed_hit(name, arguments);
            let mut part = self.judged(PartKind::Call, name.to_string(), verdict, None);
            if let Some(grants) = grants
                && part.decision == Verdict::Ask
            {
                grants.grant(&mut part, grants.fixed_hit(name, arguments));
            }
            vec![part]
        };
        let decision = parts
            .iter()
            .map(|p| p.decision)
            .max()
            .unwrap_or(Verdict::Allow);
        Decision { decision, parts }
    }

    /// Rules that do not look at the command: any-call, path, domain, server-wide.
    fn fixed_hit(&self, name: &str, arguments: &Value) -> Option<Hit> {
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
        if let Some(rules) = self.by_tool.get(name) {
            rules.argument_hit(arguments, &mut fixed);
        }
        fixed
    }

    fn command_hit(&self, name: &str, arguments: &Value, text: &str) -> Option<Hit> {
        let mut best = self.fixed_hit(name, arguments);
        if let Some(rules) = self.by_tool.get(name) {
            rules.command_hit(text, &mut best);
        }
        best
    }

    fn write_hit(&self, path: &str) -> Option<Hit> {
        let path = &normalized(path);
        let mut best = None;
        for tool in WRITE_TOOLS {
            if let Some(rules) = self.by_tool.get(tool) {
                rules.write_hit(path, &mut best);
            }
        }
        best
    }

    fn shell_part(
        &self,
        name: &str,
        arguments: &Value,
        command: &str,
        part: Part,
        grants: Option<&Permissions>,
    ) -> PartDecision {
        match part {
            Part::Command {
                words,
                text,
                inside,
            } => {
                let mut hit = self.command_hit(name, arguments, &text);
                // `/bin/rm -rf x` is `rm`: a deny or ask rule on the bare name holds for
                // the program called by path (an allow rule stays literal).
                if let Some(bare) = by_bare_name(&words)
                    && let Some(stricter) = self
                        .command_hit(name, arguments, &bare)
                        .filter(|h| h.verdict != Verdict::Allow)
                {
                    super::index::strongest(&mut hit, stricter);
                }
                let mut part = self.judged(PartKind::Command, text, hit, inside);
                if let Some(grants) = grants
                    && part.decision == Verdict::Ask
                {
                    let grant = grants.command_hit(name, arguments, &part.text);
                    grants.grant(&mut part, grant);
                }
                part
            }
            Part::Write { path, inside } => {
                let hit = self.write_hit(&path);
                let mut part = self.judged(PartKind::Write, path, hit, inside);
                if let Some(grants) = grants
                    && part.decision == Verdict::Ask
                {
                    let grant = grants.write_hit(&part.text);
                    grants.grant(&mut part, grant);
                }
                part
            }
            Part::Unreadable { text, reason } => {
                // Asked, unless a deny rule covers the whole call.
                let whole = self.command_hit(name, arguments, command);
                let denied = whole.filter(|hit| hit.verdict == Verdict::Deny);
                let mut part = PartDecision {
                    kind: PartKind::Unreadable,
                    text,
                    decision: if denied.is_some() {
                        Verdict::Deny
                    } else {
                        Verdict::Ask
                    },
                    rule: self.rule_ref(denied),
                    inside: None,
                    reason: Some(reason),
                };
                if let Some(grants) = grants
                    && part.decision == Verdict::Ask
                {
                    grants.grant(&mut part, grants.command_hit(name, arguments, command));
                }
                part
            }
        }
    }

    /// A part decided by `hit`, or by the default.
    fn judged(
        &self,
        kind: PartKind,
        text: String,
        hit: Option<Hit>,
        inside: Option<String>,
    ) -> PartDecision {
        let (decision, reason) = match hit {
            Some(hit) => (hit.verdict, None),
            None => {
                let default = self.default.unwrap_or(Verdict::Allow);
                let reason = match default {
                    Verdict::Allow => "no rule matches: the default is allow",
                    Verdict::Ask => "no rule matches: the default is ask",
                    Verdict::Deny => "no rule matches: the default is deny",
                };
                (default, Some(reason.to_string()))
            }
        };
        PartDecision {
            kind,
            text,
            decision,
            rule: self.rule_ref(hit),
            inside,
            reason,
        }
    }

    /// Applies a grant's hit to an ask part: only an allow turns it.
    fn grant(&self, part: &mut PartDecision, hit: Option<Hit>) {
        if let Some(hit) = hit.filter(|hit| hit.verdict == Verdict::Allow) {
            part.decision = Verdict::Allow;
            part.rule = self.rule_ref(Some(hit));
            part.reason = None;
        }
    }
}

/// `out/../x` → `x`, `./a//b` → `a/b`: a rule's glob sees the file that is written, not
/// a spelling that walks out of the directory it names (`..` past the start is kept).
/// The command with its program called by its bare name, when it was called by path.
fn by_bare_name(words: &[String]) -> Option<String> {
    let (program, rest) = words.split_first()?;
    let bare = program
        .rsplit('/')
        .next()
        .filter(|b| !b.is_empty() && program.contains('/'))?;
    Some(
        std::iter::once(bare)
            .chain(rest.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" "),
    )
}

fn normalized(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    let joined = parts.join("/");
    if path.starts_with('/') {
        format!("/{joined}")
    } else {
        joined
    }
}
