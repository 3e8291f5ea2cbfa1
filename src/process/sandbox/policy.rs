//! A family's sandbox policy: the config resolved field by field (the family's override,
//! then the top-level `sandbox`, then the defaults), before anything meets the kernel.

use dsh_tools_protocol::{NetworkPolicy, NetworkSetting, SandboxConfig, SandboxMode};
use std::path::{Path, PathBuf};

/// What `denyRead` always holds, under the host's `HOME`: keys and tokens of the usual
/// tools. A user's list adds to it; nothing removes an entry.
pub const DEFAULT_DENY_READ: [&str; 12] = [
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".config/gh",
];

/// What one tool family asks of the sandbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SandboxPolicy {
    /// What may be written.
    pub mode: SandboxMode,
    /// Whether the host's network is reachable (`network: true`).
    pub network: bool,
    /// `writableRoots` as configured (checked when the family starts).
    pub writable_roots: Vec<String>,
    /// `readOnlyRoots` as configured.
    pub read_only_roots: Vec<String>,
    /// Absolute paths masked from reads: the defaults under `HOME`, then the top-level
    /// `denyRead`, then the family's (not resolved: they may not exist yet).
    pub deny_read: Vec<PathBuf>,
    /// `allowUnixSockets` as configured, made absolute (checked when the family starts).
    pub allow_unix_sockets: Vec<PathBuf>,
    /// `network: { allow, deny }`: only what it admits, through the host's proxy (then
    /// `network` is false).
    pub egress: Option<NetworkPolicy>,
    /// Files kept read-only even inside a writable root (the permission rules' files; the
    /// top-level list, which a family cannot change).
    pub protected: Vec<PathBuf>,
}

impl SandboxPolicy {
    /// `family` over `global` over the defaults (`workspace-write`, no network, no roots).
    pub fn resolve(global: &SandboxConfig, family: Option<&SandboxConfig>) -> Self {
        // Whole, not merged: a family's `network` replaces the top-level one.
        let network = family
            .and_then(|c| c.network.as_ref())
            .or(global.network.as_ref());
        SandboxPolicy {
            mode: family
                .and_then(|c| c.mode)
                .or(global.mode)
                .unwrap_or_default(),
            network: matches!(network, Some(NetworkSetting::Bool(true))),
            writable_roots: family
                .and_then(|c| c.writable_roots.clone())
                .or_else(|| global.writable_roots.clone())
                .unwrap_or_default(),
            read_only_roots: family
                .and_then(|c| c.read_only_roots.clone())
                .or_else(|| global.read_only_roots.clone())
                .unwrap_or_default(),
            deny_read: deny_read(global, family),
            allow_unix_sockets: family
                .and_then(|c| c.allow_unix_sockets.as_ref())
                .or(global.allow_unix_sockets.as_ref())
                .into_iter()
                .flatten()
                .map(|socket| absolute(socket, home().as_deref()))
                .collect(),
            egress: network.and_then(NetworkSetting::policy).cloned(),
            protected: global.protected.iter().map(PathBuf::from).collect(),
        }
    }

    /// No sandbox at all (an MCP server without a `sandbox` of its own).
    pub fn off() -> Self {
        SandboxPolicy {
            mode: SandboxMode::Off,
            network: true,
            writable_roots: Vec::new(),
            read_only_roots: Vec::new(),
            deny_read: Vec::new(),
            allow_unix_sockets: Vec::new(),
            egress: None,
            protected: Vec::new(),
        }
    }
}

/// The host's `HOME`, when set to an absolute path.
fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|home| home.is_absolute())
}

/// The defaults, the top-level list and the family's, in that order, without repeats.
fn deny_read(global: &SandboxConfig, family: Option<&SandboxConfig>) -> Vec<PathBuf> {
    let home = home();
    let defaults = home
        .iter()
        .flat_map(|home| DEFAULT_DENY_READ.iter().map(|entry| home.join(entry)));
    let configured = [Some(global), family]
        .into_iter()
        .flatten()
        .filter_map(|config| config.deny_read.as_ref())
        .flatten()
        .map(|path| absolute(path, home.as_deref()));
    let mut paths: Vec<PathBuf> = Vec::new();
    for path in defaults.chain(configured) {
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
    paths
}

/// `path` with a leading `~/` taken from `home` and made absolute against the host's
/// working directory (not resolved).
fn absolute(path: &str, home: Option<&Path>) -> PathBuf {
    let expanded = match (path.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(path),
    };
    std::path::absolute(&expanded).unwrap_or(expanded)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_family_wins_field_by_field_over_the_top_level_and_the_defaults() {
        let global = SandboxConfig {
            network: Some(NetworkSetting::Bool(true)),
            writable_roots: Some(vec!["/a".into()]),
            ..SandboxConfig::default()
        };
        let family = SandboxConfig {
            mode: Some(SandboxMode::ReadOnly),
            ..SandboxConfig::default()
        };
        assert_eq!(
            SandboxPolicy::resolve(&global, Some(&family)),
            SandboxPolicy {
                mode: SandboxMode::ReadOnly,
                network: true,
                writable_roots: vec!["/a".into()],
                read_only_roots: vec![],
                deny_read: deny_read(&global, Some(&family)),
                allow_unix_sockets: vec![],
                egress: None,
                protected: vec![],
            }
        );
        let defaults = SandboxPolicy::resolve(&SandboxConfig::default(), None);
        assert_eq!(defaults.mode, SandboxMode::WorkspaceWrite);
        assert!(!defaults.network);
    }

    #[test]
    fn a_familys_network_replaces_the_top_level_one_whole() {
        let policy = |allow: &[&str], deny: &[&str]| NetworkPolicy {
            allow: allow.iter().map(|s| (*s).to_owned()).collect(),
            deny: deny.iter().map(|s| (*s).to_owned()).collect(),
        };
        let network = |setting: NetworkSetting| SandboxConfig {
            network: Some(setting),
            ..SandboxConfig::default()
        };
        let global = network(NetworkSetting::Policy(policy(&["@npm"], &["evil.example"])));
        // Inherited as is.
        let inherited = SandboxPolicy::resolve(&global, Some(&SandboxConfig::default()));
        assert!(!inherited.network);
        assert_eq!(inherited.egress, Some(policy(&["@npm"], &["evil.example"])));
        // A family's policy replaces it whole (its empty `deny` does not keep the top's).
        let own = network(NetworkSetting::Policy(policy(&["github.com"], &[])));
        let replaced = SandboxPolicy::resolve(&global, Some(&own));
        assert_eq!(replaced.egress, Some(policy(&["github.com"], &[])));
        // `true` and `false` override a policy, and a policy overrides `true`.
        for (setting, network, egress) in [(true, true, None), (false, false, None)] {
            let resolved = SandboxPolicy::resolve(&global, Some(&network_bool(setting)));
            assert_eq!((resolved.network, resolved.egress), (network, egress));
        }
        let open = network_bool(true);
        let filtered = SandboxPolicy::resolve(&open, Some(&own));
        assert!(!filtered.network);
        assert_eq!(filtered.egress, Some(policy(&["github.com"], &[])));
    }

    fn network_bool(on: bool) -> SandboxConfig {
        SandboxConfig {
            network: Some(NetworkSetting::Bool(on)),
            ..SandboxConfig::default()
        }
    }

    #[test]
    fn deny_read_adds_the_lists_to_the_defaults_under_home() {
        let home = home().unwrap();
        let global = SandboxConfig {
            deny_read: Some(vec!["~/secret".into(), "/etc/shadow".into()]),
            allow_unix_sockets: Some(vec!["/run/a.sock".into()]),
            ..SandboxConfig::default()
        };
        let family = SandboxConfig {
            deny_read: Some(vec!["/srv/keys".into(), "/etc/shadow".into()]),
            ..SandboxConfig::default()
        };
        let policy = SandboxPolicy::resolve(&global, Some(&family));
        let mut expected: Vec<PathBuf> = DEFAULT_DENY_READ.iter().map(|e| home.join(e)).collect();
        expected.extend([
            home.join("secret"),
            PathBuf::from("/etc/shadow"),
            PathBuf::from("/srv/keys"),
        ]);
        assert_eq!(policy.deny_read, expected);
        assert_eq!(
            policy.allow_unix_sockets,
            vec![PathBuf::from("/run/a.sock")]
        );
        let own = SandboxConfig {
            allow_unix_sockets: Some(vec![]),
            ..SandboxConfig::default()
        };
        let cleared = SandboxPolicy::resolve(&global, Some(&own));
        assert!(cleared.allow_unix_sockets.is_empty());
    }
}
