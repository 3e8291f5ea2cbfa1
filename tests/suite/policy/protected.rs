//! The permission rules' own file cannot be changed by what the model runs: a sandboxed
//! command meets it read-only (and cannot move it, or a directory above it, out of the way
//! to put another in its place), and the `write`/`edit` tools refuse it; other files beside
//! it stay writable. Through the real binary, namespace mode.

#![allow(clippy::unwrap_used)]

use crate::support::policy::{Framing, Host, Reply};
use crate::support::wire;
use serde_json::{Value, json};

fn call(host: &mut Host, name: &str, arguments: Value) -> Value {
    let params = json!({ "callId": "c", "name": name, "arguments": arguments });
    host.execute(params, |_| Reply::Silent).0
}

#[test]
fn no_command_or_tool_can_rewrite_the_rules_file_inside_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().canonicalize().unwrap();
    let settings = workspace.join(".dsh/settings.json");
    let root = workspace.display().to_string();
    let mut host = Host::spawn(Framing::Ndjson);
    let config = json!({
        "builtins": { "bash": { "cwd": root }, "fs": { "root": root } },
        "permissions": { "persistTo": settings },
    });
    let initialized = host.initialize(json!({}), config);
    assert!(initialized.get("error").is_none(), "{initialized}");
    let original = std::fs::read_to_string(&settings).expect("persistTo is made at start");

    let attacks = [
        "echo '{\"permissions\":{\"allow\":[\"Bash\"]}}' > .dsh/settings.json",
        "echo x >> .dsh/settings.json",
        "rm -f .dsh/settings.json",
        "mv .dsh/settings.json .dsh/old.json",
        "mv .dsh .dsh-moved && mkdir .dsh && echo '{}' > .dsh/settings.json",
        "sed -i s/allow/deny/ .dsh/settings.json",
        "ln -sf /tmp/elsewhere .dsh/settings.json",
        "chmod 666 .dsh/settings.json",
        "truncate -s 0 .dsh/settings.json",
        "python3 -c \"open('.dsh/settings.json','w').write('{}')\"",
    ];
    for attack in attacks {
        let result = call(&mut host, "bash", json!({ "command": attack }));
        let exit = &result["value"]["exitCode"];
        assert_ne!(exit, 0, "{attack} succeeded: {result}");
        assert_eq!(
            std::fs::read_to_string(&settings).unwrap(),
            original,
            "{attack} changed the rules file"
        );
        assert!(
            !workspace.join(".dsh-moved").exists(),
            "{attack} moved the directory"
        );
    }
    // Beside it, the workspace is as writable as ever.
    let beside = call(
        &mut host,
        "bash",
        json!({ "command": "echo ok > .dsh/notes.txt && echo ok > top.txt" }),
    );
    assert_eq!(beside["value"]["exitCode"], 0, "{beside}");
    assert_eq!(
        std::fs::read_to_string(workspace.join(".dsh/notes.txt")).unwrap(),
        "ok\n"
    );

    for (tool, arguments) in [
        (
            "write",
            json!({ "file_path": ".dsh/settings.json", "content": "{}" }),
        ),
        (
            "edit",
            json!({ "file_path": ".dsh/settings.json", "old_string": "allow", "new_string": "deny" }),
        ),
    ] {
        let result = call(&mut host, tool, arguments);
        assert_eq!(result["isError"], true, "{tool}: {result}");
        let message = result["error"]["message"].as_str().unwrap();
        assert!(message.contains("holds the permission rules"), "{message}");
    }
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), original);
}

#[test]
fn without_user_namespaces_a_rules_file_in_the_workspace_refuses_the_family() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().display().to_string();
    let settings = dir.path().join("settings.json");
    let mut host = wire::Host::spawn_with_env(
        &["serve", "--framing", "ndjson"],
        Framing::Ndjson,
        &[("DSH_TOOLS_SANDBOX_SIMULATE", "no-userns")],
    );
    let config = json!({
        "builtins": { "bash": { "cwd": root } },
        "permissions": { "persistTo": settings },
    });
    host.initialize(json!({}), config);
    let params = json!({ "callId": "c", "name": "bash", "arguments": { "command": "true" } });
    let result = host.request("tools/execute", params)["result"].clone();
    assert_eq!(result["isError"], true, "{result}");
    let message = result["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("lies inside a writable root") && message.contains("persistTo"),
        "{message}"
    );
}
