//! The OS sandbox: `sandbox` and its per-family overrides in the config, and the effective
//! policy each family gets, as `initialize` reports it (`capabilities.sandbox`).

use crate::config::Map;
use crate::network::{NetworkPolicy, NetworkSetting};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What a sandboxed process may write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Read everything; write the workspace, the per-run scratch dir, null-like devices and
    /// `writableRoots` (the default).
    #[default]
    WorkspaceWrite,
    /// Read everything; write only the per-run scratch dir and null-like devices.
    ReadOnly,
    /// No sandbox: the process runs with the host user's full rights.
    Off,
}

/// `sandbox` (and `builtins.bash.sandbox`, `codeRuntime.sandbox`, `mcpServers.<name>.sandbox`):
/// every field optional; a family's field wins over the top-level one, which wins over the
/// default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct SandboxConfig {
    /// `workspace-write` (default), `read-only` or `off`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub mode: Option<SandboxMode>,
    /// Whether the process may reach the network (default false): `true` is the host's
    /// network; `{ allow, deny }` is only the domains the policy admits, through the host's
    /// proxy. A family's `network` replaces the top-level one whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub network: Option<NetworkSetting>,
    /// Further directories writable under `workspace-write` (absolute, or relative to the
    /// host's working directory; each must exist).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub writable_roots: Option<Vec<String>>,
    /// Directories that must stay read-only: a family whose writable set contains one
    /// refuses to start (Landlock grants whole trees, so it cannot carve a hole).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub read_only_roots: Option<Vec<String>>,
    /// Paths no sandboxed process may read, masked by empty mounts (namespace mode) or left
    /// out of the Landlock read rules (seccomp fallback); added to the defaults (`~/.ssh`,
    /// `~/.gnupg`, `~/.aws`, ...) and to the top-level list, never replacing them. `~/` is
    /// the host's `HOME`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub deny_read: Option<Vec<String>>,
    /// UNIX socket files the process may connect to (each must exist): bound into the
    /// private view and `socket(AF_UNIX)` allowed. Needs namespace mode: in the seccomp
    /// fallback a non-empty list makes the family unavailable.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub allow_unix_sockets: Option<Vec<String>>,
    /// Files no sandboxed command may change even inside a writable root: the files the
    /// permission rules are read from and written to (`permissions.persistTo`, `--config`).
    /// Set by the host, never read from the wire.
    #[serde(skip)]
    #[schemars(skip)]
    #[ts(skip)]
    pub protected: Vec<String>,
}

/// How the filesystem rules are enforced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "lowercase")]
pub enum FilesystemIsolation {
    /// A Landlock ruleset applied before exec.
    Landlock,
    /// Not confined (`mode: "off"`).
    None,
    /// A private filesystem view in the child's own mount namespace (the host's tree
    /// read-only, the writable roots read-write, fresh `/tmp`, `/run`, `/dev/shm`, a minimal
    /// `/dev`, `denyRead` masked), with the Landlock ruleset as a second layer.
    View,
}

/// How `network` (when not `true`) is enforced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "lowercase")]
pub enum NetworkIsolation {
    /// A new user and network namespace: only a loopback that is down.
    Namespace,
    /// A seccomp filter refusing `socket` for every family but `AF_UNIX`.
    Seccomp,
    /// Not confined (`network: true` or `mode: "off"`).
    None,
    /// `network: { allow, deny }`: a namespace whose only way out is the host's proxy
    /// (listening on the namespace's loopback), which admits what the policy allows.
    Proxy,
}

/// What the kernel offers, as the host probed it once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct SandboxSupport {
    /// The Landlock ABI version (0: none).
    pub landlock_abi: u32,
    /// Whether an unprivileged user plus network namespace can be created.
    pub user_namespaces: bool,
    /// Whether seccomp filters can be installed.
    pub seccomp: bool,
    /// Whether every child gets its own PID namespace (and `/proc`), so all it starts,
    /// `setsid` grandchildren included, dies with the host even when the host is SIGKILLed.
    /// Without it the leader still dies with the host, its escaped descendants may not.
    pub pid_namespaces: bool,
}

/// The effective sandbox of one tool family.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct FamilySandbox {
    /// The resolved mode.
    pub mode: SandboxMode,
    /// Whether the network is reachable.
    pub network: bool,
    /// Writable directories besides the per-run scratch dir and null-like devices
    /// (canonical; the workspace first).
    pub writable_roots: Vec<String>,
    /// Directories checked to lie outside every writable root.
    pub read_only_roots: Vec<String>,
    /// Filesystem enforcement.
    pub filesystem: FilesystemIsolation,
    /// Network enforcement.
    pub network_isolation: NetworkIsolation,
    /// Set when the kernel (or the configuration) cannot give what is asked: the family
    /// refuses to start and its calls fail with this message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub unavailable: Option<String>,
    /// Paths masked from reads (canonical where they exist; the defaults included).
    #[serde(default)]
    pub deny_read: Vec<String>,
    /// UNIX socket files the process may connect to (canonical).
    #[serde(default)]
    pub allow_unix_sockets: Vec<String>,
    /// How the family's process trees are budgeted (CPU time, memory, processes).
    #[serde(default)]
    pub budgets: BudgetIsolation,
    /// The egress policy when `network` is `{ allow, deny }` (then `network` is false and
    /// `networkIsolation` is `proxy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub egress: Option<NetworkPolicy>,
}

/// How a family's budgets hold for the whole process tree of a run, not per process.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
pub enum BudgetIsolation {
    /// A cgroup v2 leaf per tree (`cpu`, `memory`, `pids`).
    #[serde(rename = "cgroup-v2")]
    CgroupV2,
    /// A leaf in each cgroup v1 hierarchy (`cpu`, `cpuacct`, `memory`, `pids`).
    #[serde(rename = "cgroup-v1")]
    CgroupV1,
    /// No cgroup: the tree is read from `/proc` while it runs and killed past a budget.
    #[serde(rename = "polled")]
    Polled,
    /// Not budgeted beyond per-process limits.
    #[default]
    #[serde(rename = "none")]
    None,
}

/// `capabilities.sandbox` of `initialize`: the kernel's support and each family's sandbox.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct SandboxReport {
    /// What the kernel supports.
    pub kernel: SandboxSupport,
    /// `bash`, when `builtins.bash` registers it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub bash: Option<FamilySandbox>,
    /// Python Code Mode interpreters (TypeScript isolates run in-process, not sandboxed
    /// by the OS), when Python is loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub python: Option<FamilySandbox>,
    /// How Python Code Mode runs start, when Python is loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub python_runner: Option<PythonRunner>,
    /// Each enabled MCP server, by name.
    pub mcp_servers: Map<FamilySandbox>,
}

/// How Python Code Mode runs start: forked from a long-lived fork server that has imported
/// everything (each run a fresh child, set up and confined before it reads its program), or
/// a fresh `python3` each (the fallback, where a fork server cannot start or its child
/// cannot confine itself; `fallbackReason` says why).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct PythonRunner {
    pub kind: PythonRunnerKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub fallback_reason: Option<String>,
}

/// [`PythonRunner`]'s kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
pub enum PythonRunnerKind {
    #[serde(rename = "fork-server")]
    ForkServer,
    #[serde(rename = "fresh-interpreter")]
    FreshInterpreter,
}
