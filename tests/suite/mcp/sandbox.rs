//! An MCP server in the OS sandbox, through the real binary: the filesystem server, allowed
//! by its own arguments into a directory outside its workspace (its `cwd`), cannot write
//! there once `mcpServers.<name>.sandbox` is set; without one it runs unsandboxed, as before.

use crate::support::mcp::filesystem;
use crate::support::sandbox::Sandboxed;
use serde_json::{Value, json};

/// A host whose server `fs` serves the outside dir from the workspace, with `sandbox` if
/// given; returns once its tools are registered.
fn serving(sandbox: Option<Value>) -> Sandboxed {
    let mut sandboxed = Sandboxed::start_in(
        |root, outside| {
            let mut server = filesystem(&outside.display().to_string());
            server["cwd"] = json!(root.display().to_string());
            if let Some(sandbox) = sandbox {
                server["sandbox"] = sandbox;
            }
            json!({ "mcpServers": { "fs": server } })
        },
        &[],
        false,
    );
    // Servers start in the background: poll until this one's tools are registered.
    // (Waiting for `tools/listChanged`, or for the state, races: the tools are announced
    // while `mcp/status` still says "starting" for a moment.)
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let status = sandboxed.host.request("mcp/status", json!({}));
        let state = status["result"][0]["state"].clone();
        assert!(state == "starting" || state == "running", "{status}");
        let schemas = sandboxed.host.request("tools/schemas", json!({}));
        if schemas["result"]
            .to_string()
            .contains("mcp__fs__write_file")
        {
            return sandboxed;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still starting: {status}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn write(sandboxed: &mut Sandboxed, name: &str) -> Value {
    let path = sandboxed.outside(name);
    sandboxed.call(
        "mcp__fs__write_file",
        json!({ "path": path.display().to_string(), "content": "x" }),
    )
}

#[test]
fn a_sandboxed_server_cannot_write_outside_its_workspace_and_an_unsandboxed_one_can() {
    let mut sandboxed = serving(Some(json!({})));
    let report = &sandboxed.report()["mcpServers"]["fs"];
    assert_eq!(report["mode"], "workspace-write");
    assert_eq!(
        report["writableRoots"],
        json!([sandboxed.root.display().to_string()])
    );
    let refused = write(&mut sandboxed, "sandboxed.txt");
    assert_eq!(refused["isError"], true, "{refused}");
    // The private view's read-only mount refuses it before Landlock does.
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("EROFS"),
        "{refused}"
    );
    assert!(!sandboxed.outside("sandboxed.txt").exists());

    let mut unsandboxed = serving(None);
    assert_eq!(unsandboxed.report()["mcpServers"]["fs"]["mode"], "off");
    let written = write(&mut unsandboxed, "free.txt");
    assert_eq!(written["isError"], false, "{written}");
    assert_eq!(
        std::fs::read_to_string(unsandboxed.outside("free.txt")).unwrap(),
        "x"
    );
}
