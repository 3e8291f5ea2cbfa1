//! Decisions part by part: what each part of a `bash` command got and from which rule of
//! which source, the messages built from them, the rule proposed for "don't ask again",
//! and session grants that turn only an `ask` into allow.

#![allow(clippy::unwrap_used)]

use dsh_tools::policy::{PartKind, Permissions, RuleSource, Verdict};
use dsh_tools_protocol::{PermissionDefault, PermissionsConfig};
use serde_json::{Value, json};

fn config(
    allow: &[&str],
    ask: &[&str],
    deny: &[&str],
    default: Option<PermissionDefault>,
) -> PermissionsConfig {
    let list = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
    PermissionsConfig {
        allow: list(allow),
        ask: list(ask),
        deny: list(deny),
        default,
        ..PermissionsConfig::default()
    }
}

/// A part as (kind, text, verdict, (list, index, origin) of its rule, inside).
type Shape<'a> = (
    PartKind,
    &'a str,
    Verdict,
    Option<(&'a str, usize, &'a str)>,
    Option<&'a str>,
);

fn bash(command: &str) -> Value {
    json!({ "command": command })
}

#[test]
fn each_part_names_its_rule_and_the_source_it_came_from() {
    let user = config(
        &["Bash(echo:*)"],
        &["Bash(git push:*)"],
        &[],
        Some(PermissionDefault::Ask),
    );
    let project = config(
        &["Bash(git status:*)"],
        &[],
        &["Bash(rm:*)"],
        Some(PermissionDefault::Deny),
    );
    let permissions = Permissions::compile_from(&[
        RuleSource {
            origin: "~/.claude/settings.json",
            config: &user,
        },
        RuleSource {
            origin: ".dsh/settings.json",
            config: &project,
        },
    ])
    .unwrap();
    let decision = permissions.decide("bash", &bash("echo $(rm -rf x) && git status; touch y"));
    assert_eq!(decision.decision, Verdict::Deny);
    let shape: Vec<Shape<'_>> = decision
        .parts
        .iter()
        .map(|p| {
            let rule = p
                .rule
                .as_ref()
                .map(|r| (r.list, r.index, r.origin.as_str()));
            (
                p.kind,
                p.text.as_str(),
                p.decision,
                rule,
                p.inside.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        shape,
        [
            (
                PartKind::Command,
                "rm -rf x",
                Verdict::Deny,
                Some(("deny", 0, ".dsh/settings.json")),
                Some("$(...)")
            ),
            (
                PartKind::Command,
                "echo $(rm -rf x)",
                Verdict::Allow,
                Some(("allow", 0, "~/.claude/settings.json")),
                None
            ),
            (
                PartKind::Command,
                "git status",
                Verdict::Allow,
                Some(("allow", 0, ".dsh/settings.json")),
                None
            ),
            // The last source's default (deny) wins.
            (PartKind::Command, "touch y", Verdict::Deny, None, None),
        ]
    );
    assert_eq!(
        decision.denial("bash").unwrap(),
        "tool \"bash\" is denied by permission rule Bash(rm:*) (deny[0] in .dsh/settings.json): \
         `rm -rf x` (inside $(...))"
    );
    let json = serde_json::to_value(&decision).unwrap();
    assert_eq!(json["decision"], "deny");
    assert_eq!(json["parts"][0]["rule"]["origin"], ".dsh/settings.json");
    assert_eq!(
        json["parts"][3]["reason"],
        "no rule matches: the default is deny"
    );
    assert!(json["parts"][1].get("inside").is_none());

    let error = Permissions::compile_from(&[RuleSource {
        origin: "a.json",
        config: &config(&["Bash(x"], &[], &[], None),
    }])
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "a.json: permissions.allow[0]: rule \"Bash(x\" lacks a closing parenthesis"
    );
}

#[test]
fn messages_name_the_part() {
    let permissions = Permissions::compile(&config(
        &["Bash(echo:*)"],
        &["Bash(git push:*)"],
        &["Read(secrets/**)"],
        Some(PermissionDefault::Deny),
    ))
    .unwrap();
    let denial = |command: &str| {
        permissions
            .decide("bash", &bash(command))
            .denial("bash")
            .unwrap()
    };
    assert_eq!(
        denial("echo $(touch pwned)"),
        "tool \"bash\" is denied by the default permission: no rule allows `touch pwned` (inside $(...))"
    );
    assert_eq!(
        denial("echo hi > pwned"),
        "tool \"bash\" is denied by the default permission: no rule allows writing `pwned`"
    );
    let read = permissions.decide("read", &json!({ "file_path": "secrets/a" }));
    assert_eq!(
        read.denial("read").unwrap(),
        "tool \"read\" is denied by permission rule Read(secrets/**)"
    );
    let other = permissions.decide("other", &json!({}));
    assert_eq!(
        other.denial("other").unwrap(),
        "tool \"other\" is denied by the default permission"
    );
    let ask = permissions.decide("bash", &bash("git push origin"));
    assert_eq!(ask.decision, Verdict::Ask);
    assert_eq!(
        ask.ask_reason("bash").unwrap(),
        "permission rule Bash(git push:*) requires approval for tool \"bash\""
    );
    let unreadable = permissions.decide("bash", &bash("eval echo hi"));
    assert_eq!(unreadable.decision, Verdict::Ask);
    assert_eq!(
        unreadable.ask_reason("bash").unwrap(),
        "tool \"bash\" needs approval: eval runs a string as a command: `eval echo hi`"
    );
    assert!(
        permissions
            .decide("bash", &bash("echo hi"))
            .denial("bash")
            .is_none()
    );
    // A deny rule on the whole call wins over an unreadable part's ask.
    let strict = Permissions::compile(&config(&[], &[], &["Bash(eval:*)"], None)).unwrap();
    assert_eq!(
        strict.decide("bash", &bash("eval x")).decision,
        Verdict::Deny
    );
}

#[test]
fn the_suggested_rule_is_the_shortest_safe_one() {
    let permissions = Permissions::compile(&config(
        &["Bash(git status:*)"],
        &[],
        &[],
        Some(PermissionDefault::Ask),
    ))
    .unwrap();
    let suggest = |name: &str, arguments: Value| {
        permissions
            .decide(name, &arguments)
            .suggested_rule(name, &arguments)
    };
    assert_eq!(
        suggest("bash", bash("npm run test:unit -- -x")).as_deref(),
        Some("Bash(npm run test:unit:*)")
    );
    assert_eq!(
        suggest("bash", bash("git status && npm test")).as_deref(),
        Some("Bash(npm test:*)")
    );
    assert_eq!(
        suggest("bash", bash("git log --oneline")).as_deref(),
        Some("Bash(git log:*)")
    );
    assert_eq!(
        suggest("bash", bash("./build.sh release")).as_deref(),
        Some("Bash(./build.sh:*)")
    );
    assert_eq!(suggest("bash", bash("npm test; npm run lint")), None);
    // A quoted argument with spaces is one word, never a subcommand.
    assert_eq!(
        suggest("bash", bash("git commit 'fix bug'")).as_deref(),
        Some("Bash(git commit:*)")
    );
    assert_eq!(suggest("bash", bash("echo hi > x")), None);
    assert_eq!(suggest("bash", bash("eval x")), None);
    assert_eq!(suggest("bash", bash("git status")), None);
    let denying = Permissions::compile(&config(&[], &[], &["Bash(rm:*)"], None)).unwrap();
    let arguments = bash("rm x");
    assert_eq!(
        denying
            .decide("bash", &arguments)
            .suggested_rule("bash", &arguments),
        None
    );
    assert_eq!(
        suggest("read", json!({ "file_path": "src/a/b.rs" })).as_deref(),
        Some("Read(src/a/**)")
    );
    assert_eq!(
        suggest("write", json!({ "file_path": "a.txt" })).as_deref(),
        Some("Write(./**)")
    );
    assert_eq!(
        suggest("web_fetch", json!({ "url": "https://Docs.Example.com/x" })).as_deref(),
        Some("WebFetch(domain:docs.example.com)")
    );
    assert_eq!(
        suggest("mcp__s__t", json!({})).as_deref(),
        Some("mcp__s__t")
    );
}

#[test]
fn grants_turn_only_an_ask_into_allow() {
    let permissions = Permissions::compile(&config(
        &["Bash(git status:*)"],
        &["Bash(npm:*)"],
        &["Bash(rm:*)"],
        Some(PermissionDefault::Ask),
    ))
    .unwrap();
    let grants = Permissions::compile_from(&[RuleSource {
        origin: "session",
        config: &config(
            &["Bash(npm test:*)", "Bash(rm:*)", "Write(out/**)"],
            &[],
            &[],
            None,
        ),
    }])
    .unwrap();
    let decide = |command: &str| permissions.decide_with("bash", &bash(command), Some(&grants));
    let granted = decide("git status && npm test -- -w > out/log");
    assert_eq!(granted.decision, Verdict::Allow, "{granted:?}");
    let npm = granted
        .parts
        .iter()
        .find(|p| p.text == "npm test -- -w")
        .unwrap();
    assert_eq!(npm.rule.as_ref().unwrap().origin, "session");
    assert_eq!(decide("npm install").decision, Verdict::Ask);
    assert_eq!(decide("rm x").decision, Verdict::Deny);
    assert_eq!(
        permissions.decide("bash", &bash("npm test")).decision,
        Verdict::Ask
    );
}

#[test]
fn writes_follow_write_and_edit_rules_on_the_normalized_path() {
    let permissions = Permissions::compile(&config(
        &["Bash(echo:*)", "Write(out/**)"],
        &[],
        &["Edit(out/secret)"],
        Some(PermissionDefault::Deny),
    ))
    .unwrap();
    let decide = |command: &str| permissions.decide("bash", &bash(command)).decision;
    assert_eq!(decide("echo > out/a"), Verdict::Allow);
    assert_eq!(decide("echo > ./out/b/c"), Verdict::Allow);
    assert_eq!(decide("echo > out/../a"), Verdict::Deny);
    assert_eq!(decide("echo > out/secret"), Verdict::Deny);
    assert_eq!(decide("echo > /dev/null"), Verdict::Allow);
}
