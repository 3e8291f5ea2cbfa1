//! The permission corpus: each command of `tests/permissions-corpus/commands.txt` must get
//! its decision under `rules.json` (allow `Bash(echo:*)`, `Bash(git status:*)`, …, deny
//! `Bash(rm:*)`, …, default deny). Every mismatch is reported at once.

#![allow(clippy::unwrap_used)]

use dsh_tools::policy::{Permissions, Verdict};
use dsh_tools_protocol::PermissionsConfig;
use serde_json::json;

const RULES: &str = include_str!("../../permissions-corpus/rules.json");
const COMMANDS: &str = include_str!("../../permissions-corpus/commands.txt");

#[test]
fn every_corpus_command_gets_its_decision() {
    let config: PermissionsConfig = serde_json::from_str(RULES).unwrap();
    let permissions = Permissions::compile(&config).unwrap();
    let mut mismatches = Vec::new();
    let mut checked = 0;
    for (number, line) in COMMANDS.lines().enumerate() {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let (expected, command) = line
            .split_once('\t')
            .unwrap_or_else(|| panic!("line {}: no tab: {line:?}", number + 1));
        let expected = match expected {
            "allow" => Verdict::Allow,
            "ask" => Verdict::Ask,
            "deny" => Verdict::Deny,
            other => panic!("line {}: unknown verdict {other:?}", number + 1),
        };
        let command = command.replace("\\n", "\n");
        let decision = permissions.decide("bash", &json!({ "command": command }));
        if decision.decision != expected {
            let parts: Vec<String> = decision
                .parts
                .iter()
                .map(|p| format!("{:?} {:?} {:?}", p.decision, p.kind, p.text))
                .collect();
            mismatches.push(format!(
                "line {}: {command:?}: expected {expected:?}, got {:?} ({})",
                number + 1,
                decision.decision,
                parts.join("; ")
            ));
        }
        checked += 1;
    }
    assert!(checked >= 150, "only {checked} commands in the corpus");
    assert!(
        mismatches.is_empty(),
        "{} of {checked} commands mismatch:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}
