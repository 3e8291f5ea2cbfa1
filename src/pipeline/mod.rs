//! The execution pipeline and [`ToolRuntime`], the library entry point that owns the
//! registry, the listeners of every stage and the scheduling of overlapping calls.

mod dispatch;
mod execute;
pub mod hooks;
mod post_execute;
mod schedule;
mod sequencer;
mod spill;
pub mod wrappers;

pub use dispatch::Next;
pub use execute::render_default;
pub use schedule::{CallQueue, Ticket};
pub use wrappers::{TimeoutWrapper, timed_out};

use crate::json;
use crate::registry::{Deferral, Registry, RegistryError};
use crate::spill::SpillStore;
use crate::tool::{
    AgentId, Concurrency, InputSchema, ProgressSink, ToolDefinition, ToolExecutionInput,
    ToolExecutionResult,
};
use dsh_tools_protocol::{ExecutionMode, HostConfig, PresentationMode};
use futures::FutureExt;
use hooks::{
    Approver, ExecuteWrapper, GrantBook, Guard, HookSet, Listener, PostExecuteHook, PreExecuteHook,
    ResultObserver,
};
use parking_lot::RwLock;
use serde_json::Value;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// Identifies one registered listener (`remove_listener` disposes it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ListenerId(u64);

/// Listeners of every stage, copied on write.
#[derive(Default)]
pub(crate) struct Hooks {
    set: RwLock<Arc<HookSet>>,
    next: AtomicU64,
}

impl Hooks {
    pub fn snapshot(&self) -> Arc<HookSet> {
        self.set.read().clone()
    }

    fn update(&self, change: impl FnOnce(&mut HookSet)) {
        let mut guard = self.set.write();
        let mut next = HookSet::clone(&guard);
        change(&mut next);
        *guard = Arc::new(next);
    }

    fn add<T: ?Sized>(
        &self,
        order: i32,
        agent: Option<AgentId>,
        hook: Arc<T>,
        list: impl FnOnce(&mut HookSet) -> &mut Vec<Listener<T>>,
    ) -> ListenerId {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        self.update(|set| {
            let listeners = list(set);
            listeners.push(Listener {
                id,
                order,
                agent,
                hook,
            });
            // Stable: equal orders keep registration order.
            listeners.sort_by_key(|l| l.order);
        });
        ListenerId(id)
    }
}

/// Settings the pipeline reads per call.
#[derive(Clone, Debug)]
pub struct PipelineSettings {
    /// Bound on overlapping parallel calls (batches and Code Mode bindings).
    pub max_parallel: usize,
}

/// The tool registry plus its execution pipeline: what a Rust program embeds.
pub struct ToolRuntime {
    pub(crate) registry: Arc<Registry>,
    pub(crate) hooks: Hooks,
    settings: RwLock<PipelineSettings>,
    builtin_wrappers: RwLock<Vec<ListenerId>>,
    /// Spill files of large results (the built-in spill policy and `bash` write them).
    pub(crate) spill: Arc<SpillStore>,
    /// Where live output and progress of running calls go (set once, by the front end).
    progress: OnceLock<Arc<dyn ProgressSink>>,
    /// What else ends with an agent scope (its exec sessions, its network).
    scope_closers: RwLock<Vec<ScopeCloser>>,
}

/// Called with the scopes `agents/close` ended (the one named and its descendants).
pub type ScopeCloser = Arc<dyn Fn(&[AgentId]) + Send + Sync>;

impl ToolRuntime {
    /// A runtime configured by `config` (presentation, parallelism, timeout enforcement).
    pub fn new(config: &HostConfig) -> Arc<Self> {
        let runtime = Arc::new(ToolRuntime {
            registry: Arc::new(Registry::new(config.tools.mode)),
            hooks: Hooks::default(),
            settings: RwLock::new(PipelineSettings { max_parallel: 10 }),
            builtin_wrappers: RwLock::new(Vec::new()),
            spill: SpillStore::new(&config.spill),
            progress: OnceLock::new(),
            scope_closers: RwLock::new(Vec::new()),
        });
        runtime.configure(config);
        runtime
    }

    /// Applies `config` (replacing the built-in wrappers it controls).
    pub fn configure(&self, config: &HostConfig) {
        self.registry.set_default_mode(config.tools.mode);
        self.registry
            .set_semantic_search(config.tools.semantic_search);
        // `config::parse` checked the globs; a config built by hand that it did not check
        // defers nothing by glob rather than failing here.
        let tools = &config.tools;
        let auto = tools.auto_defer.map(|auto| crate::registry::AutoDefer {
            above_tokens: auto.above_tokens,
            servers: config.mcp_servers.keys().cloned().collect(),
        });
        if auto.is_some() {
            crate::tokens::warm_in_background();
        }
        match Deferral::new(&tools.deferred, &tools.always_loaded) {
            Ok(deferral) => self.registry.set_deferral(deferral.with_auto(auto)),
            Err(e) => tracing::warn!("tools.deferred / tools.alwaysLoaded ignored: {e}"),
        }
        self.settings.write().max_parallel = config.tools.max_parallel_sub_calls.max(1) as usize;
        self.spill.configure(&config.spill);
        let mut builtin = self.builtin_wrappers.write();
        for id in builtin.drain(..) {
            self.remove_listener(id);
        }
        if config.pipeline.timeout.enforce {
            let wrapper = TimeoutWrapper {
                default_ms: config.pipeline.timeout.default_ms,
            };
            builtin.push(self.add_wrapper(i32::MIN, None, Arc::new(wrapper)));
        }
    }

    /// The registry.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// Current settings.
    pub fn settings(&self) -> PipelineSettings {
        self.settings.read().clone()
    }

    /// Registers a definition globally (`agent: None`) or for one agent.
    pub fn register(
        &self,
        definition: ToolDefinition,
        agent: Option<AgentId>,
    ) -> Result<Arc<str>, RegistryError> {
        self.registry.register(definition, agent)
    }

    /// Adds a `tools/pre-execute` listener (lower `order` first).
    pub fn add_pre_execute(
        &self,
        order: i32,
        agent: Option<AgentId>,
        hook: Arc<dyn PreExecuteHook>,
    ) -> ListenerId {
        self.hooks.add(order, agent, hook, |set| &mut set.pre)
    }

    /// Adds a guard.
    pub fn add_guard(
        &self,
        order: i32,
        agent: Option<AgentId>,
        guard: Arc<dyn Guard>,
    ) -> ListenerId {
        self.hooks.add(order, agent, guard, |set| &mut set.guards)
    }

    /// Adds a `tools/post-execute` listener.
    pub fn add_post_execute(
        &self,
        order: i32,
        agent: Option<AgentId>,
        hook: Arc<dyn PostExecuteHook>,
    ) -> ListenerId {
        self.hooks.add(order, agent, hook, |set| &mut set.post)
    }

    /// Adds a `tools/execute` wrapper (lower `order` is outermost).
    pub fn add_wrapper(
        &self,
        order: i32,
        agent: Option<AgentId>,
        wrapper: Arc<dyn ExecuteWrapper>,
    ) -> ListenerId {
        self.hooks
            .add(order, agent, wrapper, |set| &mut set.wrappers)
    }

    /// Adds a result observer (`tools/result`).
    /// Sends live output and progress of every call from now on to `sink`. Set once: a
    /// second sink is refused (returned).
    pub fn set_progress_sink(
        &self,
        sink: Arc<dyn ProgressSink>,
    ) -> Result<(), Arc<dyn ProgressSink>> {
        self.progress.set(sink)
    }

    pub fn add_observer(
        &self,
        agent: Option<AgentId>,
        observer: Arc<dyn ResultObserver>,
    ) -> ListenerId {
        self.hooks.add(0, agent, observer, |set| &mut set.observers)
    }

    /// Sets (or clears) the approver that services `ask`.
    pub fn set_approver(&self, approver: Option<Arc<dyn Approver>>) {
        self.hooks.update(|set| set.approver = approver);
    }

    /// Sets (or clears) the book of grants that answers `ask` before the approver is asked.
    pub fn set_grants(&self, grants: Option<Arc<dyn GrantBook>>) {
        self.hooks.update(|set| set.grants = grants);
    }

    /// The pre-execute listeners and guards `agent`'s calls are put to, in order:
    /// (event, listener name, order), for `permissions/explain`.
    pub fn listeners_for(&self, agent: Option<&AgentId>) -> Vec<(&'static str, String, i32)> {
        let set = self.hooks.snapshot();
        let applies = |listener_agent: &Option<AgentId>| {
            listener_agent.is_none() || listener_agent.as_ref() == agent
        };
        let pre = set
            .pre
            .iter()
            .filter(|l| applies(&l.agent))
            .map(|l| ("tools/pre-execute", l.hook.name().to_owned(), l.order));
        let guards = set
            .guards
            .iter()
            .filter(|l| applies(&l.agent))
            .map(|l| ("tools/guard", l.hook.name().to_owned(), l.order));
        pre.chain(guards).collect()
    }

    /// Whether an `ask` reaches an approver.
    pub fn has_approver(&self) -> bool {
        self.hooks.snapshot().approver.is_some()
    }

    /// Removes one listener; `false` when it was not registered.
    pub fn remove_listener(&self, id: ListenerId) -> bool {
        let mut removed = false;
        self.hooks.update(|set| removed = set.remove(id.0));
        removed
    }

    /// Closes an agent scope: its registrations, its listeners and whatever was tied to
    /// it by [`on_scopes_closed`](Self::on_scopes_closed).
    pub fn close_agent(&self, agent: &str) -> Result<(), RegistryError> {
        let closed = self.registry.close_agent(agent)?;
        self.hooks.update(|set| set.remove_agents(&closed));
        let closers = self.scope_closers.read().clone();
        for closer in closers {
            closer(&closed);
        }
        Ok(())
    }

    /// Ties `closer` to every `agents/close`.
    pub fn on_scopes_closed(&self, closer: ScopeCloser) {
        self.scope_closers.write().push(closer);
    }

    /// `parallel` only when the visible definition classifies these arguments exactly `true`;
    /// unknown, hidden, invalid or unclassifiable calls are exclusive, and so is every name
    /// but the Code Mode entry under an effective `code` presentation, whose direct calls only fail.
    pub async fn execution_mode(
        &self,
        name: &str,
        arguments: &Value,
        agent: Option<&AgentId>,
    ) -> ExecutionMode {
        self.classify(name, arguments, agent, false).await
    }

    /// [`execution_mode`](Self::execution_mode) for a call that is `nested` (a Code Mode
    /// sub-call, exempt from the `code` collapse like its execution is) or model-direct.
    pub(crate) async fn classify(
        &self,
        name: &str,
        arguments: &Value,
        agent: Option<&AgentId>,
        nested: bool,
    ) -> ExecutionMode {
        let Some(tool) = self.registry.resolve(name, agent) else {
            return ExecutionMode::Exclusive;
        };
        if !nested
            && !tool.definition.role.is_code_entry()
            && self.registry.mode(agent) == PresentationMode::Code
        {
            return ExecutionMode::Exclusive;
        }
        // The classifier sees what the call will run with: the canonical snapshot. Lossy
        // arguments make the call INVALID_ARGS, so it is exclusive like any invalid call.
        let mut snapshot = json::deep_clone(arguments);
        let lossless = json::canonicalize(&mut snapshot, "arguments").is_ok();
        let definition = &tool.definition;
        let valid = match &definition.input {
            InputSchema::Validated { validator, .. } => validator.is_valid(&snapshot),
            InputSchema::Raw(_) => true,
        };
        let parallel = lossless
            && valid
            && match &definition.concurrency {
                Concurrency::Exclusive => false,
                Concurrency::Parallel => true,
                Concurrency::Classified(classifier) => {
                    let classify =
                        async { classifier.classify(&tool.registration, &snapshot).await };
                    // A throwing classification is exclusive.
                    AssertUnwindSafe(classify)
                        .catch_unwind()
                        .await
                        .unwrap_or(false)
                }
            };
        json::drop_deep(snapshot);
        if parallel {
            ExecutionMode::Parallel
        } else {
            ExecutionMode::Exclusive
        }
    }

    /// Runs calls like the agent loop: parallel runs overlap in a bounded rolling pool,
    /// exclusive calls are barriers, and results come back in call order.
    pub async fn execute_batch(
        self: &Arc<Self>,
        calls: Vec<ToolExecutionInput>,
        max_parallel: Option<usize>,
    ) -> Vec<ToolExecutionResult> {
        let bound = max_parallel.unwrap_or_else(|| self.settings().max_parallel);
        let queue = CallQueue::new(self.clone(), bound, true);
        let runs = calls.into_iter().map(|call| {
            let ticket = queue.ticket();
            let queue = queue.clone();
            async move { queue.run(ticket, call, false, || {}).await }
        });
        futures::future::join_all(runs)
            .await
            .into_iter()
            .flatten()
            .collect()
    }
}
