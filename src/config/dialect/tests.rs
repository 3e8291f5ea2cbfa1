//! Recognition by name and shape, and the translation of each foreign file.

use super::*;
use serde_json::json;

#[test]
fn files_are_recognized_by_name_then_shape() {
    let empty = json!({});
    let cases = [
        ("/p/.claude/settings.json", &empty, Dialect::ClaudeSettings),
        (
            "/p/.claude/settings.local.json",
            &empty,
            Dialect::ClaudeSettings,
        ),
        ("/p/.codex/config.toml", &empty, Dialect::Codex),
        ("/p/.mcp.json", &empty, Dialect::Host),
        ("/p/host.toml", &empty, Dialect::Host),
    ];
    for (path, value, dialect) in cases {
        assert_eq!(recognize(Path::new(path), value), dialect, "{path}");
    }
    let shaped = [
        (
            json!({ "$schema": "https://json.schemastore.org/claude-code-settings.json" }),
            Dialect::ClaudeSettings,
        ),
        (
            json!({ "permissions": { "defaultMode": "plan" } }),
            Dialect::ClaudeSettings,
        ),
        (json!({ "mcp_servers": {} }), Dialect::Codex),
        (
            json!({ "permissions": { "allow": ["Read"] }, "mcpServers": {} }),
            Dialect::Host,
        ),
    ];
    for (value, dialect) in shaped {
        assert_eq!(
            recognize(Path::new("/p/any.json"), &value),
            dialect,
            "{value}"
        );
    }
}

#[test]
fn claude_settings_give_rules_a_default_and_writable_roots_and_ignore_the_rest() {
    let settings = json!({
        "$schema": "https://json.schemastore.org/claude-code-settings.json",
        "model": "claude-sonnet-4-5",
        "env": { "FOO": "1" },
        "permissions": {
            "allow": ["Bash(npm run test:*)"],
            "deny": ["Read(./.env)"],
            "ask": ["Bash(git push:*)"],
            "defaultMode": "acceptEdits",
            "additionalDirectories": ["../docs/", "/abs"],
            "disableBypassPermissionsMode": "disable"
        }
    });
    let translated = translate(Dialect::ClaudeSettings, settings, "s.json").unwrap();
    assert_eq!(
        translated,
        json!({
            "permissions": {
                "allow": ["Bash(npm run test:*)", "Edit", "Write"],
                "deny": ["Read(./.env)"],
                "ask": ["Bash(git push:*)"],
                "default": "ask"
            },
            "sandbox": { "writableRoots": ["../docs/", "/abs"] }
        })
    );
    crate::config::parse(translated).unwrap();
    for (mode, default) in [
        ("default", "ask"),
        ("plan", "ask"),
        ("dontAsk", "deny"),
        ("bypassPermissions", "allow"),
    ] {
        let settings = json!({ "permissions": { "defaultMode": mode } });
        let translated = translate(Dialect::ClaudeSettings, settings, "s.json").unwrap();
        assert_eq!(
            translated,
            json!({ "permissions": { "default": default } }),
            "{mode}"
        );
    }
    let wrong = json!({ "permissions": { "defaultMode": "yolo" } });
    assert_eq!(
        translate(Dialect::ClaudeSettings, wrong, "s.json")
            .err()
            .unwrap()
            .0,
        "s.json: permissions.defaultMode: expected default, acceptEdits, plan, dontAsk or bypassPermissions"
    );
    let wrong = json!({ "permissions": { "allow": "Read" } });
    assert_eq!(
        translate(Dialect::ClaudeSettings, wrong, "s.json")
            .err()
            .unwrap()
            .0,
        "s.json: permissions.allow: expected an array of strings"
    );
}

#[test]
fn codex_servers_become_mcp_servers_with_their_filters_and_deadlines() {
    let file = json!({
        "model": "gpt-5-codex",
        "approval_policy": "on-request",
        "mcp_servers": {
            "docs": {
                "command": "npx",
                "args": ["-y", "docs-mcp"],
                "env": { "API_KEY": "k" },
                "cwd": "/srv",
                "startup_timeout_sec": 20,
                "tool_timeout_sec": 2.5,
                "enabled_tools": ["search"],
                "disabled_tools": ["delete"]
            },
            "remote": {
                "url": "https://mcp.example.com/mcp",
                "bearer_token_env_var": "REMOTE_TOKEN",
                "http_headers": { "X-Team": "core" },
                "env_http_headers": { "X-Key": "REMOTE_KEY" },
                "enabled": false,
                "oauth_resource": "ignored"
            }
        }
    });
    let translated = translate(Dialect::Codex, file, "config.toml").unwrap();
    assert_eq!(
        translated,
        json!({ "mcpServers": {
            "docs": {
                "command": "npx",
                "args": ["-y", "docs-mcp"],
                "env": { "API_KEY": "k" },
                "cwd": "/srv",
                "startupTimeoutMs": 20000,
                "timeoutMs": 2500,
                "tools": { "allow": ["search"], "deny": ["delete"] }
            },
            "remote": {
                "url": "https://mcp.example.com/mcp",
                "bearerTokenEnv": "REMOTE_TOKEN",
                "enabled": false,
                "headers": { "X-Team": "core", "X-Key": "${REMOTE_KEY}" }
            }
        } })
    );
    crate::config::parse(translated).unwrap();
    let wrong = json!({ "mcp_servers": { "s": { "command": "x", "tool_timeout_sec": -1 } } });
    assert_eq!(
        translate(Dialect::Codex, wrong, "config.toml")
            .err()
            .unwrap()
            .0,
        "config.toml: mcp_servers.s.tool_timeout_sec: expected a positive number of seconds"
    );
}
