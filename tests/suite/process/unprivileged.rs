//! The sandbox of a host that is not root, through the real binary: run as `nobody` when
//! the tests run as root (as CI does), as the current user otherwise. Namespace mode must
//! work there too — the scope's loopback, the PID namespace, the egress proxy — and every
//! confinement still hold: a write outside the workspace, a connect to the host's
//! loopback, a name not allowed.

#![allow(clippy::unwrap_used)]

use crate::support::http::serve_page as serve;
use crate::support::mcp::Binary;
use serde_json::{Value, json};
use std::os::unix::fs::{PermissionsExt, chown};
use std::os::unix::process::CommandExt;
use std::path::Path;

/// The unprivileged user the host runs as when the tests run as root.
const NOBODY: u32 = 65534;

/// A directory the host's user owns (and may write), with the binary copied into it when
/// the tests run as root (a clone under `/root` is not executable by `nobody`).
struct Unprivileged {
    dir: tempfile::TempDir,
    as_root: bool,
}

impl Unprivileged {
    fn new() -> Unprivileged {
        let dir = tempfile::tempdir().unwrap();
        let as_root = nix::unistd::geteuid().is_root();
        if as_root {
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
            std::fs::copy(
                env!("CARGO_BIN_EXE_dsh-tools"),
                dir.path().join("dsh-tools"),
            )
            .unwrap();
            for owned in ["home", "workspace"] {
                std::fs::create_dir(dir.path().join(owned)).unwrap();
                chown(dir.path().join(owned), Some(NOBODY), Some(NOBODY)).unwrap();
            }
        } else {
            std::fs::create_dir(dir.path().join("home")).unwrap();
            std::fs::create_dir(dir.path().join("workspace")).unwrap();
        }
        Unprivileged { dir, as_root }
    }

    fn workspace(&self) -> String {
        self.dir.path().join("workspace").display().to_string()
    }

    /// `dsh-tools serve`, initialized with `config`; returns the host and `initialize`'s answer.
    fn serve(&self, config: Value, env: &[(&str, &str)]) -> (Binary, Value) {
        let command = if self.as_root {
            let mut command = std::process::Command::new(self.dir.path().join("dsh-tools"));
            command.uid(NOBODY).gid(NOBODY);
            command
        } else {
            std::process::Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
        };
        let mut command = command;
        command
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", self.dir.path().join("home"));
        let mut host = Binary::spawn_command(command, &["serve", "--framing", "ndjson"], env);
        let answer = host.request(
            "initialize",
            json!({ "protocolVersion": "1", "config": config }),
        );
        assert_eq!(answer["result"]["protocolVersion"], "1", "{answer}");
        (host, answer)
    }
}

fn bash(host: &mut Binary, command: &str) -> Value {
    let answer = host.request(
        "tools/execute",
        json!({ "callId": "c", "name": "bash", "arguments": { "command": command } }),
    );
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    answer["result"]["value"].clone()
}

#[test]
fn an_unprivileged_host_confines_commands_in_namespaces_with_a_scope_loopback() {
    let user = Unprivileged::new();
    let workspace = user.workspace();
    let (mut host, answer) =
        user.serve(json!({ "builtins": { "bash": { "cwd": workspace } } }), &[]);
    let kernel = &answer["result"]["capabilities"]["sandbox"]["kernel"];
    assert_eq!(kernel["userNamespaces"], true, "{answer}");
    assert_eq!(kernel["pidNamespaces"], true, "{answer}");
    assert_eq!(
        answer["result"]["capabilities"]["sandbox"]["bash"]["networkIsolation"], "namespace",
        "{answer}"
    );

    let who = bash(
        &mut host,
        "id -u; echo inside > kept.txt; cat kept.txt; echo $$",
    );
    let expected_uid = if user.as_root {
        NOBODY
    } else {
        nix::unistd::getuid().as_raw()
    };
    let lines: Vec<&str> = who["stdout"].as_str().unwrap().lines().collect();
    assert_eq!(
        lines[..2],
        [expected_uid.to_string().as_str(), "inside"],
        "{who}"
    );
    // A PID namespace of its own: the command's shell is a low pid there.
    assert!(lines[2].parse::<u32>().unwrap() < 10, "{who}");

    let outside = user.dir.path().join("outside.txt");
    let escape = bash(&mut host, &format!("echo out > {}", outside.display()));
    assert_ne!(escape["exitCode"], 0, "{escape}");
    assert!(!outside.exists(), "a write outside the workspace landed");

    // The scope's loopback: a server one call starts answers the next call.
    let started = host.request(
        "tools/execute",
        json!({ "callId": "s", "name": "bash", "arguments": {
            "command": "exec python3 -u -m http.server 0 --bind 127.0.0.1", "background": true
        } }),
    );
    let session = started["result"]["value"]["sessionId"].clone();
    let up = host.request(
        "tools/execute",
        json!({ "callId": "o", "name": "bash_output", "arguments": {
            "sessionId": session, "until": "port \\d+", "waitMs": 20000
        } }),
    );
    let output = up["result"]["value"]["output"].as_str().unwrap_or_default();
    let port = output
        .split("port ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next());
    let port = port.unwrap_or_else(|| panic!("{up}"));
    let fetched = bash(
        &mut host,
        &format!("curl -sS -o /dev/null -w '%{{http_code}}' http://127.0.0.1:{port}/"),
    );
    assert_eq!(fetched["stdout"], "200", "{fetched}");
}

#[test]
fn an_unprivileged_hosts_proxy_lets_allowed_names_through_and_nothing_else() {
    let port = serve("through the proxy\n");
    let user = Unprivileged::new();
    let mapping = format!("allowed.test=127.0.0.1:{port}");
    let (mut host, _) = user.serve(
        json!({
            "builtins": { "bash": { "cwd": user.workspace() } },
            "sandbox": { "network": { "allow": ["allowed.test"] } }
        }),
        &[("DSH_TOOLS_PROXY_HOSTS", mapping.as_str())],
    );
    let allowed = bash(&mut host, "curl -sS http://allowed.test/");
    assert_eq!(allowed["stdout"], "through the proxy\n", "{allowed}");
    let unlisted = bash(&mut host, "curl -sS -o /dev/null http://elsewhere.test/");
    assert_eq!(
        unlisted["blockedHosts"],
        json!(["elsewhere.test:80"]),
        "{unlisted}"
    );
    let direct = bash(
        &mut host,
        &format!("curl -sS --noproxy '*' --max-time 10 http://127.0.0.1:{port}/"),
    );
    assert_ne!(
        direct["exitCode"], 0,
        "the host's loopback, directly: {direct}"
    );
    assert!(Path::new(&user.workspace()).exists());
}
