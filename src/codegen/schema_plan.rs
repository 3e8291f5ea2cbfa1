//! Reads one JSON Schema node (without descending) into the union of TypeScript
//! alternatives it renders as, deciding what is supported and what degrades to `unknown`.

use std::collections::HashSet;

use serde_json::{Map, Value};

/// Applicators and structural keywords a TypeScript type cannot carry: a node that uses any
/// of them is `unknown`, since ignoring them would misstate its shape. Keywords that only
/// narrow a value inside its type (`minimum`, `pattern`, `format`, ...) and annotations are
/// ignored, as JSON Schema ignores unknown keywords.
pub(crate) const UNSUPPORTED_KEYWORDS: &[&str] = &[
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
    "anyOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "patternProperties",
    "prefixItems",
    "additionalItems",
    "unevaluatedProperties",
    "unevaluatedItems",
    "dependentSchemas",
    "dependencies",
    "propertyNames",
    "contains",
];

/// Keywords that give a node its own shape; beside `oneOf` they would form an intersection,
/// which the renderer does not model.
const SHAPE_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
];

const OBJECT_KEYWORDS: &[&str] = &["properties", "required", "additionalProperties"];

/// One member of the union a schema node renders as.
pub(super) enum Alternative<'a> {
    /// A type that needs no further input: `string`, `number`, `JsonValue`, `unknown`, ...
    Keyword(&'static str),
    /// An `enum` member or the `const` value, rendered as its JSON literal type.
    Literal(&'a Value),
    /// One `oneOf` branch, a schema node of its own.
    Branch(&'a Value),
    /// An array of `items` (`None`: no `items`, so any JSON).
    Array(Option<&'a Value>),
    Object(ObjectShape<'a>),
}

/// The members of an object type, in `properties` order, then undeclared `required` keys.
pub(super) struct ObjectShape<'a> {
    pub properties: Vec<Property<'a>>,
    /// `additionalProperties` absent or `true`.
    pub open: bool,
}

pub(super) struct Property<'a> {
    pub name: &'a str,
    /// `None` for a key that is required but not declared in `properties` (any JSON).
    pub schema: Option<&'a Value>,
    pub required: bool,
}

const UNKNOWN: &str = "unknown";

/// The alternatives of `schema`; empty means `never`. A single-branch `oneOf` is the same
/// node as its branch, so chains of them are followed here (in a loop) and a lone
/// [`Alternative::Branch`] never comes back: a result of one alternative is never a union.
pub(super) fn plan(schema: &Value) -> Vec<Alternative<'_>> {
    let mut node = schema;
    loop {
        let map = match node {
            Value::Object(map) => map,
            Value::Bool(true) => return vec![Alternative::Keyword("JsonValue")],
            _ => return vec![Alternative::Keyword(UNKNOWN)],
        };
        if UNSUPPORTED_KEYWORDS
            .iter()
            .any(|keyword| map.contains_key(*keyword))
        {
            return vec![Alternative::Keyword(UNKNOWN)];
        }
        if let Some(value) = map.get("const") {
            return vec![Alternative::Literal(value)];
        }
        if let Some(members) = map.get("enum") {
            return match members {
                Value::Array(members) => members.iter().map(Alternative::Literal).collect(),
                _ => vec![Alternative::Keyword(UNKNOWN)],
            };
        }
        let Some(branches) = map.get("oneOf") else {
            return plan_types(map).unwrap_or_else(|| vec![Alternative::Keyword(UNKNOWN)]);
        };
        match branches {
            _ if SHAPE_KEYWORDS
                .iter()
                .any(|keyword| map.contains_key(*keyword)) =>
            {
                return vec![Alternative::Keyword(UNKNOWN)];
            }
            Value::Array(branches) if branches.len() == 1 => node = &branches[0],
            Value::Array(branches) => return branches.iter().map(Alternative::Branch).collect(),
            _ => return vec![Alternative::Keyword(UNKNOWN)],
        }
    }
}

/// The alternatives named by `type` (or implied by object or array keywords when `type` is
/// absent); `None` when the node is outside the supported subset.
fn plan_types(map: &Map<String, Value>) -> Option<Vec<Alternative<'_>>> {
    let names: Vec<&str> = match map.get("type") {
        Some(Value::String(name)) => vec![name],
        Some(Value::Array(names)) if !names.is_empty() => {
            names.iter().map(Value::as_str).collect::<Option<_>>()?
        }
        Some(_) => return None,
        None => {
            let object = OBJECT_KEYWORDS
                .iter()
                .any(|keyword| map.contains_key(*keyword));
            match (object, map.contains_key("items")) {
                (false, false) => return Some(vec![Alternative::Keyword("JsonValue")]),
                (true, false) => vec!["object"],
                (false, true) => vec!["array"],
                (true, true) => return None,
            }
        }
    };
    let mut seen: Vec<&str> = Vec::with_capacity(names.len());
    let mut alternatives = Vec::with_capacity(names.len());
    for name in names {
        let canonical = if name == "integer" { "number" } else { name };
        if seen.contains(&canonical) {
            continue;
        }
        seen.push(canonical);
        alternatives.push(match canonical {
            "string" => Alternative::Keyword("string"),
            "number" => Alternative::Keyword("number"),
            "boolean" => Alternative::Keyword("boolean"),
            "null" => Alternative::Keyword("null"),
            "array" => match map.get("items") {
                None => Alternative::Array(None),
                Some(items @ (Value::Object(_) | Value::Bool(_))) => {
                    Alternative::Array(Some(items))
                }
                Some(_) => return None,
            },
            "object" => Alternative::Object(object_shape(map)?),
            _ => return None,
        });
    }
    Some(alternatives)
}

fn object_shape(map: &Map<String, Value>) -> Option<ObjectShape<'_>> {
    let declared = match map.get("properties") {
        None => None,
        Some(Value::Object(declared)) => Some(declared),
        Some(_) => return None,
    };
    let required: Vec<&str> = match map.get("required") {
        None => Vec::new(),
        Some(Value::Array(names)) => names.iter().map(Value::as_str).collect::<Option<_>>()?,
        Some(_) => return None,
    };
    let open = match map.get("additionalProperties") {
        None | Some(Value::Bool(true)) => true,
        Some(Value::Bool(false)) => false,
        Some(_) => return None,
    };
    let required_set: HashSet<&str> = required.iter().copied().collect();
    let mut properties: Vec<Property<'_>> = declared
        .into_iter()
        .flatten()
        .map(|(name, schema)| Property {
            name,
            schema: Some(schema),
            required: required_set.contains(name.as_str()),
        })
        .collect();
    let mut undeclared_seen = HashSet::new();
    for name in required {
        let is_declared = declared.is_some_and(|declared| declared.contains_key(name));
        if !is_declared && undeclared_seen.insert(name) {
            properties.push(Property {
                name,
                schema: None,
                required: true,
            });
        }
    }
    Some(ObjectShape { properties, open })
}
