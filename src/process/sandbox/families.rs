//! Each tool family's sandbox from the host configuration: `bash` (its `cwd` is the
//! workspace), Python Code Mode (nothing but each interpreter's scratch dir) and each MCP
//! server (its `cwd`; unsandboxed unless it has a `sandbox` of its own), and the report of
//! all of them that `initialize` and `dsh-tools sandbox check` give.

use super::plan::{Family, Sandbox};
use super::policy::SandboxPolicy;
use crate::process::budget::Mechanism;
use dsh_tools_protocol::{
    BudgetIsolation, FamilySandbox, HostConfig, McpServerConfig, SandboxConfig, SandboxReport,
    SandboxSupport,
};
use std::path::{Path, PathBuf};

/// `bash` running commands in the canonical `cwd`.
pub fn bash(
    global: &SandboxConfig,
    own: Option<&SandboxConfig>,
    cwd: &Path,
    support: &SandboxSupport,
) -> Sandbox {
    let family = Family {
        name: "bash",
        field: "builtins.bash.sandbox",
        workspace: Some(cwd),
    };
    Sandbox::check(family, &SandboxPolicy::resolve(global, own), support)
}

/// Python Code Mode interpreters: writable are their scratch dirs (and, under
/// `workspace-write`, `writableRoots`); there is no workspace.
pub fn python(
    global: &SandboxConfig,
    own: Option<&SandboxConfig>,
    support: &SandboxSupport,
) -> Sandbox {
    let family = Family {
        name: "Python Code Mode",
        field: "codeRuntime.sandbox",
        workspace: None,
    };
    Sandbox::check(family, &SandboxPolicy::resolve(global, own), support)
}

/// The MCP server `name`: off without a `sandbox` of its own (existing setups keep
/// working); with one, its `cwd` (else the host's) is the workspace.
pub fn mcp_server(
    global: &SandboxConfig,
    name: &str,
    server: &McpServerConfig,
    support: &SandboxSupport,
) -> Sandbox {
    let Some(own) = &server.sandbox else {
        return Sandbox::off();
    };
    let workspace = server
        .cwd
        .as_ref()
        .map_or_else(std::env::current_dir, std::fs::canonicalize)
        .unwrap_or_else(|_| PathBuf::from(server.cwd.as_deref().unwrap_or(".")));
    let label = format!("MCP server \"{name}\"");
    let field = format!("mcpServers.{name}.sandbox");
    let family = Family {
        name: &label,
        field: &field,
        workspace: Some(&workspace),
    };
    Sandbox::check(family, &SandboxPolicy::resolve(global, Some(own)), support)
}

/// `report` with how the family's trees are budgeted: `bash` and Python by the host's
/// mechanism (a cgroup leaf, or polled); an MCP server, which nothing polls, only by a leaf.
fn budgeted(mut report: FamilySandbox, polled_too: bool) -> FamilySandbox {
    let mechanism = crate::process::budget::mechanism();
    report.budgets = match mechanism {
        Mechanism::Polled if !polled_too => BudgetIsolation::None,
        mechanism => mechanism.isolation(),
    };
    report
}

/// Every configured family's sandbox: `bash` when it is registered (with a usable `cwd`),
/// Python when it is loaded, and each enabled spawned MCP server.
pub fn report(config: &HostConfig, support: &SandboxSupport) -> SandboxReport {
    let global = &config.sandbox;
    let bash_sandbox = config
        .builtins
        .bash
        .as_ref()
        .filter(|bash| bash.allow)
        .and_then(|bash| {
            let cwd = std::fs::canonicalize(&bash.cwd).ok()?;
            let sandbox = self::bash(global, bash.sandbox.as_ref(), &cwd, support);
            Some(budgeted(sandbox.report(), true))
        });
    let runtime = &config.code_runtime;
    let python_sandbox = runtime
        .loads(dsh_tools_protocol::CodeLanguage::Python)
        .then(|| {
            budgeted(
                python(global, runtime.sandbox.as_ref(), support).report(),
                true,
            )
        });
    let mcp_servers = config
        .mcp_servers
        .iter()
        // A remote (`url`) server runs no process here: nothing to sandbox.
        .filter(|(_, server)| server.enabled && server.url.is_none())
        .map(|(name, server)| {
            let sandbox = mcp_server(global, name, server, support);
            (name.clone(), budgeted(sandbox.report(), false))
        })
        .collect();
    let python_runner = python_sandbox
        .is_some()
        .then(super::python_runner::python_runner);
    SandboxReport {
        kernel: *support,
        bash: bash_sandbox,
        python: python_sandbox,
        python_runner,
        mcp_servers,
    }
}
