//! A temporary workspace (a root plus a sibling directory outside it) with the built-ins
//! registered on a library `ToolRuntime`.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use dsh_tools::builtins::bash::session::ExecSessions;
use dsh_tools::builtins::register_builtins;
use dsh_tools::{ToolExecutionInput, ToolExecutionResult, ToolRuntime};
use dsh_tools_protocol::{BashConfig, BuiltinsConfig, FsConfig, HostConfig};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tempfile::TempDir;

pub struct Workspace {
    _dir: TempDir,
    /// Canonical root (fs root and bash cwd).
    pub root: PathBuf,
    /// A directory next to the root, holding `secret.txt`.
    pub outside: PathBuf,
    pub runtime: Arc<ToolRuntime>,
}

impl Workspace {
    /// Both families enabled.
    pub fn new() -> Workspace {
        Workspace::configured(HostConfig::default(), |root| BuiltinsConfig {
            fs: Some(FsConfig {
                root: root.to_owned(),
                stale_edits: true,
            }),
            bash: Some(BashConfig {
                cwd: root.to_owned(),
                allow: true,
                sandbox: None,
                limits: Default::default(),
            }),
            web: None,
        })
    }

    /// A runtime from `host` with the built-ins `builtins(root)` enables.
    pub fn configured(host: HostConfig, builtins: impl FnOnce(&str) -> BuiltinsConfig) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (root, outside) = (base.join("root"), base.join("outside"));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.txt"), "TODO secret\n").unwrap();
        let runtime = ToolRuntime::new(&host);
        register_builtins(
            &runtime,
            &builtins(root.to_str().unwrap()),
            &host.sandbox,
            &ExecSessions::new(),
        )
        .unwrap();
        Workspace {
            _dir: dir,
            root,
            outside,
            runtime,
        }
    }

    /// The root as the error messages print it.
    pub fn root_text(&self) -> String {
        self.root.display().to_string()
    }

    /// Writes `content` at `relative` under the root (creating directories).
    pub fn write(&self, relative: &str, content: &str) {
        self.write_bytes(relative, content.as_bytes());
    }

    pub fn write_bytes(&self, relative: &str, content: &[u8]) {
        let path = self.root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    /// Reads a file under the root.
    pub fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.root.join(relative)).unwrap()
    }

    /// Creates the symbolic link `relative` → `target`.
    pub fn link(&self, relative: &str, target: impl AsRef<Path>) {
        std::os::unix::fs::symlink(target, self.root.join(relative)).unwrap();
    }

    /// Reads `relative` with the `read` tool (global scope), so `write` and `edit` may change
    /// it (stale-edit protection).
    pub async fn read_through_tool(&self, relative: &str) {
        let result = self
            .call("read", serde_json::json!({ "file_path": relative }))
            .await;
        assert!(!result.is_error(), "{result:?}");
    }

    /// Runs one direct call through the full pipeline.
    pub async fn call(&self, name: &str, arguments: Value) -> ToolExecutionResult {
        self.runtime
            .execute(ToolExecutionInput::new("call-1", name, arguments))
            .await
    }
}

/// The failure message of a result that must be a failure (and its `Error: ` content).
pub fn failure(result: &ToolExecutionResult) -> String {
    let error = result
        .error()
        .unwrap_or_else(|| panic!("expected a failure: {result:?}"));
    assert_eq!(result.text(), format!("Error: {}", error.message));
    error.message.clone()
}

/// The value of a result that must be a success.
pub fn value(result: &ToolExecutionResult) -> Value {
    result
        .value()
        .unwrap_or_else(|| panic!("expected a success: {result:?}"))
        .clone()
}
