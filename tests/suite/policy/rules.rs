//! Table-driven tests of Claude Code permission rules and CC-name translation.

#![allow(clippy::unwrap_used)]

use dsh_tools::policy::cc_names::{
    TranslationPolicy, bare_name, cc_canonical_tool_name, cc_tool_aliases, harness_names,
    translate_tool_names,
};
use dsh_tools::policy::{Permissions, Verdict};
use dsh_tools_protocol::{PermissionDefault, PermissionsConfig};
use serde_json::{Value, json};

fn rules(
    allow: &[&str],
    ask: &[&str],
    deny: &[&str],
    default: Option<PermissionDefault>,
) -> Permissions {
    let list = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
    Permissions::compile(&PermissionsConfig {
        allow: list(allow),
        ask: list(ask),
        deny: list(deny),
        default,
        ..PermissionsConfig::default()
    })
    .unwrap()
}

fn verdict(permissions: &Permissions, name: &str, arguments: Value) -> (Verdict, Option<String>) {
    let decision = permissions.decide(name, &arguments);
    (decision.decision, decision.rule().map(|r| r.rule.clone()))
}

#[test]
fn rules_match_as_claude_code_spells_them() {
    let p = rules(
        &[
            "Read",
            "Bash(git status)",
            "Bash(npm run test:*)",
            "WebFetch(domain:example.com)",
            "mcp__github__get_issue",
        ],
        &["Edit(src/**)", "mcp__jira"],
        &["Bash(rm:*)", "Read(secrets/**)", "mcp__github__delete_repo"],
        Some(PermissionDefault::Ask),
    );
    let cases: Vec<(&str, Value, Verdict, Option<&str>)> = vec![
        (
            "read",
            json!({ "file_path": "src/lib.rs" }),
            Verdict::Allow,
            Some("Read"),
        ),
        (
            "read_image",
            json!({ "file_path": "a.png" }),
            Verdict::Allow,
            Some("Read"),
        ),
        (
            "read",
            json!({ "file_path": "secrets/key.pem" }),
            Verdict::Deny,
            Some("Read(secrets/**)"),
        ),
        (
            "read",
            json!({ "file_path": "./secrets/key.pem" }),
            Verdict::Deny,
            Some("Read(secrets/**)"),
        ),
        (
            "bash",
            json!({ "command": "git status" }),
            Verdict::Allow,
            Some("Bash(git status)"),
        ),
        (
            "bash",
            json!({ "command": "git status --short" }),
            Verdict::Ask,
            None,
        ),
        (
            "bash",
            json!({ "command": "npm run test" }),
            Verdict::Allow,
            Some("Bash(npm run test:*)"),
        ),
        (
            "bash",
            json!({ "command": "npm run test -- --watch" }),
            Verdict::Allow,
            Some("Bash(npm run test:*)"),
        ),
        (
            "bash",
            json!({ "command": "npm run testing" }),
            Verdict::Ask,
            None,
        ),
        (
            "bash",
            json!({ "command": "git status && rm -rf /" }),
            Verdict::Deny,
            Some("Bash(rm:*)"),
        ),
        (
            "bash",
            json!({ "command": "git status; curl x" }),
            Verdict::Ask,
            None,
        ),
        (
            "bash",
            json!({ "command": "echo 'a && rm -rf /'" }),
            Verdict::Ask,
            None,
        ),
        (
            "web_fetch",
            json!({ "url": "https://example.com/a" }),
            Verdict::Allow,
            Some("WebFetch(domain:example.com)"),
        ),
        (
            "web_fetch",
            json!({ "url": "https://docs.example.com" }),
            Verdict::Allow,
            Some("WebFetch(domain:example.com)"),
        ),
        (
            "web_fetch",
            json!({ "url": "https://badexample.com" }),
            Verdict::Ask,
            None,
        ),
        (
            "edit",
            json!({ "file_path": "src/a/b.rs" }),
            Verdict::Ask,
            Some("Edit(src/**)"),
        ),
        (
            "mcp__github__get_issue",
            json!({}),
            Verdict::Allow,
            Some("mcp__github__get_issue"),
        ),
        (
            "mcp__github__delete_repo",
            json!({}),
            Verdict::Deny,
            Some("mcp__github__delete_repo"),
        ),
        (
            "mcp__jira__search",
            json!({}),
            Verdict::Ask,
            Some("mcp__jira"),
        ),
        ("mcp__jiraffe__x", json!({}), Verdict::Ask, None),
        ("write", json!({ "file_path": "x" }), Verdict::Ask, None),
    ];
    for (name, arguments, expected, rule) in cases {
        let got = verdict(&p, name, arguments.clone());
        assert_eq!(
            got,
            (expected, rule.map(str::to_string)),
            "{name} {arguments}"
        );
    }
}

#[test]
fn deny_wins_over_ask_over_allow_and_no_rule_follows_the_default() {
    let p = rules(&["Bash"], &["Bash"], &["Bash"], None);
    assert_eq!(
        verdict(&p, "bash", json!({ "command": "ls" })).0,
        Verdict::Deny
    );
    let p = rules(&["Bash"], &["Bash"], &[], None);
    assert_eq!(
        verdict(&p, "bash", json!({ "command": "ls" })).0,
        Verdict::Ask
    );
    let p = rules(&["Read"], &[], &[], None);
    assert_eq!(
        verdict(&p, "bash", json!({ "command": "ls" })),
        (Verdict::Allow, None)
    );
    let p = rules(&["Read"], &[], &[], Some(PermissionDefault::Deny));
    assert_eq!(
        verdict(&p, "bash", json!({ "command": "ls" })),
        (Verdict::Deny, None)
    );
}

#[test]
fn malformed_rules_are_rejected_naming_the_rule() {
    let cases = [
        (
            PermissionsConfig {
                allow: vec!["Bash(ls".into()],
                ..Default::default()
            },
            "config.permissions.allow[0]",
        ),
        (
            PermissionsConfig {
                deny: vec!["x".into(), "WebFetch(example.com)".into()],
                ..Default::default()
            },
            "config.permissions.deny[1]",
        ),
        (
            PermissionsConfig {
                ask: vec!["Task(anything)".into()],
                ..Default::default()
            },
            "config.permissions.ask[0]",
        ),
        (
            PermissionsConfig {
                allow: vec!["".into()],
                ..Default::default()
            },
            "config.permissions.allow[0]",
        ),
    ];
    for (config, prefix) in cases {
        let error = Permissions::compile(&config).unwrap_err().to_string();
        assert!(error.starts_with(prefix), "{error}");
    }
}

#[test]
fn cc_names_translate_strictly_and_leniently() {
    let known = |name: &str| ["read", "read_image", "bash", "my_tool"].contains(&name);
    let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let mut diagnostics = Vec::new();
    let strict = translate_tool_names(
        &names(&["Read", "Bash(git status)", "Nope", "mcp__s__t", "Read"]),
        TranslationPolicy::Strict,
        &known,
        &mut |d| diagnostics.push(d),
    );
    assert_eq!(
        strict,
        Some(names(&["read", "read_image", "bash", "Nope", "mcp__s__t"]))
    );
    assert!(diagnostics.is_empty());
    let lenient = translate_tool_names(
        &names(&["Bash(npm:*)", "Nope", "my_tool"]),
        TranslationPolicy::Lenient,
        &known,
        &mut |d| diagnostics.push(d),
    );
    assert_eq!(lenient, Some(names(&["bash", "my_tool"])));
    assert_eq!(
        diagnostics,
        vec!["dropped unknown tool name \"Nope\"".to_string()]
    );
    let nothing = translate_tool_names(
        &names(&["Nope"]),
        TranslationPolicy::Lenient,
        &known,
        &mut |_| {},
    );
    assert_eq!(nothing, None);
    assert_eq!(bare_name(" Bash(git status) "), "Bash");
    assert_eq!(cc_tool_aliases("read"), vec!["read", "Read"]);
    assert_eq!(cc_tool_aliases("edit"), vec!["edit", "Edit", "MultiEdit"]);
    assert_eq!(cc_canonical_tool_name("bash"), "Bash");
    assert_eq!(cc_canonical_tool_name("my_tool"), "my_tool");
    // The session tools carry Claude Code's names for background shells.
    assert_eq!(harness_names("BashOutput"), Some(&["bash_output"][..]));
    assert_eq!(harness_names("KillShell"), Some(&["bash_kill"][..]));
    assert_eq!(cc_canonical_tool_name("bash_output"), "BashOutput");
}

#[test]
fn a_command_with_no_parts_is_judged_as_the_empty_command() {
    let deny_all = rules(&[], &[], &["Bash"], None);
    let listed = rules(&["Bash(ls)"], &[], &[], Some(PermissionDefault::Deny));
    let cases = [
        (&deny_all, "", (Verdict::Deny, Some("Bash"))),
        (&deny_all, " ; && ", (Verdict::Deny, Some("Bash"))),
        (&listed, "", (Verdict::Deny, None)),
        // `;` alone is a syntax error: the parser cannot read it, so it is asked.
        (&listed, ";", (Verdict::Ask, None)),
        (&listed, "ls", (Verdict::Allow, Some("Bash(ls)"))),
        (&listed, "ls; ls", (Verdict::Allow, Some("Bash(ls)"))),
    ];
    for (permissions, command, (expected, rule)) in cases {
        assert_eq!(
            verdict(permissions, "bash", json!({ "command": command })),
            (expected, rule.map(str::to_string)),
            "{command:?}"
        );
    }
}

#[test]
fn a_thousand_rules_are_indexed_without_changing_what_matches() {
    let globs: Vec<String> = (0..1000).map(|i| format!("Read(dir{i}/**)")).collect();
    let prefixes: Vec<String> = (0..1000).map(|i| format!("Bash(tool{i} run:*)")).collect();
    let servers: Vec<String> = (0..1000).map(|i| format!("mcp__server{i}")).collect();
    let all: Vec<String> = [globs, prefixes, servers].concat();
    let by_fives = |keep: usize| -> Vec<&str> {
        let fifth = all.iter().enumerate().filter(move |(i, _)| i % 5 == keep);
        fifth.map(|(_, r)| r.as_str()).collect()
    };
    let p = rules(
        &by_fives(0),
        &by_fives(1),
        &by_fives(4),
        Some(PermissionDefault::Ask),
    );
    let cases: Vec<(&str, Value, Verdict, Option<&str>)> = vec![
        (
            "read",
            json!({ "file_path": "dir500/a.rs" }),
            Verdict::Allow,
            Some("Read(dir500/**)"),
        ),
        (
            "read",
            json!({ "file_path": "./dir504/a.rs" }),
            Verdict::Deny,
            Some("Read(dir504/**)"),
        ),
        (
            "read",
            json!({ "file_path": "dir502/a.rs" }),
            Verdict::Ask,
            None,
        ),
        (
            "read_image",
            json!({ "path": "dir501/a.png" }),
            Verdict::Ask,
            Some("Read(dir501/**)"),
        ),
        (
            "bash",
            json!({ "command": "tool500 run --fast" }),
            Verdict::Allow,
            Some("Bash(tool500 run:*)"),
        ),
        (
            "bash",
            json!({ "command": "tool500 running" }),
            Verdict::Ask,
            None,
        ),
        (
            "bash",
            json!({ "command": "tool500 run && tool504 run x" }),
            Verdict::Deny,
            Some("Bash(tool504 run:*)"),
        ),
        (
            "mcp__server500__search",
            json!({}),
            Verdict::Allow,
            Some("mcp__server500"),
        ),
        (
            "mcp__server504__drop",
            json!({}),
            Verdict::Deny,
            Some("mcp__server504"),
        ),
        ("mcp__server5000__x", json!({}), Verdict::Ask, None),
    ];
    for (name, arguments, expected, rule) in cases {
        assert_eq!(
            verdict(&p, name, arguments.clone()),
            (expected, rule.map(str::to_string)),
            "{name} {arguments}"
        );
    }
}

#[test]
fn server_wide_rules_match_every_prefix_ending_in_a_double_underscore() {
    let p = rules(
        &["mcp__a___*"],
        &[],
        &["mcp__a__*"],
        Some(PermissionDefault::Ask),
    );
    let cases = [
        ("mcp__a___tool", (Verdict::Deny, Some("mcp__a__*"))),
        ("mcp__a__tool", (Verdict::Deny, Some("mcp__a__*"))),
        ("mcp__ab__tool", (Verdict::Ask, None)),
    ];
    for (name, (expected, rule)) in cases {
        assert_eq!(
            verdict(&p, name, json!({})),
            (expected, rule.map(str::to_string)),
            "{name}"
        );
    }
    let p = rules(&["mcp__a___*"], &[], &[], Some(PermissionDefault::Deny));
    assert_eq!(
        verdict(&p, "mcp__a___tool", json!({})),
        (Verdict::Allow, Some("mcp__a___*".to_string()))
    );
}

#[test]
fn among_equally_strong_rules_the_later_one_is_reported() {
    let p = rules(
        &["Bash", "Bash(ls)"],
        &[],
        &["Bash(rm:*)", "Bash(rm -rf:*)"],
        None,
    );
    let cases = [
        ("ls", (Verdict::Allow, Some("Bash(ls)"))),
        ("rm -rf /", (Verdict::Deny, Some("Bash(rm -rf:*)"))),
        ("rm x", (Verdict::Deny, Some("Bash(rm:*)"))),
    ];
    for (command, (expected, rule)) in cases {
        assert_eq!(
            verdict(&p, "bash", json!({ "command": command })),
            (expected, rule.map(str::to_string)),
            "{command}"
        );
    }
}
