//! A family's sandbox policy: the config resolved field by field (the family's override,
//! then the top-level `sandbox`, then the defaults), before anything meets the kernel.

use dsh_tools_protocol::{SandboxConfig, SandboxMode};

/// What one tool family asks of the sandbox.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SandboxPolicy {
    /// What may be written.
    pub mode: SandboxMode,
    /// Whether the network is reachable.
    pub network: bool,
    /// `writableRoots` as configured (checked when the family starts).
    pub writable_roots: Vec<String>,
    /// `readOnlyRoots` as configured.
    pub read_only_roots: Vec<String>,
}

impl SandboxPolicy {
    /// `family` over `global` over the defaults (`workspace-write`, no network, no roots).
    pub fn resolve(global: &SandboxConfig, family: Option<&SandboxConfig>) -> Self {
        SandboxPolicy {
            mode: family
                .and_then(|c| c.mode)
                .or(global.mode)
                .unwrap_or_default(),
            network: family
                .and_then(|c| c.network)
                .or(global.network)
                .unwrap_or(false),
            writable_roots: family
                .and_then(|c| c.writable_roots.clone())
                .or_else(|| global.writable_roots.clone())
                .unwrap_or_default(),
            read_only_roots: family
                .and_then(|c| c.read_only_roots.clone())
                .or_else(|| global.read_only_roots.clone())
                .unwrap_or_default(),
        }
    }

    /// No sandbox at all (an MCP server without a `sandbox` of its own).
    pub fn off() -> Self {
        SandboxPolicy {
            mode: SandboxMode::Off,
            network: true,
            writable_roots: Vec::new(),
            read_only_roots: Vec::new(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_family_wins_field_by_field_over_the_top_level_and_the_defaults() {
        let global = SandboxConfig {
            network: Some(true),
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
            }
        );
        let defaults = SandboxPolicy::resolve(&SandboxConfig::default(), None);
        assert_eq!(defaults.mode, SandboxMode::WorkspaceWrite);
        assert!(!defaults.network);
    }
}
