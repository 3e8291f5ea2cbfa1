//! The authoring DSL (`ValueSchemaSpec`, `ParameterSchemaSpec`) compiled to standard JSON
//! Schema, rejecting every key the DSL does not define.
//!
//! Compilation walks the spec with an explicit stack, recording each node's output with
//! placeholders for its children, then assembles the output from the leaves up, so a spec
//! of any depth compiles without recursion.

use serde_json::{Map, Value};

use crate::json::{Segment, canonicalize, deep_clone, json_equal};

use super::error::SchemaError;
use super::spec_path::{PathId, SpecPaths};
use super::types::JsonType;

/// Compiles a `ParameterSchemaSpec` (a record of parameter name → spec, each optionally
/// `required: true`) to the open root object
/// `{"type":"object","properties":{…},"required":[…]}`; error paths start at `root`
/// (`parameters.config.properties.host`).
pub fn compile_parameters(spec: &Value, root: &str) -> Result<Value, SchemaError> {
    let Value::Object(parameters) = spec else {
        return Err(SchemaError {
            path: root.to_owned(),
            message: "expected a record of parameter schemas".to_owned(),
        });
    };
    let mut compiler = Compiler::new(root);
    compiler.nodes.push(Pending::default());
    let mut output = Map::new();
    output.insert("type".to_owned(), Value::from("object"));
    let children = compiler.declare_properties(parameters, None, &mut output)?;
    compiler.finish_node(0, output, children);
    compiler.run()?;
    Ok(compiler.assemble())
}

/// Compiles a `ValueSchemaSpec` to JSON Schema; error paths start at `root`.
pub fn compile_value(spec: &Value, root: &str) -> Result<Value, SchemaError> {
    let mut compiler = Compiler::new(root);
    compiler.nodes.push(Pending::default());
    compiler.work.push(Visit {
        spec,
        at: None,
        node: 0,
        slot: Slot::Root,
    });
    compiler.run()?;
    Ok(compiler.assemble())
}

/// The keys a `oneOf` node may have.
const ONE_OF_KEYS: [&str; 5] = ["oneOf", "title", "description", "default", "examples"];

/// What a spec's `type` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DslType {
    Scalar(JsonType),
    Array,
    Object,
    /// Author-only unconstrained JSON: compiles to `{}` plus annotations.
    Json,
}

impl DslType {
    fn from_name(name: &str) -> Option<DslType> {
        match name {
            "array" => Some(DslType::Array),
            "object" => Some(DslType::Object),
            "json" => Some(DslType::Json),
            _ => JsonType::from_name(name).map(DslType::Scalar),
        }
    }

    fn allowed_keys(self) -> &'static [&'static str] {
        match self {
            DslType::Scalar(_) => &[
                "type",
                "title",
                "description",
                "default",
                "examples",
                "enum",
                "const",
            ],
            DslType::Array => &[
                "type",
                "title",
                "description",
                "default",
                "examples",
                "items",
            ],
            DslType::Object => &[
                "type",
                "title",
                "description",
                "default",
                "examples",
                "properties",
                "additionalProperties",
            ],
            DslType::Json => &["type", "title", "description", "default", "examples"],
        }
    }
}

/// Where a compiled child goes in its parent's output.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Slot {
    Root,
    Items,
    Property(String),
    Branch(usize),
}

/// A spec node waiting to be compiled into `node`.
struct Visit<'s> {
    spec: &'s Value,
    at: PathId,
    node: usize,
    slot: Slot,
}

/// A compiled node's own keywords, with `Null` placeholders where children go.
#[derive(Default)]
struct Pending {
    output: Map<String, Value>,
    children: Vec<(Slot, usize)>,
}

struct Compiler<'s, 'r> {
    root: &'r str,
    paths: SpecPaths<'s>,
    nodes: Vec<Pending>,
    work: Vec<Visit<'s>>,
}

impl<'s, 'r> Compiler<'s, 'r> {
    fn new(root: &'r str) -> Self {
        Compiler {
            root,
            paths: SpecPaths::default(),
            nodes: Vec::new(),
            work: Vec::new(),
        }
    }

    fn error(&self, at: PathId, message: impl Into<String>) -> SchemaError {
        self.paths.error(self.root, at, message)
    }

    /// Reserves a node id for a child; ids only grow, so children come after parents.
    fn reserve(&mut self) -> usize {
        self.nodes.push(Pending::default());
        self.nodes.len() - 1
    }

    /// Stores a node's output and queues its children (reversed, so they compile and
    /// report errors in document order).
    fn finish_node(&mut self, node: usize, output: Map<String, Value>, children: Vec<Visit<'s>>) {
        if let Some(pending) = self.nodes.get_mut(node) {
            pending.output = output;
            pending.children = children
                .iter()
                .map(|visit| (visit.slot.clone(), visit.node))
                .collect();
        }
        self.work.extend(children.into_iter().rev());
    }

    fn run(&mut self) -> Result<(), SchemaError> {
        while let Some(visit) = self.work.pop() {
            let (output, children) = self.compile_node(&visit)?;
            self.finish_node(visit.node, output, children);
        }
        Ok(())
    }

    /// One spec node's own output and the children it still needs.
    fn compile_node(
        &mut self,
        visit: &Visit<'s>,
    ) -> Result<(Map<String, Value>, Vec<Visit<'s>>), SchemaError> {
        let at = visit.at;
        let Value::Object(keys) = visit.spec else {
            return Err(self.error(at, "expected a schema object"));
        };
        let is_property = matches!(visit.slot, Slot::Property(_));
        let mut output = Map::new();
        if let Some(branches) = keys.get("oneOf") {
            if keys.contains_key("type") {
                return Err(self.error(at, "\"type\" and \"oneOf\" cannot be combined"));
            }
            self.check_keys(keys, at, is_property, &ONE_OF_KEYS)?;
            self.copy_annotations(keys, at, &mut output)?;
            let branches = match branches {
                Value::Array(branches) if branches.len() >= 2 => branches,
                _ => return Err(self.error(at, "oneOf must be an array of at least two schemas")),
            };
            output.insert(
                "oneOf".to_owned(),
                Value::Array(vec![Value::Null; branches.len()]),
            );
            let list_at = self.paths.child(at, Segment::Key("oneOf"));
            let mut children = Vec::with_capacity(branches.len());
            for (index, branch) in branches.iter().enumerate() {
                children.push(Visit {
                    spec: branch,
                    at: self.paths.child(list_at, Segment::Index(index)),
                    node: self.reserve(),
                    slot: Slot::Branch(index),
                });
            }
            return Ok((output, children));
        }
        let (name, kind) = match keys.get("type") {
            None => return Err(self.error(at, "missing \"type\" or \"oneOf\"")),
            Some(Value::String(name)) => match DslType::from_name(name) {
                Some(kind) => (name, kind),
                None => return Err(self.error(at, format!("unknown type \"{name}\""))),
            },
            Some(_) => return Err(self.error(at, "type must be a string")),
        };
        self.check_keys(keys, at, is_property, kind.allowed_keys())?;
        if kind != DslType::Json {
            output.insert("type".to_owned(), Value::String(name.clone()));
        }
        self.copy_annotations(keys, at, &mut output)?;
        let mut children = Vec::new();
        match kind {
            DslType::Scalar(scalar) => {
                self.compile_enum_and_const(keys, at, scalar, &mut output)?
            }
            DslType::Array => {
                if let Some(items) = keys.get("items") {
                    output.insert("items".to_owned(), Value::Null);
                    children.push(Visit {
                        spec: items,
                        at: self.paths.child(at, Segment::Key("items")),
                        node: self.reserve(),
                        slot: Slot::Items,
                    });
                }
            }
            DslType::Object => {
                let record_at = self.paths.child(at, Segment::Key("properties"));
                children = match keys.get("properties") {
                    None => {
                        output.insert("properties".to_owned(), Value::Object(Map::new()));
                        Vec::new()
                    }
                    Some(Value::Object(properties)) => {
                        self.declare_properties(properties, record_at, &mut output)?
                    }
                    Some(_) => {
                        return Err(
                            self.error(at, "properties must be a record of property schemas")
                        );
                    }
                };
                match keys.get("additionalProperties") {
                    Some(Value::Bool(open)) => {
                        output.insert("additionalProperties".to_owned(), Value::Bool(*open));
                    }
                    _ => {
                        return Err(
                            self.error(at, "object needs additionalProperties: true or false")
                        );
                    }
                }
            }
            DslType::Json => {}
        }
        Ok((output, children))
    }

    /// Writes `properties` (placeholders) and `required` for a record of property specs.
    fn declare_properties(
        &mut self,
        record: &'s Map<String, Value>,
        record_at: PathId,
        output: &mut Map<String, Value>,
    ) -> Result<Vec<Visit<'s>>, SchemaError> {
        let mut placeholders = Map::new();
        let mut required = Vec::new();
        let mut children = Vec::with_capacity(record.len());
        for (name, property) in record {
            let at = self.paths.child(record_at, Segment::Key(name));
            match property.get("required") {
                None => {}
                Some(Value::Bool(true)) => required.push(Value::String(name.clone())),
                // `required: false` is not an optional marker: optional is the absence of it.
                Some(_) => return Err(self.error(at, "required must be true when present")),
            }
            placeholders.insert(name.clone(), Value::Null);
            children.push(Visit {
                spec: property,
                at,
                node: self.reserve(),
                slot: Slot::Property(name.clone()),
            });
        }
        output.insert("properties".to_owned(), Value::Object(placeholders));
        if !required.is_empty() {
            output.insert("required".to_owned(), Value::Array(required));
        }
        Ok(children)
    }

    fn check_keys(
        &self,
        keys: &Map<String, Value>,
        at: PathId,
        is_property: bool,
        allowed: &[&str],
    ) -> Result<(), SchemaError> {
        for key in keys.keys() {
            if allowed.contains(&key.as_str()) || (is_property && key == "required") {
                continue;
            }
            let message = match (key.as_str(), keys.get(key)) {
                ("required", Some(Value::Array(_))) => {
                    "mark each required property with required: true instead of a required array"
                        .to_owned()
                }
                ("required", _) => "required is only allowed on a property".to_owned(),
                _ => format!("unknown key \"{key}\""),
            };
            return Err(self.error(at, message));
        }
        Ok(())
    }

    /// Copies `title`, `description`, `default` and `examples` into the compiled schema:
    /// annotations only, never applied or validated against (a `default` is not filled in).
    fn copy_annotations(
        &mut self,
        keys: &'s Map<String, Value>,
        at: PathId,
        output: &mut Map<String, Value>,
    ) -> Result<(), SchemaError> {
        for annotation in ["title", "description"] {
            match keys.get(annotation) {
                None => {}
                Some(Value::String(text)) => {
                    output.insert(annotation.to_owned(), Value::String(text.clone()));
                }
                Some(_) => return Err(self.error(at, format!("{annotation} must be a string"))),
            }
        }
        for annotation in ["default", "examples"] {
            if let Some(value) = keys.get(annotation) {
                let annotation_at = self.paths.child(at, Segment::Key(annotation));
                let copy = self.lossless(value, annotation_at)?;
                output.insert(annotation.to_owned(), copy);
            }
        }
        Ok(())
    }

    fn compile_enum_and_const(
        &mut self,
        keys: &Map<String, Value>,
        at: PathId,
        scalar: JsonType,
        output: &mut Map<String, Value>,
    ) -> Result<(), SchemaError> {
        let (members, constant) = (keys.get("enum"), keys.get("const"));
        if let Some(members) = members {
            let members = match members {
                Value::Array(members) if !members.is_empty() => members,
                _ => return Err(self.error(at, "enum must be a non-empty array")),
            };
            let enum_at = self.paths.child(at, Segment::Key("enum"));
            let mut compiled = Vec::with_capacity(members.len());
            for (index, member) in members.iter().enumerate() {
                if !scalar.admits(member) {
                    let phrase = scalar.phrase();
                    return Err(self.error(at, format!("enum member {index} is not {phrase}")));
                }
                let member_at = self.paths.child(enum_at, Segment::Index(index));
                compiled.push(self.lossless(member, member_at)?);
            }
            output.insert("enum".to_owned(), Value::Array(compiled));
        }
        if let Some(constant) = constant {
            if !scalar.admits(constant) {
                return Err(self.error(at, format!("const is not {}", scalar.phrase())));
            }
            if let Some(Value::Array(members)) = members
                && !members.iter().any(|member| json_equal(member, constant))
            {
                return Err(self.error(at, "const must be one of the enum members"));
            }
            let const_at = self.paths.child(at, Segment::Key("const"));
            let compiled = self.lossless(constant, const_at)?;
            output.insert("const".to_owned(), compiled);
        }
        Ok(())
    }

    /// The canonical copy of a literal or annotation value (of any depth).
    fn lossless(&self, value: &Value, at: PathId) -> Result<Value, SchemaError> {
        let mut copy = deep_clone(value);
        match canonicalize(&mut copy, "") {
            Ok(()) => Ok(copy),
            Err(lossy) => Err(self.error(at, format!("not lossless JSON: {}", lossy.reason))),
        }
    }

    /// Moves every compiled child into its parent's placeholder, leaves first.
    fn assemble(self) -> Value {
        let mut done: Vec<Option<Value>> = Vec::with_capacity(self.nodes.len());
        done.resize_with(self.nodes.len(), || None);
        for (id, pending) in self.nodes.into_iter().enumerate().rev() {
            let Pending {
                mut output,
                children,
            } = pending;
            for (slot, child) in children {
                let compiled = done
                    .get_mut(child)
                    .and_then(Option::take)
                    .unwrap_or(Value::Null);
                match slot {
                    Slot::Root => {}
                    Slot::Items => {
                        output.insert("items".to_owned(), compiled);
                    }
                    Slot::Property(name) => {
                        if let Some(Value::Object(properties)) = output.get_mut("properties") {
                            properties.insert(name, compiled);
                        }
                    }
                    Slot::Branch(index) => {
                        if let Some(branch) = output
                            .get_mut("oneOf")
                            .and_then(Value::as_array_mut)
                            .and_then(|branches| branches.get_mut(index))
                        {
                            *branch = compiled;
                        }
                    }
                }
            }
            if let Some(slot) = done.get_mut(id) {
                *slot = Some(Value::Object(output));
            }
        }
        done.into_iter().next().flatten().unwrap_or(Value::Null)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
