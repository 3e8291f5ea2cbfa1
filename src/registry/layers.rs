//! Registry state: one layer per scope, the registration index, and the visibility rules.

use super::{Deferral, RegisteredTool, RegistryError};
use crate::tool::AgentId;
use dsh_tools_protocol::{CodeLanguage, PresentationMode};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// A scope key: `None` is the global layer.
pub(super) type Scope = Option<AgentId>;

/// An agent's mask over global tool names, snapshotted at registration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Restriction {
    /// Only these names stay visible; later names are excluded.
    Allow(HashSet<Arc<str>>),
    /// These names are hidden; later unnamed globals are admitted.
    Deny(HashSet<Arc<str>>),
}

impl Restriction {
    fn admits(&self, name: &str) -> bool {
        match self {
            Restriction::Allow(names) => names.contains(name),
            Restriction::Deny(names) => !names.contains(name),
        }
    }

    fn names(&self) -> &HashSet<Arc<str>> {
        match self {
            Restriction::Allow(names) | Restriction::Deny(names) => names,
        }
    }
}

/// What a registration id disposes.
pub(super) enum Kind {
    Tool(Arc<str>),
    Reservation(Arc<str>),
    Restriction,
    Presentation,
}

/// One scope's registrations.
#[derive(Default)]
pub(super) struct Layer {
    pub parent: Scope,
    pub tools: HashMap<Arc<str>, Arc<RegisteredTool>>,
    pub reserved: HashMap<Arc<str>, usize>,
    pub restrictions: Vec<(Arc<str>, Arc<Restriction>)>,
    pub presentation: Option<(Arc<str>, PresentationMode, Option<CodeLanguage>)>,
}

impl Layer {
    pub fn admits(&self, name: &str) -> bool {
        self.restrictions.iter().all(|(_, r)| r.admits(name))
    }

    pub fn known_names(&self) -> HashSet<Arc<str>> {
        self.tools
            .keys()
            .chain(self.reserved.keys())
            .cloned()
            .collect()
    }
}

/// The whole registry state behind one lock.
pub(super) struct State {
    pub layers: HashMap<Scope, Layer>,
    pub default_mode: PresentationMode,
    /// The host's own tools (their role says when a scope sees them), by name.
    pub host_tools: HashMap<Arc<str>, Arc<RegisteredTool>>,
    /// `tools.deferred` and `tools.alwaysLoaded`.
    pub deferral: Deferral,
    /// Bumped by every change (the registry's `write`): a cached view of an older
    /// generation is stale.
    pub generation: u64,
    index: HashMap<Arc<str>, (Scope, Kind)>,
    next: u64,
}

impl State {
    pub fn new(mode: PresentationMode) -> Self {
        let mut layers = HashMap::new();
        layers.insert(None, Layer::default());
        State {
            layers,
            default_mode: mode,
            host_tools: HashMap::new(),
            deferral: Deferral::default(),
            generation: 0,
            index: HashMap::new(),
            next: 0,
        }
    }

    pub fn next_id(&mut self, kind: &str) -> Arc<str> {
        self.next += 1;
        Arc::from(format!("{kind}:{}", self.next))
    }

    pub fn record(&mut self, id: Arc<str>, scope: Scope, kind: Kind) {
        self.index.insert(id, (scope, kind));
    }

    pub fn layer_mut(&mut self, scope: &Scope) -> Result<&mut Layer, RegistryError> {
        self.layers
            .get_mut(scope)
            .ok_or_else(|| unknown_agent(scope))
    }

    /// Layers from the global one down to `scope` (empty tail when `scope` is unknown).
    pub fn chain(&self, scope: Option<&AgentId>) -> Vec<&Layer> {
        let mut chain = Vec::new();
        let mut key = scope.cloned();
        while let Some(agent) = key {
            let Some(layer) = self.layers.get(&Some(agent)) else {
                break;
            };
            chain.push(layer);
            key = layer.parent.clone();
        }
        chain.reverse();
        chain
    }

    /// The nearest `presentAs` on the scope's chain (its own, else its parent's, and so on
    /// up), with the layer that declared it: a presentation is inherited like tools are.
    fn presentation(
        &self,
        scope: Option<&AgentId>,
    ) -> Option<(PresentationMode, Option<CodeLanguage>)> {
        self.chain(scope)
            .iter()
            .rev()
            .find_map(|layer| layer.presentation.as_ref())
            .map(|(_, mode, language)| (*mode, *language))
    }

    /// The effective presentation: the nearest `presentAs` on the chain, else the config mode.
    pub fn mode(&self, scope: Option<&AgentId>) -> PresentationMode {
        self.presentation(scope)
            .map_or(self.default_mode, |(mode, _)| mode)
    }

    /// The Code Mode language of the nearest `presentAs` on the chain, if it chose one.
    pub fn language(&self, scope: Option<&AgentId>) -> Option<CodeLanguage> {
        self.presentation(scope).and_then(|(_, language)| language)
    }

    /// The scope's own layer (`None` for the global view or an unknown agent).
    fn own(&self, scope: Option<&AgentId>) -> Option<&Layer> {
        scope.and_then(|agent| self.layers.get(&Some(agent.clone())))
    }

    /// Everything `scope` inherits, by name: the global layer's tools, shadowed by each
    /// ancestor's (farthest first, so the nearest wins); the scope's own layer excluded.
    fn inherited(&self, scope: Option<&AgentId>) -> HashMap<&Arc<str>, &Arc<RegisteredTool>> {
        let mut inherited: HashMap<&Arc<str>, &Arc<RegisteredTool>> = HashMap::new();
        let chain = self.chain(scope);
        let ancestors = chain.len().saturating_sub(1);
        let layers = self
            .layers
            .get(&None)
            .into_iter()
            .chain(chain.into_iter().take(ancestors));
        for layer in layers {
            inherited.extend(layer.tools.iter());
        }
        inherited
    }

    /// Names `scope` inherits (tools and reservations of the global layer and its
    /// ancestors): what its `restrict` may name.
    fn inherited_names(&self, scope: Option<&AgentId>) -> HashSet<Arc<str>> {
        let chain = self.chain(scope);
        let ancestors = chain.len().saturating_sub(1);
        self.layers
            .get(&None)
            .into_iter()
            .chain(chain.into_iter().take(ancestors))
            .flat_map(Layer::known_names)
            .collect()
    }

    /// Every name `scope` knows: inherited or its own, registered or reserved.
    pub fn known_names(&self, scope: Option<&AgentId>) -> HashSet<Arc<str>> {
        let mut names = self.inherited_names(scope);
        if let Some(own) = self.own(scope) {
            names.extend(own.known_names());
        }
        names
    }

    /// Whether the inherited capability `name` passes every restriction on `scope`'s chain
    /// (the scope's own and every ancestor's), registered yet or not.
    pub fn is_admitted(&self, name: &str, scope: Option<&AgentId>) -> bool {
        self.chain(scope).iter().all(|layer| layer.admits(name))
    }

    /// Fails for a host tool's name: it cannot be registered, reserved or restricted.
    pub fn refuse_reserved(&self, name: &str) -> Result<(), RegistryError> {
        match self
            .host_tools
            .get(name)
            .and_then(|t| t.definition.role.host())
        {
            Some(host) => Err(RegistryError::ReservedName {
                name: name.to_string(),
                purpose: host.purpose,
            }),
            None => Ok(()),
        }
    }

    /// The registered tool `name` resolves to in `scope` (host tools are the registry's).
    pub fn resolve(&self, name: &str, scope: Option<&AgentId>) -> Option<Arc<RegisteredTool>> {
        if let Some(tool) = self.own(scope).and_then(|own| own.tools.get(name)) {
            return Some(tool.clone());
        }
        let chain = self.chain(scope);
        let ancestors = chain.len().saturating_sub(1);
        let nearest = chain
            .iter()
            .take(ancestors)
            .rev()
            .find_map(|layer| layer.tools.get(name))
            .or_else(|| self.layers.get(&None)?.tools.get(name))?;
        chain
            .iter()
            .all(|layer| layer.admits(name))
            .then(|| nearest.clone())
    }

    pub fn visible(&self, scope: Option<&AgentId>) -> Vec<Arc<RegisteredTool>> {
        let chain = self.chain(scope);
        let mut by_name: HashMap<&Arc<str>, &Arc<RegisteredTool>> = self
            .inherited(scope)
            .into_iter()
            .filter(|(name, _)| chain.iter().all(|layer| layer.admits(name)))
            .collect();
        if let Some(own) = self.own(scope) {
            by_name.extend(own.tools.iter());
        }
        let mut tools: Vec<Arc<RegisteredTool>> = by_name.into_values().cloned().collect();
        tools.sort_by(|a, b| a.definition.name.cmp(&b.definition.name));
        tools
    }

    /// A restriction may name what the agent inherits (from the global layer or any
    /// ancestor); its own local names and names nobody registered or reserved are refused.
    pub fn validate_restriction(
        &self,
        agent: &AgentId,
        restriction: &Restriction,
    ) -> Result<(), RegistryError> {
        let scope = Some(agent.clone());
        let own = self
            .layers
            .get(&scope)
            .ok_or_else(|| RegistryError::UnknownAgent(agent.to_string()))?;
        if restriction.names().is_empty() {
            return Err(RegistryError::EmptyFilter);
        }
        let inherited = self.inherited_names(scope.as_ref());
        let mut names: Vec<&Arc<str>> = restriction.names().iter().collect();
        names.sort();
        for name in names {
            self.refuse_reserved(name)?;
            if inherited.contains(name) {
                continue;
            }
            if own.tools.contains_key(name) || own.reserved.contains_key(name) {
                return Err(RegistryError::LocalName(
                    name.to_string(),
                    agent.to_string(),
                ));
            }
            return Err(RegistryError::UnknownName(name.to_string()));
        }
        Ok(())
    }

    /// Disposes one registration; returns its scope and whether what the scope sees changed
    /// (a reservation has no visible schema, so disposing one changes nothing visible).
    pub fn dispose(&mut self, id: &str) -> Result<(Scope, bool), RegistryError> {
        let (scope, kind) = self
            .index
            .remove(id)
            .ok_or_else(|| RegistryError::UnknownRegistration(id.to_string()))?;
        let layer = self.layer_mut(&scope)?;
        let visible = match kind {
            Kind::Tool(name) => {
                layer.tools.remove(&name);
                true
            }
            Kind::Reservation(name) => {
                if let Some(count) = layer.reserved.get_mut(&name) {
                    *count -= 1;
                    if *count == 0 {
                        layer.reserved.remove(&name);
                    }
                }
                false
            }
            Kind::Restriction => {
                layer.restrictions.retain(|(rid, _)| &**rid != id);
                true
            }
            Kind::Presentation => {
                layer.presentation = None;
                true
            }
        };
        Ok((scope, visible))
    }

    pub fn open_agent(
        &mut self,
        agent: AgentId,
        parent: Option<AgentId>,
    ) -> Result<(), RegistryError> {
        if agent.is_empty() {
            return Err(RegistryError::EmptyAgent);
        }
        let key = Some(agent.clone());
        if self.layers.contains_key(&key) {
            return Err(RegistryError::AgentExists(agent.to_string()));
        }
        if let Some(parent) = &parent
            && !self.layers.contains_key(&Some(parent.clone()))
        {
            return Err(RegistryError::UnknownAgent(parent.to_string()));
        }
        self.layers.insert(
            key,
            Layer {
                parent,
                ..Layer::default()
            },
        );
        Ok(())
    }

    /// Removes `agent` and its descendants; returns them, the agent first.
    pub fn close_agent(&mut self, agent: &str) -> Result<Vec<AgentId>, RegistryError> {
        let root: AgentId = Arc::from(agent);
        if !self.layers.contains_key(&Some(root.clone())) {
            return Err(RegistryError::UnknownAgent(agent.to_string()));
        }
        let mut closed = vec![root];
        let mut i = 0;
        while i < closed.len() {
            let parent = Some(closed[i].clone());
            let children = self
                .layers
                .iter()
                .filter(|(_, l)| l.parent == parent)
                .filter_map(|(k, _)| k.clone());
            let children: Vec<AgentId> = children.collect();
            closed.extend(children);
            i += 1;
        }
        for scope in &closed {
            self.layers.remove(&Some(scope.clone()));
        }
        self.index
            .retain(|_, (scope, _)| scope.as_ref().is_none_or(|s| !closed.contains(s)));
        Ok(closed)
    }
}

fn unknown_agent(scope: &Scope) -> RegistryError {
    RegistryError::UnknownAgent(scope.as_deref().unwrap_or_default().to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// An empty id is refused as a name, not as an agent that should have been opened
    /// first (which is what opening it would have told the caller to do).
    #[test]
    fn opening_an_agent_checks_its_id_and_its_parent() {
        let check = |agent: &str, parent: Option<&str>, expected: Result<(), RegistryError>| {
            let mut state = State::new(PresentationMode::Native);
            state.open_agent(Arc::from("x"), None).unwrap();
            let parent = parent.map(Arc::from);
            assert_eq!(
                state.open_agent(Arc::from(agent), parent),
                expected,
                "{agent}"
            );
        };
        check("y", None, Ok(()));
        check("y", Some("x"), Ok(()));
        check("", None, Err(RegistryError::EmptyAgent));
        check("", Some("x"), Err(RegistryError::EmptyAgent));
        check("x", None, Err(RegistryError::AgentExists("x".into())));
        check(
            "y",
            Some("ghost"),
            Err(RegistryError::UnknownAgent("ghost".into())),
        );
    }
}
