//! A family's sandbox: its policy checked once, when the family starts, against the kernel
//! and the filesystem. What cannot be applied makes the family unavailable (fail closed,
//! with a message naming what is missing and how to opt out), never a weaker sandbox.

use super::confine::{Confinement, Namespaces};
use super::landlock::{self, MINIMUM_ABI};
use super::loopback::SharedNetwork;
use super::policy::SandboxPolicy;
use super::seccomp::{self, FilterRules};
use super::view::{self, View};
use dsh_tools_protocol::{
    FamilySandbox, FilesystemIsolation, NetworkIsolation, NetworkPolicy, SandboxMode,
    SandboxSupport,
};
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Who a sandbox is for, as messages name it.
#[derive(Clone, Copy, Debug)]
pub struct Family<'a> {
    /// `bash`, `Python Code Mode`, `MCP server "x"`.
    pub name: &'a str,
    /// The config field of its override (`builtins.bash.sandbox`).
    pub field: &'a str,
    /// The directory writable under `workspace-write` (bash's `cwd`, a server's `cwd`).
    pub workspace: Option<&'a Path>,
}

/// A family's checked sandbox; cheap to clone.
#[derive(Clone, Debug)]
pub struct Sandbox {
    mode: SandboxMode,
    network: bool,
    /// Canonical writable roots (the workspace first), besides a spawn's scratch dir.
    writable: Vec<PathBuf>,
    read_only: Vec<PathBuf>,
    network_isolation: NetworkIsolation,
    landlock_abi: u32,
    unavailable: Option<String>,
    /// Namespace mode: the child gets its own user, mount, IPC and UTS namespaces and the
    /// private filesystem view (else the seccomp fallback: Landlock and seccomp only).
    namespaces: bool,
    /// Absolute paths masked from reads (resolved per spawn: they may appear later).
    deny_read: Vec<PathBuf>,
    /// Canonical socket files grafted into the view.
    allow_unix_sockets: Vec<PathBuf>,
    /// The family's workspace, kept visible in the view even when it is not writable.
    workspace: Option<PathBuf>,
    /// `network: { allow, deny }`: the network is off but for the host's proxy, reached on
    /// the loopback of the [`SharedNetwork`] the child joins (namespace mode only).
    egress: Option<NetworkPolicy>,
    /// Canonical files inside a writable root kept read-only by the view.
    protected: Vec<PathBuf>,
    /// The confined process forks the processes of several runs, which share its IPC
    /// namespace ([`for_fork_server`](Self::for_fork_server)).
    runs_share_ipc: bool,
}

impl Sandbox {
    /// No sandbox.
    pub fn off() -> Self {
        Sandbox {
            mode: SandboxMode::Off,
            network: true,
            writable: Vec::new(),
            read_only: Vec::new(),
            network_isolation: NetworkIsolation::None,
            landlock_abi: 0,
            unavailable: None,
            namespaces: false,
            deny_read: Vec::new(),
            allow_unix_sockets: Vec::new(),
            workspace: None,
            egress: None,
            protected: Vec::new(),
            runs_share_ipc: false,
        }
    }

    /// Checks `policy` for `family` against `support` (see [`super::kernel_support`]).
    pub fn check(family: Family<'_>, policy: &SandboxPolicy, support: &SandboxSupport) -> Self {
        if policy.mode == SandboxMode::Off {
            return Sandbox::off();
        }
        let mut sandbox = Sandbox {
            mode: policy.mode,
            network: policy.network,
            writable: Vec::new(),
            read_only: policy
                .read_only_roots
                .iter()
                .map(|root| absolute(root))
                .collect(),
            network_isolation: NetworkIsolation::None,
            landlock_abi: support.landlock_abi,
            unavailable: None,
            namespaces: support.user_namespaces,
            deny_read: policy.deny_read.clone(),
            allow_unix_sockets: Vec::new(),
            workspace: family.workspace.map(Path::to_path_buf),
            egress: policy.egress.clone(),
            protected: Vec::new(),
            runs_share_ipc: false,
        };
        let mut missing = Vec::new();
        if support.landlock_abi < MINIMUM_ABI {
            missing.push(format!(
                "Landlock ABI {MINIMUM_ABI} or later (this kernel has {})",
                support.landlock_abi
            ));
        }
        // Every confined spawn gets the system call filter (both modes).
        if !support.seccomp {
            missing.push("seccomp filters (for the system call filter)".to_owned());
        }
        if !policy.network {
            sandbox.network_isolation = match (support.user_namespaces, &policy.egress) {
                (true, Some(_)) => NetworkIsolation::Proxy,
                (true, None) => NetworkIsolation::Namespace,
                (false, _) => NetworkIsolation::Seccomp,
            };
        }
        if !missing.is_empty() {
            let escape = format!("set {}.mode = \"off\" to run it unsandboxed", family.field);
            sandbox.unavailable = Some(format!(
                "{} is unavailable: the sandbox cannot be applied: this kernel lacks {}; {escape}",
                family.name,
                missing.join(" and ")
            ));
            return sandbox;
        }
        // The proxy is reached on a namespace's loopback; without one a policy could only be
        // "everything" or "nothing", neither of which the user asked for.
        if !support.user_namespaces && policy.egress.is_some() {
            sandbox.unavailable = Some(format!(
                "{} is unavailable: {field}.network = {{ allow, deny }} needs a network \
                 namespace (its only way out is the host's proxy), and this kernel refuses \
                 unprivileged user namespaces; set {field}.network to false (no network) or \
                 true (the host's, unfiltered), or {field}.mode = \"off\" to run it \
                 unsandboxed",
                family.name,
                field = family.field
            ));
            return sandbox;
        }
        if !support.user_namespaces && !policy.allow_unix_sockets.is_empty() {
            sandbox.unavailable = Some(format!(
                "{} is unavailable: {field}.allowUnixSockets needs the private filesystem view, \
                 and this kernel refuses unprivileged user namespaces (the seccomp fallback \
                 refuses every UNIX socket); empty {field}.allowUnixSockets, or set \
                 {field}.mode = \"off\" to run it unsandboxed",
                family.name,
                field = family.field
            ));
            return sandbox;
        }
        if let Err(problem) = sandbox.resolve_roots(family, policy) {
            sandbox.unavailable = Some(format!(
                "{} is unavailable: {problem}; fix {}",
                family.name, family.field
            ));
            return sandbox;
        }
        sandbox.protect(family, policy, support.user_namespaces);
        sandbox
    }

    /// Keeps the permission rules' files read-only where they lie inside a writable root:
    /// the view grafts them back read-only; the fallback (Landlock grants whole trees)
    /// cannot, so the family is refused rather than left able to rewrite its own rules.
    fn protect(&mut self, family: Family<'_>, policy: &SandboxPolicy, namespaces: bool) {
        for file in &policy.protected {
            let Ok(canonical) = std::fs::canonicalize(file) else {
                continue;
            };
            if !self.writable.iter().any(|root| canonical.starts_with(root)) {
                continue;
            }
            if !namespaces {
                self.unavailable = Some(format!(
                    "{} is unavailable: the permission rules' file {} lies inside a writable \
                     root, and without user namespaces the sandbox cannot keep it read-only; \
                     move permissions.persistTo out of the workspace, or set {}.mode = \
                     \"off\" to run it unsandboxed",
                    family.name,
                    canonical.display(),
                    family.field
                ));
                return;
            }
            self.protected.push(canonical);
        }
    }

    /// The writable set made canonical, and each read-only root checked to lie outside it.
    fn resolve_roots(&mut self, family: Family<'_>, policy: &SandboxPolicy) -> Result<(), String> {
        if self.mode == SandboxMode::WorkspaceWrite {
            self.writable
                .extend(family.workspace.map(Path::to_path_buf));
            for root in &policy.writable_roots {
                let canonical = std::fs::canonicalize(root)
                    .map_err(|e| format!("writableRoots: cannot use \"{root}\": {e}"))?;
                self.writable.push(canonical);
            }
        }
        for socket in &policy.allow_unix_sockets {
            let canonical = std::fs::canonicalize(socket)
                .and_then(|canonical| match view::is_socket(&canonical)? {
                    true => Ok(canonical),
                    false => Err(io::Error::other("not a UNIX socket file")),
                })
                .map_err(|e| {
                    format!("allowUnixSockets: cannot use \"{}\": {e}", socket.display())
                })?;
            self.allow_unix_sockets.push(canonical);
        }
        for read_only in &self.read_only {
            let canonical = std::fs::canonicalize(read_only).unwrap_or_else(|_| read_only.clone());
            if let Some(root) = self.writable.iter().find(|w| canonical.starts_with(w)) {
                return Err(format!(
                    "readOnlyRoots: \"{}\" lies inside the writable root \"{}\" (Landlock \
                     grants whole trees, so it cannot keep a part of one read-only)",
                    read_only.display(),
                    root.display()
                ));
            }
        }
        Ok(())
    }

    /// Whether this family runs unsandboxed.
    pub fn is_off(&self) -> bool {
        self.mode == SandboxMode::Off
    }

    /// Why the family refuses to start, if it does.
    pub fn unavailable(&self) -> Option<&str> {
        self.unavailable.as_deref()
    }

    /// Whether the host's network is reachable (unfiltered: false under a policy).
    pub fn network(&self) -> bool {
        self.network || self.is_off()
    }

    /// `network: { allow, deny }`, when the family runs under one (its children reach only
    /// the proxy, on the loopback of the scope's [`SharedNetwork`]); `None` when unsandboxed.
    pub fn egress_policy(&self) -> Option<&NetworkPolicy> {
        self.egress.as_ref().filter(|_| !self.is_off())
    }

    /// The writable roots besides a spawn's scratch dir (canonical).
    pub fn writable(&self) -> &[PathBuf] {
        &self.writable
    }

    /// The confinement of one spawn, whose `scratch` dir is writable too. Fails with the
    /// family's message when it is unavailable.
    pub fn confine(&self, scratch: Option<&Path>) -> io::Result<Confinement> {
        self.confine_joining(scratch, None)
    }

    /// Whether [`confine_joining`](Self::confine_joining) would use a [`SharedNetwork`]:
    /// namespace mode with the network off or under a policy (elsewhere the network is the
    /// host's, or seccomp refuses its sockets), so one is created only where it is joined.
    pub fn joins_shared_network(&self) -> bool {
        self.unavailable.is_none() && !self.is_off() && self.namespaces && !self.network
    }

    /// [`confine`](Self::confine), the child joining `network` (a scope's loopback)
    /// instead of a network namespace of its own when
    /// [`joins_shared_network`](Self::joins_shared_network); `network` is ignored otherwise.
    pub fn confine_joining(
        &self,
        scratch: Option<&Path>,
        network: Option<&Arc<SharedNetwork>>,
    ) -> io::Result<Confinement> {
        if let Some(message) = &self.unavailable {
            return Err(io::Error::other(message.clone()));
        }
        if self.is_off() {
            return Ok(Confinement::none());
        }
        let joined = network.filter(|_| self.joins_shared_network()).cloned();
        let mut writable = self.writable.clone();
        writable.extend(scratch.map(Path::to_path_buf));
        let namespace = if self.namespaces {
            let visible: Vec<PathBuf> = self
                .workspace
                .iter()
                .filter(|workspace| !writable.iter().any(|root| workspace.starts_with(root)))
                .cloned()
                .collect();
            let view = View::plan(
                &writable,
                &visible,
                &self.allow_unix_sockets,
                &self.deny_read,
                &self.protected,
            )?;
            Some(Namespaces::new(view, self.network || joined.is_some()))
        } else {
            None
        };
        // The view masks `denyRead` in namespace mode; the fallback leaves it out of the
        // Landlock read rules instead.
        let denied: Vec<PathBuf> = if self.namespaces {
            Vec::new()
        } else {
            self.deny_read
                .iter()
                .filter_map(|path| std::fs::canonicalize(path).ok())
                .collect()
        };
        let ruleset = landlock::ruleset(self.landlock_abi, &writable, &denied)?;
        let proc_read = (!denied.is_empty()).then(|| landlock::read_bits(self.landlock_abi));
        let seccomp = Some(seccomp::filter(&FilterRules {
            network_off: !self.network,
            allow_unix: !self.allow_unix_sockets.is_empty(),
            fallback: !self.namespaces,
            runs_share_ipc: self.runs_share_ipc,
        })?);
        Confinement::new(ruleset, namespace, seccomp, proc_read, joined)
    }

    /// The same sandbox for a process that forks the processes of several runs (a Python
    /// fork server): its children share its IPC namespace, so IPC objects, which outlive
    /// their maker, are refused to all of them.
    pub fn for_fork_server(&self) -> Sandbox {
        Sandbox {
            runs_share_ipc: true,
            ..self.clone()
        }
    }

    /// The Landlock layer a process forked from one confined by [`confine`](Self::confine)
    /// stacks on its own (see [`landlock::write_layer`]): writes only to the writable roots
    /// and `scratch`. `None` when the sandbox is off (nothing to narrow).
    pub fn write_layer(&self, scratch: &Path) -> io::Result<Option<OwnedFd>> {
        if let Some(message) = &self.unavailable {
            return Err(io::Error::other(message.clone()));
        }
        if self.is_off() {
            return Ok(None);
        }
        let mut writable = self.writable.clone();
        writable.push(scratch.to_path_buf());
        landlock::write_layer(self.landlock_abi, &writable).map(Some)
    }

    /// The effective sandbox as `initialize` and `dsh-tools sandbox check` report it.
    pub fn report(&self) -> FamilySandbox {
        let text = |paths: &[PathBuf]| paths.iter().map(|p| p.display().to_string()).collect();
        FamilySandbox {
            mode: self.mode,
            network: self.network(),
            writable_roots: text(&self.writable),
            read_only_roots: text(&self.read_only),
            filesystem: if self.is_off() {
                FilesystemIsolation::None
            } else if self.namespaces {
                FilesystemIsolation::View
            } else {
                FilesystemIsolation::Landlock
            },
            network_isolation: self.network_isolation,
            unavailable: self.unavailable.clone(),
            deny_read: text(&self.deny_read),
            allow_unix_sockets: text(&self.allow_unix_sockets),
            budgets: dsh_tools_protocol::BudgetIsolation::None,
            egress: self.egress_policy().cloned(),
        }
    }
}

/// `path` made absolute against the host's working directory (not resolved).
fn absolute(path: &str) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| PathBuf::from(path))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const FULL: SandboxSupport = SandboxSupport {
        landlock_abi: 7,
        user_namespaces: true,
        seccomp: true,
        pid_namespaces: true,
    };

    fn family(workspace: Option<&Path>) -> Family<'_> {
        Family {
            name: "bash",
            field: "builtins.bash.sandbox",
            workspace,
        }
    }

    fn policy(mode: SandboxMode, network: bool) -> SandboxPolicy {
        SandboxPolicy {
            mode,
            network,
            writable_roots: Vec::new(),
            read_only_roots: Vec::new(),
            deny_read: Vec::new(),
            allow_unix_sockets: Vec::new(),
            egress: None,
            protected: Vec::new(),
        }
    }

    #[test]
    fn allowed_sockets_must_be_sockets_and_need_namespace_mode() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("s.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let file = dir.path().join("plain");
        std::fs::write(&file, "x").unwrap();
        let mut asking = policy(SandboxMode::WorkspaceWrite, false);
        asking.allow_unix_sockets = vec![socket.clone()];
        let sandbox = Sandbox::check(family(None), &asking, &FULL);
        assert_eq!(sandbox.unavailable(), None);
        let report = sandbox.report();
        assert_eq!(report.filesystem, FilesystemIsolation::View);
        let canonical = socket.canonicalize().unwrap().display().to_string();
        assert_eq!(report.allow_unix_sockets, vec![canonical]);
        asking.allow_unix_sockets = vec![file];
        let message = Sandbox::check(family(None), &asking, &FULL)
            .unavailable()
            .map(str::to_owned)
            .unwrap_or_default();
        assert!(message.contains("not a UNIX socket file"), "{message}");
        let no_userns = SandboxSupport {
            user_namespaces: false,
            ..FULL
        };
        asking.allow_unix_sockets = vec![socket];
        let fallback = Sandbox::check(family(None), &asking, &no_userns);
        let message = fallback.unavailable().unwrap_or_default();
        assert!(
            message.starts_with("bash is unavailable: builtins.bash.sandbox.allowUnixSockets"),
            "{message}"
        );
        assert!(fallback.confine(None).is_err());
        let plain = Sandbox::check(
            family(None),
            &policy(SandboxMode::ReadOnly, false),
            &no_userns,
        );
        assert_eq!(plain.report().filesystem, FilesystemIsolation::Landlock);
    }

    #[test]
    fn an_unsupported_kernel_makes_the_family_unavailable_naming_what_is_missing() {
        let no_landlock = SandboxSupport {
            landlock_abi: 0,
            ..FULL
        };
        let sandbox = Sandbox::check(
            family(None),
            &policy(SandboxMode::WorkspaceWrite, false),
            &no_landlock,
        );
        assert_eq!(
            sandbox.unavailable(),
            Some(
                "bash is unavailable: the sandbox cannot be applied: this kernel lacks Landlock \
                 ABI 3 or later (this kernel has 0); set builtins.bash.sandbox.mode = \"off\" to \
                 run it unsandboxed"
            )
        );
        assert!(sandbox.confine(None).is_err());
        let off = Sandbox::check(family(None), &policy(SandboxMode::Off, false), &no_landlock);
        assert_eq!(off.unavailable(), None);
        assert!(!off.confine(None).map(|c| c.is_confined()).unwrap_or(true));
    }

    #[test]
    fn the_network_falls_back_to_seccomp_and_a_kernel_without_seccomp_fails_closed() {
        let no_userns = SandboxSupport {
            user_namespaces: false,
            ..FULL
        };
        let closed = policy(SandboxMode::ReadOnly, false);
        let sandbox = Sandbox::check(family(None), &closed, &no_userns);
        assert_eq!(
            sandbox.report().network_isolation,
            NetworkIsolation::Seccomp
        );
        // The filter is part of every confined spawn, the network on or off.
        for support in [
            SandboxSupport {
                seccomp: false,
                ..no_userns
            },
            SandboxSupport {
                seccomp: false,
                ..FULL
            },
        ] {
            for network in [false, true] {
                let checked = Sandbox::check(
                    family(None),
                    &policy(SandboxMode::ReadOnly, network),
                    &support,
                );
                assert_eq!(
                    checked.unavailable(),
                    Some(
                        "bash is unavailable: the sandbox cannot be applied: this kernel lacks \
                         seccomp filters (for the system call filter); set \
                         builtins.bash.sandbox.mode = \"off\" to run it unsandboxed"
                    )
                );
            }
        }
    }

    #[test]
    fn a_read_only_root_inside_the_writable_set_is_refused() {
        let workspace = std::env::temp_dir();
        let canonical = std::fs::canonicalize(&workspace).unwrap_or(workspace);
        let mut inside = policy(SandboxMode::WorkspaceWrite, true);
        inside.read_only_roots = vec![canonical.join("x").display().to_string()];
        let sandbox = Sandbox::check(family(Some(&canonical)), &inside, &FULL);
        let message = sandbox.unavailable().unwrap_or_default();
        assert!(
            message.contains("lies inside the writable root"),
            "{message}"
        );
        inside.mode = SandboxMode::ReadOnly;
        let read_only = Sandbox::check(family(Some(&canonical)), &inside, &FULL);
        assert_eq!(read_only.unavailable(), None);
        assert!(read_only.writable().is_empty());
    }

    #[test]
    fn a_policy_joins_the_scopes_network_in_namespace_mode_and_fails_closed_in_the_fallback() {
        let egress = NetworkPolicy {
            allow: vec!["@npm".into()],
            deny: vec![],
        };
        let mut asking = policy(SandboxMode::WorkspaceWrite, false);
        asking.egress = Some(egress.clone());
        let sandbox = Sandbox::check(family(None), &asking, &FULL);
        assert_eq!(sandbox.unavailable(), None);
        assert!(!sandbox.network());
        assert!(sandbox.joins_shared_network());
        assert_eq!(sandbox.egress_policy(), Some(&egress));
        let report = sandbox.report();
        assert!(!report.network);
        assert_eq!(report.network_isolation, NetworkIsolation::Proxy);
        assert_eq!(report.egress, Some(egress.clone()));
        // Without a network to join, the child gets a namespace of its own: no way out.
        assert!(sandbox.confine(None).unwrap().is_confined());

        let no_userns = SandboxSupport {
            user_namespaces: false,
            ..FULL
        };
        let fallback = Sandbox::check(family(None), &asking, &no_userns);
        let message = fallback.unavailable().unwrap_or_default();
        assert!(
            message.starts_with(
                "bash is unavailable: builtins.bash.sandbox.network = { allow, deny } needs a \
                 network namespace"
            ),
            "{message}"
        );
        assert!(fallback.confine(None).is_err());
        assert!(!fallback.joins_shared_network());
        // `true` keeps meaning the host's network there; `false` the seccomp filter.
        let open = Sandbox::check(
            family(None),
            &policy(SandboxMode::WorkspaceWrite, true),
            &no_userns,
        );
        assert_eq!(open.unavailable(), None);
        assert!(open.network());
        assert_eq!(open.report().network_isolation, NetworkIsolation::None);
        assert_eq!(open.report().egress, None);
        // `mode: "off"` drops the policy with the rest.
        asking.mode = SandboxMode::Off;
        let off = Sandbox::check(family(None), &asking, &FULL);
        assert_eq!(off.egress_policy(), None);
        assert!(off.network() && !off.joins_shared_network());
    }
}
