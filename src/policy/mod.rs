//! Built-in policy configured by the host: Claude Code permission rules (with CC-name
//! translation), and the set of listeners one configuration installs (the permission gate,
//! and the metrics and retry wrappers of [`crate::pipeline::wrappers`]).

pub mod book;
pub mod cc_names;
pub mod gate;
pub mod permissions;
pub mod settings_file;
pub mod shell;

pub use book::{Book, BookError};
pub use gate::PermissionGate;
pub use permissions::{
    Decision, PartDecision, PartKind, Permissions, RuleError, RuleRef, RuleSource, Verdict,
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

/// The files the permission rules come from and go to (`persistTo`, a `--config` file a
/// list was read from), which no sandboxed command may change. `persistTo` is made (an
/// empty settings file) when it does not exist yet, so the sandbox can keep it read-only
/// from the first spawn on.
pub fn protected_files(config: &dsh_tools_protocol::PermissionsConfig) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    if let Some(path) = &config.persist_to {
        let path = std::path::Path::new(path);
        if !path.exists()
            && let Err(error) = settings_file::create_empty(path)
        {
            tracing::warn!("permissions.persistTo {}: {error}", path.display());
        }
        files.push(path.display().to_string());
    }
    let origins = &config.origins;
    for origin in [&origins.allow, &origins.ask, &origins.deny]
        .into_iter()
        .flatten()
    {
        if std::path::Path::new(origin).is_file() && !files.contains(origin) {
            files.push(origin.clone());
        }
    }
    files
}

/// The listeners one configuration installed; `replace` swaps them for a new configuration.
pub struct PolicySet {
    listeners: Vec<ListenerId>,
    /// The metrics table (kept across reconfiguration).
    pub metrics: Arc<Metrics>,
    /// The permission rules and the users' grants (grants are kept across reconfiguration).
    pub book: Arc<Book>,
}

impl PolicySet {
    /// Installs the metrics wrapper (outermost after the timeout), and what `config` asks for.
    pub fn install(runtime: &ToolRuntime, config: &HostConfig) -> Result<Self, BookError> {
        let mut set = PolicySet {
            listeners: Vec::new(),
            metrics: Arc::new(Metrics::default()),
            book: Arc::new(Book::new(&config.permissions)?),
        };
        set.replace(runtime, config)?;
        runtime.set_grants(Some(set.book.clone()));
        Ok(set)
    }

    /// Replaces the installed listeners with those `config` asks for.
    pub fn replace(&mut self, runtime: &ToolRuntime, config: &HostConfig) -> Result<(), BookError> {
        self.book.configure(&config.permissions)?;
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
        if !self.book.is_empty() {
            let gate = PermissionGate(self.book.clone());
            self.listeners
                .push(runtime.add_pre_execute(PERMISSIONS_ORDER, None, Arc::new(gate)));
        }
        Ok(())
    }
}
