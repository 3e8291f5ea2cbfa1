//! Built-in policy configured by the host: Claude Code permission rules (with CC-name
//! translation), and the set of listeners one configuration installs (the permission gate,
//! and the metrics and retry wrappers of [`crate::pipeline::wrappers`]).

pub mod cc_names;
pub mod permissions;
pub mod shell;

pub use permissions::{
    Decision, PartDecision, PartKind, PermissionHook, Permissions, RuleError, RuleRef, RuleSource,
    Verdict,
};

use crate::pipeline::wrappers::{Metrics, MetricsWrapper, RetryWrapper};
use crate::pipeline::{ListenerId, ToolRuntime};
use dsh_tools_protocol::HostConfig;
use std::sync::Arc;

/// Where the permission gate stands among pre-execute listeners: right after `bash`'s
/// sandbox escalation (`i32::MIN`), so that an escalation's reason (the first one of an
/// `ask` is what the approver reads) says the command would run unsandboxed; before every
/// client hook.
pub const PERMISSIONS_ORDER: i32 = i32::MIN + 1;

/// The listeners one configuration installed; `replace` swaps them for a new configuration.
pub struct PolicySet {
    listeners: Vec<ListenerId>,
    /// The metrics table (kept across reconfiguration).
    pub metrics: Arc<Metrics>,
}

impl PolicySet {
    /// Installs the metrics wrapper (outermost after the timeout), and what `config` asks for.
    pub fn install(runtime: &ToolRuntime, config: &HostConfig) -> Result<Self, RuleError> {
        let mut set = PolicySet {
            listeners: Vec::new(),
            metrics: Arc::new(Metrics::default()),
        };
        set.replace(runtime, config)?;
        Ok(set)
    }

    /// Replaces the installed listeners with those `config` asks for.
    pub fn replace(&mut self, runtime: &ToolRuntime, config: &HostConfig) -> Result<(), RuleError> {
        let permissions = Permissions::compile(&config.permissions)?;
        for id in self.listeners.drain(..) {
            runtime.remove_listener(id);
        }
        // Order: timeout (i32::MIN) wraps metrics, which wraps retries, which wrap the body.
        let metrics = MetricsWrapper(self.metrics.clone());
        self.listeners
            .push(runtime.add_wrapper(i32::MIN + 1, None, Arc::new(metrics)));
        let retry = &config.pipeline.retry;
        if retry.max_attempts > 1 {
            let wrapper = RetryWrapper {
                max_attempts: retry.max_attempts,
                backoff_ms: retry.backoff_ms,
            };
            self.listeners
                .push(runtime.add_wrapper(i32::MIN + 2, None, Arc::new(wrapper)));
        }
        if !permissions.is_empty() {
            let hook = PermissionHook(Arc::new(permissions));
            self.listeners
                .push(runtime.add_pre_execute(PERMISSIONS_ORDER, None, Arc::new(hook)));
        }
        Ok(())
    }
}
