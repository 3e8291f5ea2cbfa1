//! `dsh-tools sandbox check`: what the kernel supports and the sandbox each configured tool
//! family would get, as text (or `--json`, the shape of `initialize`'s
//! `capabilities.sandbox`); exit code 1 when a family would refuse to start.

use dsh_tools::process::sandbox::{families, kernel_support};
use dsh_tools::runtime::probe_fork_server;
use dsh_tools_protocol::{
    BudgetIsolation, CodeLanguage, FamilySandbox, FilesystemIsolation, HostConfig,
    NetworkIsolation, PythonRunner, PythonRunnerKind, SandboxMode,
};
use std::io::Write;

/// Prints the report; returns the exit code.
pub fn check(config: &HostConfig, json: bool) -> anyhow::Result<i32> {
    let runtime = &config.code_runtime;
    if runtime.loads(CodeLanguage::Python) {
        // Whether runs can be forked is tried for real, as a pool would.
        let sandbox =
            families::python(&config.sandbox, runtime.sandbox.as_ref(), &kernel_support());
        let interpreter = runtime
            .python
            .clone()
            .unwrap_or_else(|| "python3".to_owned());
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
            .block_on(probe_fork_server(
                &interpreter,
                runtime.max_heap_mb,
                sandbox,
            ));
    }
    let report = families::report(config, &kernel_support());
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        let kernel = &report.kernel;
        let yes = |on: bool| if on { "yes" } else { "no" };
        writeln!(
            out,
            "kernel: Landlock ABI {}, unprivileged user namespaces: {}, seccomp filters: {}",
            kernel.landlock_abi,
            yes(kernel.user_namespaces),
            yes(kernel.seccomp)
        )?;
        let families = report
            .bash
            .iter()
            .map(|sandbox| ("bash".to_owned(), sandbox))
            .chain(
                report
                    .python
                    .iter()
                    .map(|s| ("Python Code Mode".to_owned(), s)),
            )
            .chain(
                report
                    .mcp_servers
                    .iter()
                    .map(|(name, s)| (format!("MCP server \"{name}\""), s)),
            );
        let mut budgets = Vec::new();
        for (name, sandbox) in families {
            writeln!(out, "{name}: {}", describe(sandbox))?;
            budgets.push(format!("{name} {}", budgets_name(sandbox.budgets)));
        }
        if !budgets.is_empty() {
            writeln!(out, "budgets per run: {}", budgets.join(", "))?;
        }
        if let Some(runner) = &report.python_runner {
            writeln!(out, "Python Code Mode runs: {}", describe_runner(runner))?;
        }
    }
    let refused = report
        .bash
        .iter()
        .chain(report.python.iter())
        .chain(report.mcp_servers.values())
        .any(|sandbox| sandbox.unavailable.is_some());
    Ok(i32::from(refused))
}

/// `forked from a fork server`, or the fallback and why.
fn describe_runner(runner: &PythonRunner) -> String {
    match (runner.kind, &runner.fallback_reason) {
        (PythonRunnerKind::ForkServer, _) => "forked from a fork server".to_owned(),
        (PythonRunnerKind::FreshInterpreter, Some(why)) => {
            format!("a fresh interpreter each (fallback: {why})")
        }
        (PythonRunnerKind::FreshInterpreter, None) => "a fresh interpreter each".to_owned(),
    }
}

/// How a family's process trees are budgeted, as the report names it.
fn budgets_name(budgets: BudgetIsolation) -> &'static str {
    match budgets {
        BudgetIsolation::CgroupV2 => "cgroup-v2",
        BudgetIsolation::CgroupV1 => "cgroup-v1",
        BudgetIsolation::Polled => "polled",
        BudgetIsolation::None => "none",
    }
}

/// `workspace-write (Landlock), network off (namespace), writable: /w`.
fn describe(sandbox: &FamilySandbox) -> String {
    if let Some(message) = &sandbox.unavailable {
        return format!("REFUSES TO START: {message}");
    }
    let mode = match sandbox.mode {
        SandboxMode::Off => return "unsandboxed (mode off)".to_owned(),
        SandboxMode::WorkspaceWrite => "workspace-write",
        SandboxMode::ReadOnly => "read-only",
    };
    let network = match sandbox.network_isolation {
        NetworkIsolation::Namespace => "network off (user + network namespace)",
        NetworkIsolation::Seccomp => "network off (seccomp socket filter)",
        NetworkIsolation::None => "network on",
        NetworkIsolation::Proxy => "network only through the host's proxy (network namespace)",
    };
    let filesystem = match sandbox.filesystem {
        FilesystemIsolation::View => "private view + Landlock",
        FilesystemIsolation::Landlock | FilesystemIsolation::None => "Landlock",
    };
    let mut writable = sandbox.writable_roots.clone();
    writable.push("its scratch dir".to_owned());
    format!(
        "{mode} ({filesystem}), {network}, writable: {}",
        writable.join(", ")
    )
}
