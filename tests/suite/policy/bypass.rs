//! The bypasses through the real binary and the real `bash` built-in: under
//! allow `Bash(echo:*)`, `Bash(git status:*)` (and `find`, `xargs`, so their inner command
//! is what is refused), default deny, each attempt is refused, the refusal names the part
//! no rule allows, and no file `pwned` exists afterwards. An allowed compound still runs,
//! and an allowed write does write (the check for `pwned` can see files).

#![allow(clippy::unwrap_used)]

use crate::support::sandbox::Sandboxed;
use serde_json::json;

#[test]
fn every_bypass_is_refused_and_writes_nothing() {
    let permissions = json!({
        "allow": ["Bash(echo:*)", "Bash(git status:*)", "Bash(trap:*)", "Bash(printf:*)", "Bash(find:*)", "Bash(xargs:*)",
                  "Write(written)"],
        "default": "deny"
    });
    let mut host = Sandboxed::start(json!({ "permissions": permissions }), &[], false);
    std::fs::write(host.inside("list"), "pwned\n").unwrap();
    let pwned = host.inside("pwned");
    // (command, what the refusal must name)
    let attempts = [
        ("echo $(touch pwned)", "`touch pwned` (inside $(...))"),
        ("echo `touch pwned`", "`touch pwned` (inside `...`)"),
        ("echo hi > pwned", "writing `pwned`"),
        ("echo hi >> pwned", "writing `pwned`"),
        ("echo hi | tee pwned", "`tee pwned`"),
        ("echo <(touch pwned)", "`touch pwned` (inside <(...))"),
        ("bash -c \"touch pwned\"", "`touch pwned` (inside bash -c)"),
        (
            "sh -c 'echo ok; touch pwned'",
            "`touch pwned` (inside sh -c)",
        ),
        (
            "find . -exec touch pwned \\;",
            "`touch pwned` (inside find -exec)",
        ),
        ("xargs touch < list", "`touch` (inside xargs)"),
        (
            "FOO=$(touch pwned) git status",
            "`touch pwned` (inside $(...))",
        ),
        ("git status; touch pwned", "`touch pwned`"),
        ("git status && touch pwned", "`touch pwned`"),
        ("git status\ntouch pwned", "`touch pwned`"),
        (
            "f() { touch pwned; }; f",
            "`touch pwned` (inside function f)",
        ),
        (
            "cat <<EOF\n$(touch pwned)\nEOF",
            "`touch pwned` (inside $(...))",
        ),
        (
            "echo <<EOF\n$(touch pwned)\nEOF",
            "`touch pwned` (inside $(...))",
        ),
        ("echo ${x:-$(touch pwned)}", "`touch pwned` (inside $(...))"),
        ("timeout 5 touch pwned", "`touch pwned`"),
        ("env touch pwned", "`touch pwned`"),
        ("trap 'touch pwned' EXIT", "`touch pwned` (inside trap)"),
        (
            "git -c core.pager='touch pwned' status",
            "`git -c core.pager=touch pwned status`",
        ),
        ("/usr/bin/touch pwned", "`/usr/bin/touch pwned`"),
        ("echo a | sh", "`sh`"),
    ];
    for (command, names) in attempts {
        let result = host.bash(command);
        let message = result["error"]["message"].as_str().unwrap_or_default();
        assert_eq!(result["isError"], true, "{command:?} ran: {result}");
        assert!(
            message.contains("is denied by the default permission: no rule allows")
                && message.contains(names),
            "{command:?}: {message}"
        );
        assert!(!pwned.exists(), "{command:?} wrote pwned");
    }
    // Constructs that cannot be read are asked; with no approver connected, refused.
    let asked = [
        "eval 'touch pwned'",
        "$(echo touch) pwned",
        "PATH=/tmp git status; touch pwned",
        "x='a[$(touch pwned)]'; echo $((x))",
        "echo > $(echo pwned)",
        "x='$(touch pwned)'; echo ${x@P}",
        "x='a[$(touch pwned)]'; echo ${!x}",
        "printf -v PATH /tmp; touch pwned",
    ];
    for command in asked {
        let result = host.bash(command);
        assert_eq!(result["isError"], true, "{command:?} ran: {result}");
        assert!(!pwned.exists(), "{command:?} wrote pwned");
    }
    let result = host.bash("eval 'touch pwned'");
    let message = result["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("eval runs a string as a command"),
        "{message}"
    );

    let result = host.bash("echo a && git status | echo b");
    assert_eq!(result["isError"], false, "{result}");
    assert!(
        result["value"]["stdout"].as_str().unwrap().contains("a\nb"),
        "{result}"
    );
    let result = host.bash("echo hi > written");
    assert_eq!(result["isError"], false, "{result}");
    assert!(host.inside("written").exists());
}
