//! What a decision says: the model-facing denial, the approver's reason, the rule proposed
//! for "don't ask again".

use super::index::host_of;
use super::{Decision, PartDecision, PartKind, RuleRef, Verdict};
use crate::policy::cc_names::cc_canonical_tool_name;
use crate::policy::shell::{Part, analyze, suggested_prefix};
use serde_json::Value;

impl Decision {
    /// The part that decided: among the strongest parts, the first a rule decided, else
    /// the first.
    pub fn deciding(&self) -> Option<&PartDecision> {
        let strongest = || self.parts.iter().filter(|p| p.decision == self.decision);
        strongest()
            .find(|p| p.rule.is_some())
            .or_else(|| strongest().next())
    }

    /// The rule of the deciding part (`None`: the default decided, or an unreadable part).
    pub fn rule(&self) -> Option<&RuleRef> {
        self.deciding().and_then(|p| p.rule.as_ref())
    }

    /// The model-facing message when the call is denied.
    pub fn denial(&self, tool: &str) -> Option<String> {
        if self.decision != Verdict::Deny {
            return None;
        }
        let part = self.deciding()?;
        let what = match part.kind {
            PartKind::Call => None,
            PartKind::Write => Some(format!("writing `{}`", part.text)),
            PartKind::Command | PartKind::Unreadable => Some(format!("`{}`", part.text)),
        };
        let inside = part
            .inside
            .as_ref()
            .map(|inside| format!(" (inside {inside})"))
            .unwrap_or_default();
        Some(match (&part.rule, what) {
            (Some(rule), None) => {
                format!("tool \"{tool}\" is denied by permission rule {}", rule.rule)
            }
            (None, None) => format!("tool \"{tool}\" is denied by the default permission"),
            (Some(rule), Some(what)) => format!(
                "tool \"{tool}\" is denied by permission rule {} ({}[{}] in {}): {what}{inside}",
                rule.rule, rule.list, rule.index, rule.origin
            ),
            (None, Some(what)) => format!(
                "tool \"{tool}\" is denied by the default permission: no rule allows {what}{inside}"
            ),
        })
    }

    /// The approver's reason when the call asks (`None` when only the default asked).
    pub fn ask_reason(&self, tool: &str) -> Option<String> {
        if self.decision != Verdict::Ask {
            return None;
        }
        let asking = self.parts.iter().filter(|p| p.decision == Verdict::Ask);
        for part in asking {
            match (&part.kind, &part.rule, &part.reason) {
                (PartKind::Unreadable, _, Some(reason)) => {
                    return Some(format!(
                        "tool \"{tool}\" needs approval: {reason}: `{}`",
                        part.text
                    ));
                }
                (_, Some(rule), _) => {
                    return Some(format!(
                        "permission rule {} requires approval for tool \"{tool}\"",
                        rule.rule
                    ));
                }
                _ => {}
            }
        }
        None
    }

    /// The rule that would allow this call next time: `Bash(<prefix>:*)` for a command
    /// whose only unallowed part is one command, `<Tool>(<dir>/**)` for a path tool,
    /// `WebFetch(domain:<host>)`, else the tool's name. `None` when nothing is to approve
    /// or one rule cannot cover it.
    pub fn suggested_rule(&self, tool: &str, arguments: &Value) -> Option<String> {
        if self.decision == Verdict::Allow {
            return None;
        }
        let name = cc_canonical_tool_name(tool);
        let open: Vec<&PartDecision> = self
            .parts
            .iter()
            .filter(|p| p.decision != Verdict::Allow)
            .collect();
        if open
            .iter()
            .any(|p| p.decision == Verdict::Deny && p.rule.is_some())
        {
            // A deny rule wins over any allow rule.
            return None;
        }
        if open.iter().all(|p| p.kind == PartKind::Call) {
            return Some(call_rule(tool, name, arguments));
        }
        if open.iter().any(|p| p.kind != PartKind::Command) {
            return None;
        }
        let first = open.first()?;
        if open.iter().any(|p| p.text != first.text) || first.text.is_empty() {
            return None;
        }
        // The part's own words (a quoted word may hold spaces).
        let command = arguments
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let words = analyze(command)
            .into_iter()
            .find_map(|part| match part {
                Part::Command {
                    words,
                    text,
                    inside: _,
                } if text == first.text => Some(words),
                Part::Command { .. } | Part::Write { .. } | Part::Unreadable { .. } => None,
            })
            .unwrap_or_else(|| vec![first.text.clone()]);
        Some(match suggested_prefix(&words) {
            Some(prefix) => format!("{name}({prefix}:*)"),
            None => format!("{name}({})", first.text),
        })
    }
}

/// The rule for a whole call of a tool that is not a shell.
fn call_rule(tool: &str, name: &str, arguments: &Value) -> String {
    let path = ["file_path", "path", "notebook_path"]
        .iter()
        .find_map(|key| arguments.get(*key).and_then(Value::as_str));
    if let Some(path) = path {
        let parent = std::path::Path::new(path)
            .parent()
            .map(|p| p.to_string_lossy().into_owned())
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| ".".to_string());
        let parent = parent.trim_end_matches('/');
        return format!("{name}({parent}/**)");
    }
    if tool == "web_fetch"
        && let Some(host) = arguments
            .get("url")
            .and_then(Value::as_str)
            .and_then(host_of)
    {
        return format!("WebFetch(domain:{host})");
    }
    name.to_string()
}
