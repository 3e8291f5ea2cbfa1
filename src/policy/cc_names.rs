//! Claude Code tool names ⇄ harness tool names (the seed's `cc-names`): CC names are
//! translated at the ingestion boundary and never compared or restricted raw.

use std::collections::HashSet;

/// The one-to-many map from Claude Code names to harness names.
pub const CC_TO_HARNESS_TOOLS: &[(&str, &[&str])] = &[
    ("Bash", &["bash"]),
    ("BashOutput", &["bash_output"]),
    ("Edit", &["edit"]),
    ("Glob", &["glob"]),
    ("Grep", &["grep"]),
    ("KillShell", &["bash_kill"]),
    ("LS", &["ls"]),
    ("MultiEdit", &["edit"]),
    ("NotebookEdit", &["NotebookEdit"]),
    ("Read", &["read", "read_image"]),
    ("Task", &["task"]),
    ("TodoWrite", &["todo_write"]),
    ("WebFetch", &["web_fetch"]),
    ("WebSearch", &["web_search"]),
    ("Write", &["write"]),
];

/// How unknown names are treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TranslationPolicy {
    /// Load-time config: unknown names pass through so the consumer fails loudly.
    Strict,
    /// User or model data: unknown names are dropped with a diagnostic.
    Lenient,
}

/// `Bash(git status)` → `Bash`: arg-specs are stripped, widening to a name-level gate.
pub fn bare_name(name: &str) -> &str {
    let name = name.trim();
    match name.find('(') {
        Some(open) if name.ends_with(')') => name[..open].trim_end(),
        _ => name,
    }
}

/// The harness names a CC name stands for, if it is a CC name.
pub fn harness_names(cc_name: &str) -> Option<&'static [&'static str]> {
    CC_TO_HARNESS_TOOLS
        .iter()
        .find(|(cc, _)| *cc == cc_name)
        .map(|(_, names)| *names)
}

/// Translates allow/deny lists bound for `restrict()`. `is_known` says whether a name is a
/// harness name the consumer knows. Lenient yields `None` when nothing survives.
pub fn translate_tool_names(
    names: &[String],
    policy: TranslationPolicy,
    is_known: &dyn Fn(&str) -> bool,
    on_diagnostic: &mut dyn FnMut(String),
) -> Option<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    let mut push = |name: &str, out: &mut Vec<String>| {
        if seen.insert(name.to_string()) {
            out.push(name.to_string());
        }
    };
    for raw in names {
        let name = bare_name(raw);
        if let Some(mapped) = harness_names(name) {
            for harness in mapped {
                push(harness, &mut out);
            }
        } else if policy == TranslationPolicy::Strict || is_known(name) {
            push(name, &mut out);
        } else {
            on_diagnostic(format!("dropped unknown tool name \"{raw}\""));
        }
    }
    match policy {
        TranslationPolicy::Lenient if out.is_empty() => None,
        _ => Some(out),
    }
}

/// Every name a CC-authored rule may use for harness tool `name` (match-only aliases).
pub fn cc_tool_aliases(name: &str) -> Vec<&str> {
    let mut aliases = vec![name];
    for (cc, harness) in CC_TO_HARNESS_TOOLS {
        if harness.contains(&name) && !aliases.contains(cc) {
            aliases.push(cc);
        }
    }
    aliases
}

/// The CC name for CC-facing payloads, or `name` when it has no CC alias.
pub fn cc_canonical_tool_name(name: &str) -> &str {
    CC_TO_HARNESS_TOOLS
        .iter()
        .find(|(_, harness)| harness.contains(&name))
        .map_or(name, |(cc, _)| cc)
}
