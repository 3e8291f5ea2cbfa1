//! Built-in tools, off unless `builtins` configures them: the file tools (`read`, `write`,
//! `edit`, `glob`, `grep`) confined to `builtins.fs.root`, and `bash` in `builtins.bash.cwd`.
//! They register globally like any tool and run the same pipeline; each declares a typed
//! output, its concurrency, and its UI cards.

pub mod bash;
mod cards;
pub mod fs;
mod typed;
pub mod web;

use crate::pipeline::ToolRuntime;
use crate::process::sandbox::{families, kernel_support};
use crate::registry::RegistryError;
use crate::spill::SpillStore;
use crate::tool::{DefinitionError, ToolDefinition};
use bash::BashSettings;
use bash::session::ExecSessions;
use dsh_tools_protocol::{BuiltinsConfig, SandboxConfig, WebConfig};
use fs::FsRoot;
use std::io;
use std::sync::Arc;

/// Why the built-ins could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum BuiltinsError {
    /// `builtins.fs.root` is missing or not a directory.
    #[error("config.builtins.fs.root: cannot use \"{path}\": {source}")]
    FsRoot {
        /// The configured root.
        path: String,
        /// Why.
        source: io::Error,
    },
    /// `builtins.bash.cwd` is missing or not a directory.
    #[error("config.builtins.bash.cwd: cannot use \"{path}\": {source}")]
    BashCwd {
        /// The configured directory.
        path: String,
        /// Why.
        source: io::Error,
    },
    /// A registration failed (a name already taken in the global layer).
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// A built-in definition did not compile (a defect of this build).
    #[error(transparent)]
    Definition(#[from] DefinitionError),
}

/// The definitions `config` enables (none for an empty config); `spill` holds the files of
/// `bash` output too long to keep and is readable by `read` and `grep`; `bash` is sandboxed
/// by its own `sandbox` over the top-level `sandbox`.
pub fn definitions(
    config: &BuiltinsConfig,
    spill: &Arc<SpillStore>,
    sandbox: &SandboxConfig,
    sessions: &Arc<ExecSessions>,
) -> Result<Vec<ToolDefinition>, BuiltinsError> {
    let mut definitions = Vec::new();
    if let Some(fs_config) = &config.fs {
        let root = FsRoot::open(&fs_config.root).map_err(|source| BuiltinsError::FsRoot {
            path: fs_config.root.clone(),
            source,
        })?;
        let root = root
            .with_spill(spill.clone())
            .protecting(&sandbox.protected);
        definitions.extend(fs::definitions(&Arc::new(root), fs_config.stale_edits)?);
    }
    if let Some(bash_config) = config.bash.as_ref().filter(|bash| bash.allow) {
        let cwd_error = |source| BuiltinsError::BashCwd {
            path: bash_config.cwd.clone(),
            source,
        };
        let cwd = std::fs::canonicalize(&bash_config.cwd).map_err(cwd_error)?;
        if !cwd.is_dir() {
            return Err(cwd_error(io::Error::new(
                io::ErrorKind::NotADirectory,
                "not a directory",
            )));
        }
        let sandbox = families::bash(
            sandbox,
            bash_config.sandbox.as_ref(),
            &cwd,
            &kernel_support(),
        );
        if let Some(message) = sandbox.unavailable() {
            // Fail closed: the tool stays registered and each call fails with this.
            tracing::warn!("{message}");
        }
        let egress = egress_of(&sandbox);
        *sessions.egress.write() = egress.clone();
        definitions.extend(bash::definitions(BashSettings {
            cwd,
            max_output_bytes: bash::DEFAULT_OUTPUT_BYTES,
            spill: spill.clone(),
            sandbox,
            limits: bash_config.limits.clone(),
            sessions: sessions.clone(),
            egress,
        })?);
    }
    if let Some(web) = config.web.as_ref().filter(|web| web.allow) {
        let egress = web_egress(web, sandbox);
        *sessions.web_egress.write() = Some(egress.clone());
        let limits = web::client::Limits {
            max_bytes: web.max_bytes,
            timeout: std::time::Duration::from_millis(web.timeout_ms),
            max_redirects: web.max_redirects,
        };
        definitions.push(web::definition(egress, limits)?);
    }
    Ok(definitions)
}

/// `web_fetch`'s policy: `builtins.web.network`, else the top-level `sandbox.network` when
/// that is `{ allow, deny }`, else any host (the addresses of this machine and the cloud's
/// metadata service are refused whatever the policy says). Checked at `initialize`.
fn web_egress(web: &WebConfig, sandbox: &SandboxConfig) -> Arc<crate::egress::Egress> {
    let shared = sandbox
        .network
        .as_ref()
        .and_then(|network| network.policy());
    let (lists, field) = match (&web.network, shared) {
        (Some(own), _) => (own, "builtins.web.network"),
        (None, Some(shared)) => (shared, "sandbox.network"),
        (None, None) => {
            let any = crate::egress::EgressPolicy::allowing_all("builtins.web.network");
            return crate::egress::Egress::new(any);
        }
    };
    let parsed = crate::egress::EgressPolicy::parse(&lists.allow, &lists.deny, field)
        .unwrap_or_else(|e| {
            tracing::warn!("{e}");
            crate::egress::EgressPolicy::refusing_all(field)
        });
    crate::egress::Egress::new(parsed)
}

/// The proxy of `sandbox`'s network policy, if it has one (the config was checked: a policy
/// that does not parse here refuses everything).
fn egress_of(sandbox: &crate::process::Sandbox) -> Option<Arc<crate::egress::Egress>> {
    let policy = sandbox.egress_policy()?;
    let parsed = crate::egress::EgressPolicy::parse(&policy.allow, &policy.deny, "sandbox.network")
        .unwrap_or_else(|e| {
            tracing::warn!("{e}");
            crate::egress::EgressPolicy::refusing_all("sandbox.network")
        });
    Some(crate::egress::Egress::new(parsed))
}

/// Registers the enabled built-ins globally and returns their registration ids; all or
/// nothing (a failure unregisters what this call registered). With `bash` comes the
/// pre-execute listener that sends every `dangerouslyDisableSandbox` call to approval.
pub fn register_builtins(
    runtime: &ToolRuntime,
    config: &BuiltinsConfig,
    sandbox: &SandboxConfig,
    sessions: &Arc<ExecSessions>,
) -> Result<Vec<Arc<str>>, BuiltinsError> {
    let mut registered = Vec::new();
    let definitions = definitions(config, runtime.spill(), sandbox, sessions)?;
    let has_bash = definitions.iter().any(|d| &*d.name == "bash");
    for definition in definitions {
        match runtime.register(definition, None) {
            Ok(id) => registered.push(id),
            Err(error) => {
                for id in &registered {
                    let _ = runtime.registry().unregister(id);
                }
                return Err(error.into());
            }
        }
    }
    if has_bash {
        runtime.add_pre_execute(
            bash::escalation::ORDER,
            None,
            Arc::new(bash::escalation::Escalation),
        );
    }
    Ok(registered)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::tool::{ExecutionToken, ToolExecutionInput};
    use dsh_tools_protocol::{FsConfig, HostConfig};
    use serde_json::json;

    #[tokio::test]
    async fn only_direct_calls_persist_card_meta() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
        let runtime = ToolRuntime::new(&HostConfig::default());
        let config = BuiltinsConfig {
            fs: Some(FsConfig {
                root: dir.path().display().to_string(),
                stale_edits: true,
            }),
            bash: None,
            web: None,
        };
        register_builtins(&runtime, &config, &Default::default(), &ExecSessions::new()).unwrap();
        let input = ToolExecutionInput::new(
            "c1",
            "write",
            json!({ "file_path": "b.txt", "content": "" }),
        );
        let direct = runtime.execute(input.clone()).await;
        assert_eq!(direct.meta, Some(json!({ "created": true })));
        let nested = runtime
            .execute(ToolExecutionInput {
                parent: Some(ExecutionToken::fresh()),
                ..input
            })
            .await;
        assert_eq!(
            nested.value(),
            Some(&json!({ "path": "b.txt", "bytes": 0, "created": false }))
        );
        assert_eq!(nested.meta, None);
    }
}
