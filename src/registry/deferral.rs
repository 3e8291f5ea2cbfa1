//! Deferred tools: which visible tools keep their descriptions out of the prompt, which of
//! them each scope has loaded, and the per-scope view that prompt assembly, the SDK, the
//! MCP listing and `search_tools` read (built once per registry generation).
//!
//! A tool is deferred when its definition says so (`ToolSpec.deferred`, an MCP server's
//! `deferTools`) or its name matches `tools.deferred`, unless its name matches
//! `tools.alwaysLoaded`. Deferral is decided per visible tool of a scope, after shadowing
//! and restrictions, so a scope's deferred tools are exactly the deferred ones it sees.
//! `tools.autoDefer` (`auto_defer`) then defers whole MCP servers of the view past a token
//! budget, as part of building it.
//! Loading is per scope (never inherited), kept apart from the catalog (a load does not
//! invalidate a view), and ends with the scope (`agents/close`).

use super::{AutoDefer, RegisteredTool, Registry, Scope, State};
use crate::tool::{AgentId, Presence, ToolDefinition};
use dsh_tools_protocol::AutoDeferral;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use std::sync::Arc;

/// `tools.deferred` and `tools.alwaysLoaded`, compiled.
#[derive(Clone, Debug, Default)]
pub struct Deferral {
    /// The patterns as configured (what a reconfiguration compares).
    patterns: (Vec<String>, Vec<String>),
    deferred: GlobSet,
    always_loaded: GlobSet,
    /// `tools.autoDefer` with the configured MCP servers.
    auto: Option<AutoDefer>,
}

impl Deferral {
    /// Compiles the two glob lists (`*`, `?`, `[...]`, `{a,b}`; `*` also matches `/`).
    pub fn new(deferred: &[String], always_loaded: &[String]) -> Result<Self, globset::Error> {
        Ok(Deferral {
            patterns: (deferred.to_vec(), always_loaded.to_vec()),
            deferred: globs(deferred)?,
            always_loaded: globs(always_loaded)?,
            auto: None,
        })
    }

    /// With automatic deferral of whole MCP servers past a token budget.
    pub fn with_auto(mut self, auto: Option<AutoDefer>) -> Self {
        self.auto = auto;
        self
    }

    /// Whether `tools.alwaysLoaded` pins `name`.
    fn pinned(&self, name: &str) -> bool {
        self.always_loaded.is_match(name)
    }

    /// Whether `definition` keeps its description out of the prompt.
    pub fn defers(&self, definition: &ToolDefinition) -> bool {
        let name: &str = &definition.name;
        !self.always_loaded.is_match(name) && (definition.deferred || self.deferred.is_match(name))
    }
}

fn globs(patterns: &[String]) -> Result<GlobSet, globset::Error> {
    let mut set = GlobSetBuilder::new();
    for pattern in patterns {
        set.add(GlobBuilder::new(pattern).backslash_escape(true).build()?);
    }
    set.build()
}

/// What one scope sees, with each tool's deferral: the input of every presentation.
#[derive(Debug)]
pub struct ScopeView {
    generation: u64,
    /// Every visible tool, lexicographic by name (the order of `Registry::visible`).
    tools: Vec<Arc<RegisteredTool>>,
    deferred: Vec<bool>,
    /// What automatic deferral did (when configured).
    auto: Option<AutoDeferral>,
}

impl ScopeView {
    fn build(state: &State, scope: Option<&AgentId>) -> ScopeView {
        let tools = state.visible(scope);
        let mut deferred: Vec<bool> = tools
            .iter()
            .map(|tool| state.deferral.defers(&tool.definition))
            .collect();
        let deferral = &state.deferral;
        let auto = deferral.auto.as_ref().map(|auto| {
            auto.apply(&tools, &mut deferred, |tool| {
                deferral.pinned(&tool.definition.name)
            })
        });
        ScopeView {
            generation: state.generation,
            tools,
            deferred,
            auto,
        }
    }

    /// What automatic deferral did in this scope (when `tools.autoDefer` is set).
    pub fn auto_deferred(&self) -> Option<&AutoDeferral> {
        self.auto.as_ref()
    }

    /// The registry generation this view was built at (a newer one means it changed).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Every visible tool, lexicographic.
    pub fn tools(&self) -> &[Arc<RegisteredTool>] {
        &self.tools
    }

    /// Whether the visible tool at `index` is deferred.
    pub fn is_deferred(&self, index: usize) -> bool {
        self.deferred.get(index).copied().unwrap_or(false)
    }

    /// The deferred visible tools, lexicographic.
    pub fn deferred(&self) -> impl Iterator<Item = &Arc<RegisteredTool>> {
        self.tools
            .iter()
            .zip(&self.deferred)
            .filter_map(|(tool, deferred)| deferred.then_some(tool))
    }

    /// Whether the scope sees at least one deferred tool (then a host tool present `WhileDeferred`, tool discovery, is too).
    pub fn has_deferred(&self) -> bool {
        self.deferred.contains(&true)
    }

    /// The index of the visible tool called `name`.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.tools
            .binary_search_by(|tool| (*tool.definition.name).cmp(name))
            .ok()
    }
}

/// How a scope's tools are presented natively: what prompt assembly and the MCP listing
/// show, and what the SDK declares in full.
#[derive(Debug, Default)]
pub struct Presented {
    /// Visible tools that are not deferred, lexicographic.
    pub always: Vec<Arc<RegisteredTool>>,
    /// The host tool present while the scope sees a deferred tool (tool discovery).
    pub search: Option<Arc<RegisteredTool>>,
    /// The deferred tools this scope loaded, in the order they were found.
    pub loaded: Vec<Arc<RegisteredTool>>,
    /// Every deferred visible tool (loaded or not), lexicographic.
    pub deferred: Vec<Arc<RegisteredTool>>,
}

impl Presented {
    /// The native listing: the always-loaded tools, tool discovery, then the loaded ones.
    pub fn listed(&self) -> impl Iterator<Item = &Arc<RegisteredTool>> {
        self.always
            .iter()
            .chain(self.search.iter())
            .chain(self.loaded.iter())
    }

    /// The deferred tools not loaded yet, lexicographic.
    pub fn unloaded(&self) -> impl Iterator<Item = &Arc<RegisteredTool>> {
        let loaded = |tool: &Arc<RegisteredTool>| {
            self.loaded
                .iter()
                .any(|l| l.registration == tool.registration)
        };
        self.deferred.iter().filter(move |tool| !loaded(tool))
    }
}

impl Registry {
    /// Replaces `tools.deferred` / `tools.alwaysLoaded` (announced when they changed).
    pub fn set_deferral(&self, deferral: Deferral) {
        let changed = {
            let mut state = self.write();
            let changed = state.deferral.patterns != deferral.patterns
                || state.deferral.auto != deferral.auto;
            state.deferral = deferral;
            changed
        };
        if changed {
            self.notify(None);
        }
    }

    /// What `scope` sees, with deferral, as of now (cached until the next change).
    pub fn view(&self, scope: Option<&AgentId>) -> Arc<ScopeView> {
        let key: Scope = scope.cloned();
        let state = self.state.read();
        let mut views = self.views.lock();
        if let Some(view) = views.get(&key)
            && view.generation == state.generation
        {
            return view.clone();
        }
        let view = Arc::new(ScopeView::build(&state, scope));
        // Only open scopes are kept, so unknown names cannot grow the cache.
        if state.layers.contains_key(&key) {
            views.insert(key, view.clone());
        }
        view
    }

    /// What `tools.autoDefer` deferred in `scope` (`None` when it is not configured).
    pub fn auto_deferred(&self, scope: Option<&AgentId>) -> Option<AutoDeferral> {
        self.view(scope).auto_deferred().cloned()
    }

    /// How `scope` presents its tools now (see [`Presented`]).
    pub fn presented(&self, scope: Option<&AgentId>) -> Presented {
        let view = self.view(scope);
        let mut presented = Presented::default();
        for (index, tool) in view.tools().iter().enumerate() {
            if view.is_deferred(index) {
                presented.deferred.push(tool.clone());
            } else {
                presented.always.push(tool.clone());
            }
        }
        if presented.deferred.is_empty() {
            return presented;
        }
        presented.search = self
            .state
            .read()
            .host_tools
            .values()
            .find(|t| t.definition.role.host().map(|h| h.presence) == Some(Presence::WhileDeferred))
            .cloned();
        presented.loaded = self
            .loaded_in(&view, scope)
            .into_iter()
            .filter_map(|name| view.find(&name).map(|i| view.tools()[i].clone()))
            .collect();
        presented
    }

    /// The deferred tools `scope` has loaded, in the order found (only those it still sees
    /// as deferred).
    pub fn loaded(&self, scope: Option<&AgentId>) -> Vec<Arc<str>> {
        self.loaded_in(&self.view(scope), scope)
    }

    fn loaded_in(&self, view: &ScopeView, scope: Option<&AgentId>) -> Vec<Arc<str>> {
        let loaded = self.loaded.lock();
        let Some(names) = loaded.get(&scope.cloned()) else {
            return Vec::new();
        };
        names
            .iter()
            .filter(|name| view.find(name).is_some_and(|i| view.is_deferred(i)))
            .cloned()
            .collect()
    }

    /// Loads the deferred tools among `names` into `scope`, after those loaded already;
    /// announces the change (`tools/listChanged`) when something new was loaded. Returns
    /// whether anything was.
    pub fn load(&self, scope: Option<&AgentId>, names: &[Arc<str>]) -> bool {
        let view = self.view(scope);
        let changed = {
            let state = self.state.read();
            let key: Scope = scope.cloned();
            if !state.layers.contains_key(&key) {
                return false;
            }
            let mut loaded = self.loaded.lock();
            let list = loaded.entry(key).or_default();
            let before = list.len();
            for name in names {
                let deferred = view.find(name).is_some_and(|i| view.is_deferred(i));
                if deferred && !list.contains(name) {
                    list.push(name.clone());
                }
            }
            list.len() != before
        };
        if changed {
            self.notify(scope.cloned());
        }
        changed
    }

    /// Unloads `names` from `scope` (names not loaded are ignored); announces a change.
    pub fn unload(&self, scope: Option<&AgentId>, names: &[Arc<str>]) -> bool {
        let changed = {
            let mut loaded = self.loaded.lock();
            let Some(list) = loaded.get_mut(&scope.cloned()) else {
                return false;
            };
            let before = list.len();
            list.retain(|name| !names.contains(name));
            list.len() != before
        };
        if changed {
            self.notify(scope.cloned());
        }
        changed
    }

    /// Drops the views and load state of closed scopes.
    pub(super) fn forget(&self, closed: &[AgentId]) {
        let gone = |key: &Scope| key.as_ref().is_some_and(|agent| closed.contains(agent));
        self.views.lock().retain(|key, _| !gone(key));
        self.loaded.lock().retain(|key, _| !gone(key));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::tool::{BodyOutput, ToolRunContext};
    use serde_json::json;

    fn tool(name: &str, deferred: bool) -> ToolDefinition {
        ToolDefinition::builder(name)
            .output(json!({ "type": "null" }))
            .deferred(deferred)
            .body(|_: ToolRunContext| async { Ok(BodyOutput::from(json!(null))) })
            .unwrap()
    }

    #[test]
    fn deferral_by_spec_or_glob_unless_always_loaded() {
        let globs = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let deferral = Deferral::new(&globs(&["mcp__*", "x?"]), &globs(&["mcp__keep__*"])).unwrap();
        let check = |name: &str, spec: bool, expected: bool| {
            assert_eq!(
                deferral.defers(&tool(name, spec)),
                expected,
                "{name} {spec}"
            );
        };
        check("read", false, false);
        check("read", true, true);
        check("mcp__fs__read", false, true);
        check("mcp__keep__read", false, false);
        check("mcp__keep__read", true, false);
        check("xy", false, true);
        check("xyz", false, false);
        assert!(Deferral::new(&globs(&["[a"]), &[]).is_err());
    }

    #[test]
    fn views_are_rebuilt_only_after_a_change_and_loading_keeps_them() {
        let registry = Registry::default();
        registry.register(tool("a", false), None).unwrap();
        registry.register(tool("b", true), None).unwrap();
        let first = registry.view(None);
        assert!(Arc::ptr_eq(&first, &registry.view(None)));
        assert!(first.has_deferred());
        assert!(registry.load(None, &[Arc::from("b"), Arc::from("a")]));
        assert!(!registry.load(None, &[Arc::from("b")]));
        assert!(Arc::ptr_eq(&first, &registry.view(None)));
        assert_eq!(registry.loaded(None), [Arc::<str>::from("b")]);
        registry.register(tool("c", true), None).unwrap();
        assert!(!Arc::ptr_eq(&first, &registry.view(None)));
        assert!(registry.unload(None, &[Arc::from("b")]));
        assert!(registry.loaded(None).is_empty());
    }
}
