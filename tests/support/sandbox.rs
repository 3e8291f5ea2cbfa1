//! The sandbox suites' helpers: a workspace with a directory outside it, a host over the
//! real binary with `bash` (and Python) configured there, a loopback listener the test
//! owns, and `bash` / `run_code` calls whose results are read back.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use super::wire::{Framing, Host};
use dsh_tools::config::merge;
use serde_json::{Value, json};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tempfile::TempDir;

/// Patience for a single step (Python interpreters boot on a loaded machine).
const PATIENCE: Duration = Duration::from_secs(120);

/// A workspace (`root`, bash's `cwd`, under `$TMPDIR`, which the private view covers: its
/// clone-then-cover order is exercised) and a directory outside it (under the target dir,
/// which the view keeps visible read-only).
pub struct Sandboxed {
    _dir: TempDir,
    _outside_dir: TempDir,
    /// Canonical workspace.
    pub root: PathBuf,
    /// Canonical directory next to it, writable by the host user.
    pub outside: PathBuf,
    /// The host, initialized.
    pub host: Host,
    /// `initialize`'s result.
    pub initialized: Value,
    /// Whether the Python agent (`py`, presented as Python Code Mode) is open.
    python_agent: bool,
}

impl Sandboxed {
    /// A host with `bash` in the workspace and Python loaded, `extra` merged into its
    /// config, and `env` added to its environment; `approval` declares the capability.
    pub fn start(extra: Value, env: &[(&str, &str)], approval: bool) -> Sandboxed {
        Sandboxed::start_in(|_, _| extra, env, approval)
    }

    /// [`Sandboxed::start`] with the extra config made from the workspace and the outside dir.
    pub fn start_in(
        extra: impl FnOnce(&Path, &Path) -> Value,
        env: &[(&str, &str)],
        approval: bool,
    ) -> Sandboxed {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let outside_dir = visible_tempdir();
        let root = base.join("root");
        let outside = outside_dir.path().canonicalize().unwrap().join("outside");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let mut config = json!({
            "builtins": { "bash": { "cwd": root.display().to_string() } },
            "codeRuntime": { "languages": ["python"], "poolSize": 1 }
        });
        merge(&mut config, extra(&root, &outside));
        let mut host =
            Host::spawn_with_env(&["serve", "--framing", "ndjson"], Framing::Ndjson, env)
                .patient(PATIENCE);
        let initialized = host.initialize(json!({ "approval": approval }), config);
        Sandboxed {
            _dir: dir,
            _outside_dir: outside_dir,
            root,
            outside,
            host,
            initialized,
            python_agent: false,
        }
    }

    /// A host from `sandbox` (the top-level section) and nothing else special.
    pub fn with(sandbox: Value) -> Sandboxed {
        Sandboxed::start(json!({ "sandbox": sandbox }), &[], false)
    }

    /// `capabilities.sandbox` of `initialize`.
    pub fn report(&self) -> &Value {
        &self.initialized["capabilities"]["sandbox"]
    }

    /// Runs `command` with `bash`; returns the result (`isError`, `value`, `content`).
    pub fn bash(&mut self, command: &str) -> Value {
        self.call("bash", json!({ "command": command }))
    }

    /// Executes `name` with `arguments`; returns the result.
    pub fn call(&mut self, name: &str, arguments: Value) -> Value {
        let response = self.host.request(
            "tools/execute",
            json!({ "callId": "c", "name": name, "arguments": arguments }),
        );
        response["result"].clone()
    }

    /// Runs a Python program with `run_code`; returns the result.
    pub fn python(&mut self, code: &str) -> Value {
        if !self.python_agent {
            self.host.request("agents/open", json!({ "agent": "py" }));
            self.host.request(
                "tools/presentAs",
                json!({ "agent": "py", "mode": "code", "language": "python" }),
            );
            self.python_agent = true;
        }
        let response = self.host.request(
            "tools/execute",
            json!({ "callId": "p", "name": "run_code", "agent": "py",
                    "arguments": { "code": code, "description": "sandbox probe" } }),
        );
        response["result"].clone()
    }

    /// A path outside the workspace.
    pub fn outside(&self, name: &str) -> PathBuf {
        self.outside.join(name)
    }

    /// A path inside the workspace.
    pub fn inside(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }
}

/// A temporary directory outside `$TMPDIR` (under the target dir), so it stays visible
/// (read-only) in a sandboxed child's private view.
pub fn visible_tempdir() -> TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// The stdout of a successful `bash` result.
pub fn stdout(result: &Value) -> String {
    assert_eq!(result["isError"], false, "{result}");
    result["value"]["stdout"].as_str().unwrap().to_owned()
}

/// A listener on 127.0.0.1 owned by the test (the host side of the network).
pub struct Listener {
    listener: TcpListener,
}

impl Listener {
    pub fn open() -> Listener {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        Listener { listener }
    }

    pub fn port(&self) -> u16 {
        self.listener.local_addr().unwrap().port()
    }

    /// Whether a connection is waiting (a connect that succeeded is queued by the kernel
    /// before the client's `connect` returns, so no waiting is needed).
    pub fn was_reached(&self) -> bool {
        match self.listener.accept() {
            Ok(_) => true,
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => false,
            Err(error) => panic!("accept failed: {error}"),
        }
    }
}
