//! The enforced raw JSON Schema subset: what the DSL compiles to and nothing more. Every
//! keyword outside it, and every subset keyword on a node it cannot constrain, is refused
//! with its path, so no schema is accepted that the validator would not enforce.

use serde_json::{Map, Value};

use crate::json::{Segment, check_lossless, json_equal};

use super::error::SchemaError;
use super::spec_path::{PathId, SpecPaths};
use super::types::JsonType;

/// Keywords that constrain values; the rest of the subset are annotations.
const CONSTRAINTS: [&str; 8] = [
    "type",
    "oneOf",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
];

/// Annotations: never affect validation (`default` and `examples` are never applied). The
/// `$`-keywords and flags are what schema generators write on every node (zod's
/// `$schema`, pydantic's `title`, OpenAPI's `readOnly`).
const ANNOTATIONS: [&str; 10] = [
    "description",
    "title",
    "default",
    "examples",
    "$schema",
    "$id",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// Keywords that belong to one node type, so they are refused beside `oneOf` and on an
/// untyped node.
const TYPED: [&str; 6] = [
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
];

/// Accepts exactly the enforced subset: one `type` name (`string`, `number`, `integer`,
/// `boolean`, `null`, `array`, `object`) or an exact-one `oneOf` of at least two schemas;
/// on objects `properties`, `required` (declared names only) and boolean
/// `additionalProperties`; on arrays one `items` schema; on scalars a non-empty `enum` of
/// that type and a `const` of that type (a member, when both are given); lossless
/// `title`/`description`/`$schema`/`$id`/`$comment` strings, `deprecated`/`readOnly`/`writeOnly`
/// flags and `default`/`examples` annotations anywhere. `{}` (and an
/// annotation-only schema) accepts any JSON. The first problem in document order is
/// reported (a node's own keywords before its children), with a path starting at `root`.
pub fn check_supported(schema: &Value, root: &str) -> Result<(), SchemaError> {
    let mut paths = SpecPaths::default();
    let mut pending: Vec<(&Value, PathId)> = vec![(schema, None)];
    while let Some((schema, at)) = pending.pop() {
        let Value::Object(keywords) = schema else {
            return Err(paths.error(root, at, "expected a schema object"));
        };
        let children = check_node(keywords, at, &mut paths, root)?;
        pending.extend(children.into_iter().rev());
    }
    Ok(())
}

/// Checks one schema object's own keywords; returns its child schemas in document order.
fn check_node<'s>(
    keywords: &'s Map<String, Value>,
    at: PathId,
    paths: &mut SpecPaths<'s>,
    root: &str,
) -> Result<Vec<(&'s Value, PathId)>, SchemaError> {
    let refuse = |paths: &SpecPaths<'s>, message: String| Err(paths.error(root, at, message));
    for (keyword, argument) in keywords {
        if !CONSTRAINTS.contains(&keyword.as_str()) && !ANNOTATIONS.contains(&keyword.as_str()) {
            return refuse(paths, format!("unsupported keyword \"{keyword}\""));
        }
        match (keyword.as_str(), argument) {
            ("title" | "description" | "$schema" | "$id" | "$comment", Value::String(_)) => {}
            ("title" | "description" | "$schema" | "$id" | "$comment", _) => {
                return refuse(paths, format!("{keyword} must be a string"));
            }
            ("deprecated" | "readOnly" | "writeOnly", Value::Bool(_)) => {}
            ("deprecated" | "readOnly" | "writeOnly", _) => {
                return refuse(paths, format!("{keyword} must be true or false"));
            }
            ("default" | "examples" | "enum" | "const", _) => {
                let keyword_at = paths.child(at, Segment::Key(keyword));
                if let Err(lossy) = check_lossless(argument, &paths.render(root, keyword_at)) {
                    return Err(SchemaError {
                        path: lossy.path,
                        message: format!("not lossless JSON: {}", lossy.reason),
                    });
                }
            }
            _ => {}
        }
    }
    match (keywords.get("type"), keywords.get("oneOf")) {
        (Some(_), Some(_)) => refuse(paths, "\"type\" and \"oneOf\" cannot be combined".into()),
        (None, Some(branches)) => {
            if let Some(keyword) = TYPED.iter().find(|k| keywords.contains_key(**k)) {
                return refuse(paths, format!("{keyword} is not supported beside oneOf"));
            }
            let branches = match branches {
                Value::Array(branches) if branches.len() >= 2 => branches,
                _ => {
                    return refuse(
                        paths,
                        "oneOf must be an array of at least two schemas".into(),
                    );
                }
            };
            let list_at = paths.child(at, Segment::Key("oneOf"));
            Ok(branches
                .iter()
                .enumerate()
                .map(|(index, branch)| (branch, paths.child(list_at, Segment::Index(index))))
                .collect())
        }
        (None, None) => match TYPED.iter().find(|k| keywords.contains_key(**k)) {
            Some(keyword) => refuse(paths, format!("{keyword} requires type or oneOf")),
            None => Ok(Vec::new()),
        },
        (Some(kind), None) => {
            let kind = match kind {
                Value::String(name) => match JsonType::from_name(name) {
                    Some(kind) => kind,
                    None => return refuse(paths, format!("unknown type \"{name}\"")),
                },
                Value::Array(_) => {
                    return refuse(paths, "type arrays are not supported (use oneOf)".into());
                }
                _ => return refuse(paths, "type must be one type name".into()),
            };
            check_typed(keywords, kind, at, paths, root)
        }
    }
}

/// The keywords of a node with one `type`: each must belong to that type.
fn check_typed<'s>(
    keywords: &'s Map<String, Value>,
    kind: JsonType,
    at: PathId,
    paths: &mut SpecPaths<'s>,
    root: &str,
) -> Result<Vec<(&'s Value, PathId)>, SchemaError> {
    let refuse = |paths: &SpecPaths<'s>, message: String| Err(paths.error(root, at, message));
    let name = kind.name();
    for keyword in TYPED.iter().filter(|k| keywords.contains_key(**k)) {
        let belongs = match *keyword {
            "items" => kind == JsonType::Array,
            "enum" | "const" => !matches!(kind, JsonType::Array | JsonType::Object),
            _ => kind == JsonType::Object,
        };
        if !belongs {
            return refuse(
                paths,
                format!("{keyword} is not supported on type \"{name}\""),
            );
        }
    }
    let mut children = Vec::new();
    match kind {
        JsonType::Object => {
            if let Some(open) = keywords.get("additionalProperties")
                && !open.is_boolean()
            {
                return refuse(paths, "additionalProperties must be true or false".into());
            }
            let properties = match keywords.get("properties") {
                None => None,
                Some(Value::Object(properties)) => Some(properties),
                Some(_) => return refuse(paths, "properties must be an object of schemas".into()),
            };
            match keywords.get("required") {
                None => {}
                Some(Value::Array(names)) if names.iter().all(Value::is_string) => {
                    let undeclared = names.iter().filter_map(Value::as_str).find(|name| {
                        !properties.is_some_and(|properties| properties.contains_key(*name))
                    });
                    if let Some(name) = undeclared {
                        return refuse(
                            paths,
                            format!("required names \"{name}\", which is not in properties"),
                        );
                    }
                }
                Some(_) => {
                    return refuse(paths, "required must be an array of property names".into());
                }
            }
            let record_at = paths.child(at, Segment::Key("properties"));
            for (property, schema) in properties.into_iter().flatten() {
                children.push((schema, paths.child(record_at, Segment::Key(property))));
            }
        }
        JsonType::Array => match keywords.get("items") {
            None => {}
            Some(Value::Array(_)) => {
                return refuse(
                    paths,
                    "items must be one schema (tuple items are unsupported)".into(),
                );
            }
            Some(items) => children.push((items, paths.child(at, Segment::Key("items")))),
        },
        scalar => {
            let members = match keywords.get("enum") {
                None => None,
                Some(Value::Array(members)) if !members.is_empty() => Some(members),
                Some(_) => return refuse(paths, "enum must be a non-empty array".into()),
            };
            let phrase = scalar.phrase();
            for (index, member) in members.into_iter().flatten().enumerate() {
                if !scalar.admits(member) {
                    return refuse(paths, format!("enum member {index} is not {phrase}"));
                }
            }
            if let Some(constant) = keywords.get("const") {
                if !scalar.admits(constant) {
                    return refuse(paths, format!("const is not {phrase}"));
                }
                if members.is_some_and(|members| !members.iter().any(|m| json_equal(m, constant))) {
                    return refuse(paths, "const must be one of the enum members".into());
                }
            }
        }
    }
    Ok(children)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
