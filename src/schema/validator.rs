//! A supported schema compiled once into an index arena, shared cheaply, and applied to
//! values with path-qualified violations.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::json::{Segment, deep_clone, drop_deep, locate, render_compact, render_path};

use super::error::SchemaError;
use super::evaluate::{Evaluation, Found};
use super::subset::check_supported;
use super::types::JsonType;
use super::violation::{Violation, ViolationKind};

/// Which name violation paths start from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathRoot {
    /// Tool arguments: property paths are bare (`config.host`), the root is `arguments`.
    Arguments,
    /// A tool's output: every path starts at `value` (`value.items[0]`).
    Value,
}

/// A compiled schema; clones share one arena.
#[derive(Clone)]
pub struct Validator {
    arena: Arc<Arena>,
}

/// Nodes by index; node 0 is the root.
pub(super) struct Arena {
    pub(super) nodes: Vec<Node>,
}

/// One schema object's constraints.
#[derive(Default)]
pub(super) struct Node {
    /// `None` accepts every type.
    pub(super) types: Option<Vec<JsonType>>,
    /// The `enum` array as written (members compared by JSON value).
    pub(super) allowed: Option<Value>,
    pub(super) constant: Option<Value>,
    pub(super) items: Option<usize>,
    /// Declared properties in order, then names only `required` mentions.
    pub(super) properties: Vec<Property>,
    /// Indices of declared properties sorted by name, for closed objects with many of them.
    pub(super) sorted_declared: Vec<usize>,
    /// `additionalProperties: false`.
    pub(super) closed: bool,
    pub(super) branches: Vec<usize>,
}

pub(super) struct Property {
    pub(super) name: String,
    /// `None` for a name that only `required` mentions: not a declared property.
    pub(super) node: Option<usize>,
    pub(super) required: bool,
}

/// Closed objects with more declared properties than this look keys up by binary search.
const LINEAR_LOOKUP_LIMIT: usize = 8;

impl Node {
    pub(super) fn declares(&self, key: &str) -> bool {
        if self.properties.len() <= LINEAR_LOOKUP_LIMIT {
            return self
                .properties
                .iter()
                .any(|property| property.node.is_some() && property.name == key);
        }
        self.sorted_declared
            .binary_search_by(|index| {
                let name = self.properties.get(*index).map_or("", |p| p.name.as_str());
                name.cmp(key)
            })
            .is_ok()
    }

    /// Whether an object value needs its members looked at.
    pub(super) fn inspects_members(&self) -> bool {
        self.closed || !self.properties.is_empty()
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        // `enum` and `const` values can be arbitrarily deep.
        for node in &mut self.nodes {
            if let Some(value) = node.allowed.take() {
                drop_deep(value);
            }
            if let Some(value) = node.constant.take() {
                drop_deep(value);
            }
        }
    }
}

impl fmt::Debug for Validator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Validator")
            .field("nodes", &self.arena.nodes.len())
            .finish()
    }
}

impl Validator {
    /// Checks `schema` against the supported subset (error paths start at `root`) and
    /// compiles it.
    pub fn new(schema: &Value, root: &str) -> Result<Validator, SchemaError> {
        check_supported(schema, root)?;
        let mut nodes: Vec<Node> = vec![Node::default()];
        let mut pending: Vec<(&Value, usize)> = vec![(schema, 0)];
        while let Some((schema, id)) = pending.pop() {
            let Value::Object(keywords) = schema else {
                continue;
            };
            let mut node = Node::default();
            if let Some(kinds) = keywords.get("type") {
                node.types = Some(type_list(kinds));
            }
            node.allowed = keywords.get("enum").map(deep_clone);
            node.constant = keywords.get("const").map(deep_clone);
            if let Some(items) = keywords.get("items") {
                node.items = Some(reserve(&mut nodes, &mut pending, items));
            }
            if let Some(Value::Object(properties)) = keywords.get("properties") {
                for (name, property) in properties {
                    node.properties.push(Property {
                        name: name.clone(),
                        node: Some(reserve(&mut nodes, &mut pending, property)),
                        required: false,
                    });
                }
            }
            if let Some(Value::Array(names)) = keywords.get("required") {
                for name in names.iter().filter_map(Value::as_str) {
                    match node.properties.iter_mut().find(|p| p.name == name) {
                        Some(property) => property.required = true,
                        None => node.properties.push(Property {
                            name: name.to_owned(),
                            node: None,
                            required: true,
                        }),
                    }
                }
            }
            node.closed = keywords.get("additionalProperties") == Some(&Value::Bool(false));
            if node.closed && node.properties.len() > LINEAR_LOOKUP_LIMIT {
                let mut sorted: Vec<usize> = (0..node.properties.len())
                    .filter(|index| {
                        node.properties
                            .get(*index)
                            .is_some_and(|p| p.node.is_some())
                    })
                    .collect();
                sorted.sort_by(|a, b| {
                    let name =
                        |index: &usize| node.properties.get(*index).map_or("", |p| p.name.as_str());
                    name(a).cmp(name(b))
                });
                node.sorted_declared = sorted;
            }
            if let Some(Value::Array(branches)) = keywords.get("oneOf") {
                for branch in branches {
                    let branch_id = reserve(&mut nodes, &mut pending, branch);
                    node.branches.push(branch_id);
                }
            }
            if let Some(slot) = nodes.get_mut(id) {
                *slot = node;
            }
        }
        Ok(Validator {
            arena: Arc::new(Arena { nodes }),
        })
    }

    /// Every violation of `value`, in schema order. A valid value of modest depth costs no
    /// allocation: paths are worked out only for violations.
    pub fn validate(&self, value: &Value, root: PathRoot) -> Vec<Violation> {
        let mut found = Vec::new();
        Evaluation::new(&self.arena.nodes, Some(&mut found)).run(value);
        if found.is_empty() {
            return Vec::new();
        }
        let targets: Vec<*const Value> = found.iter().map(Found::target).collect();
        let located = locate(value, &targets);
        found
            .iter()
            .zip(located)
            .map(|(found, segments)| {
                let mut segments = segments.unwrap_or_default();
                if let Some(key) = found.key() {
                    segments.push(Segment::Key(key));
                }
                Violation {
                    path: render_root(root, &segments),
                    kind: self.kind_of(found),
                }
            })
            .collect()
    }

    /// Whether `value` is valid, for classifiers: stops at the first violation and, like
    /// `validate`, allocates nothing for values of modest depth.
    pub fn is_valid(&self, value: &Value) -> bool {
        Evaluation::new(&self.arena.nodes, None).run(value)
    }

    fn kind_of(&self, found: &Found<'_, '_>) -> ViolationKind {
        let node = |id: usize| self.arena.nodes.get(id);
        match found {
            Found::Missing { .. } => ViolationKind::MissingRequired,
            Found::WrongType { node: id, .. } => ViolationKind::WrongType(
                node(*id).and_then(|n| n.types.clone()).unwrap_or_default(),
            ),
            Found::NotInEnum { node: id, .. } => ViolationKind::NotInEnum(
                node(*id)
                    .and_then(|n| n.allowed.as_ref())
                    .map(render_compact)
                    .unwrap_or_default(),
            ),
            Found::NotConst { node: id, .. } => ViolationKind::NotConst(
                node(*id)
                    .and_then(|n| n.constant.as_ref())
                    .map(render_compact)
                    .unwrap_or_default(),
            ),
            Found::Undeclared { .. } => ViolationKind::Undeclared,
            Found::OneOf { matched, .. } => ViolationKind::OneOf { matched: *matched },
        }
    }
}

/// Allocates a node for a child schema and queues the schema to fill it.
fn reserve<'s>(
    nodes: &mut Vec<Node>,
    pending: &mut Vec<(&'s Value, usize)>,
    child: &'s Value,
) -> usize {
    nodes.push(Node::default());
    pending.push((child, nodes.len() - 1));
    nodes.len() - 1
}

/// Type names in schema order without repeats.
fn type_list(kinds: &Value) -> Vec<JsonType> {
    let names: Vec<&str> = match kinds {
        Value::String(name) => vec![name.as_str()],
        Value::Array(names) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let mut list = Vec::with_capacity(names.len());
    for kind in names.into_iter().filter_map(JsonType::from_name) {
        if !list.contains(&kind) {
            list.push(kind);
        }
    }
    list
}

fn render_root(root: PathRoot, segments: &[Segment<'_>]) -> String {
    match (root, segments.first()) {
        (PathRoot::Value, _) => render_path("value", segments),
        (PathRoot::Arguments, None) => "arguments".to_owned(),
        (PathRoot::Arguments, Some(Segment::Key(_))) => render_path("", segments),
        (PathRoot::Arguments, Some(Segment::Index(_))) => render_path("arguments", segments),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
