//! The child process of one MCP server: spawned in its own process group with a clean
//! environment and its sandbox (none unless `mcpServers.<name>.sandbox` asks), its stderr
//! forwarded to the log, and terminated as a group and reaped. Its whole tree runs in a
//! budget leaf of its own where the host has cgroups (accounted together, killed together,
//! at most [`MAX_PROCESSES`] processes and threads).

use super::link::Link;
use super::timing::{EXIT_ON_EOF, EXIT_ON_SIGTERM, REAP_GRACE};
use crate::process::budget::{Budget, Limits};
use crate::process::sandbox::PrivateNetwork;
use crate::process::{ProcessGroup, Sandbox};
use dsh_tools_protocol::McpServerConfig;
use nix::sys::signal::Signal;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout, Command};

/// A running server process and the group it leads.
pub struct ServerProcess {
    group: ProcessGroup,
    /// Its network under a `sandbox.network` policy (the proxy stops with it).
    _network: Option<PrivateNetwork>,
}

/// The process plus the pipes the MCP transport takes over.
pub struct Spawned {
    /// The process.
    pub process: ServerProcess,
    /// Its stdout (server → host messages).
    pub stdout: ChildStdout,
    /// Its stdin (host → server messages).
    pub stdin: ChildStdin,
}

/// What the official MCP SDKs (TypeScript and Python) pass on of the host's environment by
/// default; `npx` and `uvx` need `HOME`, so `PATH` alone is not enough.
const INHERITED_ENV: [&str; 6] = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/// Processes and threads one server's tree may hold at once (its leaf's `pids.max`): room
/// for `npx` and language runtimes, not for a fork bomb.
pub const MAX_PROCESSES: u64 = 1024;

/// Starts `config.command` in a new process group. The environment is [`INHERITED_ENV`]
/// plus the configured `env`; stderr lines go to the log and the last one is kept for
/// `lastError`.
pub fn spawn(
    link: &Arc<Link>,
    config: &McpServerConfig,
    sandbox: &Sandbox,
) -> Result<Spawned, String> {
    let program = config.command.as_deref().unwrap_or_default();
    // Under a network policy the server gets a network of its own, out only by the proxy.
    let network = PrivateNetwork::for_policy(sandbox).map_err(|e| e.to_string())?;
    let confinement = match &network {
        Some(network) => network.confine(sandbox, None),
        None => sandbox.confine(None),
    }
    .map_err(|e| e.to_string())?;
    let mut command = Command::new(program);
    command
        .args(&config.args)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for name in INHERITED_ENV {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    if let Some(network) = &network {
        command.envs(network.environment.iter().cloned());
    }
    command.envs(&config.env);
    if let Some(cwd) = &config.cwd {
        command.current_dir(cwd);
    }
    let budget = Budget::new(Limits {
        pids: Some(MAX_PROCESSES),
        ..Limits::default()
    })
    .map_err(|e| format!("could not start `{program}`: {e}"))?;
    let mut group = ProcessGroup::spawn_budgeted(&mut command, &confinement, Some(budget))
        .map_err(|e| format!("could not start `{program}`: {e}"))?;
    let child = group.child();
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(format!("`{program}` started without piped stdio"));
    };
    let name = link.name.clone();
    let link = Arc::downgrade(link);
    tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            tracing::info!(target: "mcp", "[{name}] {line}");
            let Some(link) = link.upgrade() else { break };
            if !line.trim().is_empty() {
                link.remember_stderr(line);
            }
        }
    });
    Ok(Spawned {
        process: ServerProcess {
            group,
            _network: network,
        },
        stdout,
        stdin,
    })
}

impl ServerProcess {
    /// The server program's pid while it runs (for messages).
    pub fn pid(&self) -> Option<i32> {
        self.group.program_pid()
    }

    /// Resolves when the process exits (reaping it), with a description of how.
    pub async fn exited(&mut self) -> String {
        match self.group.wait().await {
            Ok(status) => describe(status),
            Err(e) => format!("could not be waited for: {e}"),
        }
    }

    /// How the process ended, if it does within `grace` (a failed handshake is usually
    /// a server that exited; its status says more than the closed pipe).
    pub async fn exit_within(&mut self, grace: Duration) -> Option<String> {
        tokio::time::timeout(grace, self.exited()).await.ok()
    }

    /// Ends the process: a grace period for it to exit on its own (its stdin is already
    /// closed), then SIGTERM to its group, then SIGKILL; always reaped, stragglers of its
    /// group killed.
    pub async fn terminate(mut self) {
        if let Some(Ok(_)) = self.group.wait_within(EXIT_ON_EOF).await {
            return;
        }
        self.group.signal(Signal::SIGTERM);
        if let Some(Ok(_)) = self.group.wait_within(EXIT_ON_SIGTERM).await {
            return;
        }
        if self.group.kill_and_reap(REAP_GRACE).await.is_none() {
            tracing::warn!(target: "mcp", "an MCP server process did not die on SIGKILL");
        }
    }
}

/// `exited with exit status: 1` / `was killed by signal 9`.
fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status.signal() {
        Some(signal) => format!("was killed by signal {signal}"),
        None => format!("exited with {status}"),
    }
}
