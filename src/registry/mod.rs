//! The tool registry: layers (global ▸ agent ▸ child agent), reservations, restrictions,
//! presentation, and resolution as one scope sees it.
//!
//! Visibility rules (seed README, Public API; the reference's scoped tests):
//! - a scope inherits every ancestor's tools: the nearest ancestor shadows farther ones, the
//!   global layer is farthest, and the scope's own registrations shadow everything inherited;
//! - an inherited tool is visible when every restriction on the scope's chain admits its name
//!   (allow: listed; deny: not listed) — masks intersect down the chain, never up it, and
//!   never filter the scope's own registrations;
//! - the presentation (`presentAs`) is inherited the same way: the nearest on the chain wins;
//! - restrictions are visibility, not authority: a host that must forbid a call uses policy;
//! - deferral (`deferral`) changes only how a visible tool is presented: a deferred tool stays
//!   visible and callable under every rule above, and the discovery host tool loads it per scope;
//! - host tools (installed by the layer that defines them, with a host role, `crate::tool::ToolRole::Host`)
//!   are reserved names, present in a scope as their role's presence says.

mod auto_defer;
mod deferral;
mod error;
mod layers;

pub use auto_defer::AutoDefer;
pub use deferral::{Deferral, Presented, ScopeView};
pub use error::RegistryError;
pub use layers::Restriction;

use crate::tool::{AgentId, Presence, ToolDefinition};
use dsh_tools_protocol::{CodeLanguage, PresentationMode};
use layers::{Scope, State};
use parking_lot::{Mutex, RwLock, RwLockWriteGuard};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A tool as registered: its definition plus where it lives.
#[derive(Debug)]
pub struct RegisteredTool {
    /// The registration id (`tools/unregister` disposes it).
    pub registration: Arc<str>,
    /// Its layer (`None` = global).
    pub scope: Option<AgentId>,
    /// The definition.
    pub definition: ToolDefinition,
    /// Its prompt tokens, counted on first need (`prompt_tokens`).
    tokens: std::sync::OnceLock<u64>,
}

/// Receives the scope whose view changed (`None` = the global layer, so every scope).
pub type ChangeListener = Arc<dyn Fn(Option<AgentId>) + Send + Sync>;

/// The registry. Cheap reads (one read lock per lookup); writes notify listeners once.
pub struct Registry {
    state: RwLock<State>,
    listeners: Mutex<Vec<ChangeListener>>,
    /// Each open scope's view at the generation it was built for.
    views: Mutex<HashMap<Scope, Arc<ScopeView>>>,
    /// Each scope's loaded deferred tools, in the order found (not part of the generation:
    /// loading changes the prompt, never the catalog a search ranks).
    loaded: Mutex<HashMap<Scope, Vec<Arc<str>>>>,
    /// `tools.semanticSearch`: whether tool search fuses the semantic rankings into BM25's.
    semantic_search: AtomicBool,
}

impl Default for Registry {
    fn default() -> Self {
        Registry::new(PresentationMode::Native)
    }
}

impl Registry {
    /// An empty registry whose default presentation is `mode`.
    pub fn new(mode: PresentationMode) -> Self {
        Registry {
            state: RwLock::new(State::new(mode)),
            listeners: Mutex::new(Vec::new()),
            views: Mutex::new(HashMap::new()),
            loaded: Mutex::new(HashMap::new()),
            semantic_search: AtomicBool::new(true),
        }
    }

    /// Sets `tools.semanticSearch` (read by each search; not a change any scope sees).
    pub fn set_semantic_search(&self, on: bool) {
        self.semantic_search.store(on, Ordering::Relaxed);
    }

    /// Whether tool search fuses the semantic rankings into BM25's (`tools.semanticSearch`).
    pub fn semantic_search(&self) -> bool {
        self.semantic_search.load(Ordering::Relaxed)
    }

    /// The state for a change of the catalog: every cached view is stale from now on.
    fn write(&self) -> RwLockWriteGuard<'_, State> {
        let mut state = self.state.write();
        state.generation += 1;
        state
    }

    /// Calls `listener` after every change that alters what some scope sees.
    pub fn on_change(&self, listener: ChangeListener) {
        self.listeners.lock().push(listener);
    }

    /// Sets the process-wide presentation (`tools.mode`).
    pub fn set_default_mode(&self, mode: PresentationMode) {
        let changed = {
            let mut state = self.write();
            std::mem::replace(&mut state.default_mode, mode) != mode
        };
        if changed {
            self.notify(None);
        }
    }

    /// Installs a host tool: a definition whose role is [`ToolRole::Host`] (its name is
    /// reserved from now on; its presence decides which scopes see it).
    pub fn install_host_tool(&self, definition: ToolDefinition) -> Result<(), RegistryError> {
        if !definition.role.is_reserved() {
            return Err(RegistryError::NotAHostTool(definition.name.to_string()));
        }
        let name = definition.name.clone();
        let tool = RegisteredTool {
            registration: Arc::from(format!("builtin:{name}")),
            scope: None,
            definition,
            tokens: std::sync::OnceLock::new(),
        };
        self.write().host_tools.insert(name, Arc::new(tool));
        self.notify(None);
        Ok(())
    }

    /// The host tool `name`, whether or not a scope sees it now.
    pub fn host_tool(&self, name: &str) -> Option<Arc<RegisteredTool>> {
        self.state.read().host_tools.get(name).cloned()
    }

    /// The Code Mode entry as `scope` sees it (present under a `code` or `both` presentation).
    pub fn code_entry(&self, scope: Option<&AgentId>) -> Option<Arc<RegisteredTool>> {
        let entry = self
            .state
            .read()
            .host_tools
            .values()
            .find(|t| t.definition.role.is_code_entry())
            .cloned()?;
        self.present(entry, scope)
    }

    /// The host tools that are Code Mode bindings and present in `scope` now.
    pub fn host_bindings(&self, scope: Option<&AgentId>) -> Vec<Arc<RegisteredTool>> {
        let hosts: Vec<Arc<RegisteredTool>> = self
            .state
            .read()
            .host_tools
            .values()
            .filter(|t| t.definition.role.is_binding())
            .cloned()
            .collect();
        let mut present: Vec<_> = hosts
            .into_iter()
            .filter_map(|tool| self.present(tool, scope))
            .collect();
        present.sort_by(|a, b| a.definition.name.cmp(&b.definition.name));
        present
    }

    /// `tool` if `scope` sees it now, as its role's presence says.
    fn present(
        &self,
        tool: Arc<RegisteredTool>,
        scope: Option<&AgentId>,
    ) -> Option<Arc<RegisteredTool>> {
        let present = match tool.definition.role.host().map(|h| h.presence) {
            None => true,
            Some(Presence::CodePresentation) => self.mode(scope) != PresentationMode::Native,
            Some(Presence::WhileDeferred) => self.view(scope).has_deferred(),
        };
        present.then_some(tool)
    }

    /// Registers a definition in `scope`'s layer.
    pub fn register(
        &self,
        definition: ToolDefinition,
        scope: Option<AgentId>,
    ) -> Result<Arc<str>, RegistryError> {
        if definition.name.is_empty() {
            return Err(RegistryError::EmptyName);
        }
        let id = {
            let mut state = self.write();
            state.refuse_reserved(&definition.name)?;
            let id = state.next_id("tool");
            let layer = state.layer_mut(&scope)?;
            if layer.tools.contains_key(&definition.name) {
                return Err(RegistryError::DuplicateTool(definition.name.to_string()));
            }
            let name = definition.name.clone();
            let tool = RegisteredTool {
                registration: id.clone(),
                scope: scope.clone(),
                definition,
                tokens: std::sync::OnceLock::new(),
            };
            layer.tools.insert(name.clone(), Arc::new(tool));
            state.record(id.clone(), scope.clone(), layers::Kind::Tool(name));
            id
        };
        self.notify(scope);
        Ok(id)
    }

    /// Puts `name` in the known, restrictable universe of `scope` without a visible schema.
    pub fn reserve(&self, name: &str, scope: Option<AgentId>) -> Result<Arc<str>, RegistryError> {
        if name.is_empty() {
            return Err(RegistryError::EmptyName);
        }
        let mut state = self.write();
        state.refuse_reserved(name)?;
        let id = state.next_id("reserve");
        let name: Arc<str> = Arc::from(name);
        *state
            .layer_mut(&scope)?
            .reserved
            .entry(name.clone())
            .or_insert(0) += 1;
        state.record(id.clone(), scope, layers::Kind::Reservation(name));
        Ok(id)
    }

    /// Applies an allow or deny mask over what `agent` inherits (snapshotted now); it reaches
    /// every descendant of `agent`, never its parent, and never `agent`'s own tools.
    pub fn restrict(
        &self,
        agent: Option<AgentId>,
        restriction: Restriction,
    ) -> Result<Arc<str>, RegistryError> {
        let agent = agent.ok_or(RegistryError::NeedsAgent("restrict"))?;
        let scope = Some(agent.clone());
        let id = {
            let mut state = self.write();
            state.validate_restriction(&agent, &restriction)?;
            let id = state.next_id("restrict");
            state
                .layer_mut(&scope)?
                .restrictions
                .push((id.clone(), Arc::new(restriction)));
            state.record(id.clone(), scope.clone(), layers::Kind::Restriction);
            id
        };
        self.notify(scope);
        Ok(id)
    }

    /// Selects `agent`'s presentation, shadowing `tools.mode` for that agent alone.
    pub fn present_as(
        &self,
        agent: Option<AgentId>,
        mode: PresentationMode,
    ) -> Result<Arc<str>, RegistryError> {
        self.present_as_in(agent, mode, None)
    }

    /// [`present_as`](Self::present_as) with the agent's Code Mode language (`None`: the
    /// configured default).
    pub fn present_as_in(
        &self,
        agent: Option<AgentId>,
        mode: PresentationMode,
        language: Option<CodeLanguage>,
    ) -> Result<Arc<str>, RegistryError> {
        let agent = agent.ok_or(RegistryError::NeedsAgent("presentAs"))?;
        let scope = Some(agent.clone());
        let id = {
            let mut state = self.write();
            let id = state.next_id("present");
            let layer = state.layer_mut(&scope)?;
            if layer.presentation.is_some() {
                return Err(RegistryError::PresentationDeclared(agent.to_string()));
            }
            layer.presentation = Some((id.clone(), mode, language));
            state.record(id.clone(), scope.clone(), layers::Kind::Presentation);
            id
        };
        self.notify(scope);
        Ok(id)
    }

    /// Disposes exactly one registration (tool, reservation, restriction or presentation).
    pub fn unregister(&self, registration: &str) -> Result<(), RegistryError> {
        let (scope, visible) = self.write().dispose(registration)?;
        if visible {
            self.notify(scope);
        }
        Ok(())
    }

    /// Opens an agent scope under `parent` (or under the global scope).
    pub fn open_agent(&self, agent: AgentId, parent: Option<AgentId>) -> Result<(), RegistryError> {
        self.write().open_agent(agent.clone(), parent)?;
        self.notify(Some(agent));
        Ok(())
    }

    /// Closes an agent scope and its children, disposing everything registered in them.
    pub fn close_agent(&self, agent: &str) -> Result<Vec<AgentId>, RegistryError> {
        let closed = {
            let mut state = self.write();
            let closed = state.close_agent(agent)?;
            // Under the state lock, so no load can land in a scope that is gone.
            self.forget(&closed);
            closed
        };
        for scope in &closed {
            self.notify(Some(scope.clone()));
        }
        Ok(closed)
    }

    /// Whether `agent` is open.
    pub fn has_agent(&self, agent: &str) -> bool {
        self.state
            .read()
            .layers
            .contains_key(&Some(Arc::from(agent)))
    }

    /// The tool `name` resolves to in `scope` (shadowing and restrictions applied; a host
    /// tool while its presence holds).
    pub fn resolve(&self, name: &str, scope: Option<&AgentId>) -> Option<Arc<RegisteredTool>> {
        // One read for the common case, an ordinary tool; a host tool's presence may need the
        // scope's view, which reads the state again.
        let state = self.state.read();
        match state.host_tools.get(name).cloned() {
            Some(host) => {
                drop(state);
                self.present(host, scope)
            }
            None => state.resolve(name, scope),
        }
    }

    /// The effective presentation of `scope`: the nearest `presentAs` on its chain (its own,
    /// else its parent's, and so on), else the config mode.
    pub fn mode(&self, scope: Option<&AgentId>) -> PresentationMode {
        self.state.read().mode(scope)
    }

    /// The Code Mode language of the nearest `presentAs` on `scope`'s chain, if it chose one.
    pub fn language(&self, scope: Option<&AgentId>) -> Option<CodeLanguage> {
        self.state.read().language(scope)
    }

    /// Every tool `scope` sees, lexicographic by name (host tools excluded: the catalog is
    /// unchanged by presentation).
    pub fn visible(&self, scope: Option<&AgentId>) -> Vec<Arc<RegisteredTool>> {
        self.state.read().visible(scope)
    }

    /// Whether the inherited capability `name` passes every restriction on `scope`'s chain,
    /// independent of whether it is registered yet.
    pub fn is_admitted(&self, name: &str, scope: Option<&AgentId>) -> bool {
        self.state.read().is_admitted(name, scope)
    }

    /// Names a scope knows, inherited or its own, registered or reserved (for validation by
    /// callers such as `toolOrder`).
    pub fn known_names(&self, scope: Option<&AgentId>) -> HashSet<Arc<str>> {
        self.state.read().known_names(scope)
    }

    fn notify(&self, scope: Scope) {
        let listeners = self.listeners.lock().clone();
        for listener in listeners {
            listener(scope.clone());
        }
    }
}
