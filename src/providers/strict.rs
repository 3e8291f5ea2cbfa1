//! OpenAI's strict function schemas (Structured Outputs' subset): every object lists all
//! its properties in `required` and sets `additionalProperties: false`, an optional
//! property becomes a union with `null` (the host drops those nulls again before
//! validating: [`super::arguments`]), `oneOf` becomes `anyOf`, `default` and `examples`
//! move into the description, and keywords outside the subset are dropped. A schema
//! strict mode cannot express (an open map, an untyped value, `allOf`, conditionals, a
//! root that is not an object, the size limits) is sent with `strict: false` instead,
//! unchanged but for `$schema`, and the report says why.

use super::report::{MAX_DEPTH, Report, child, compact, describe};
use serde_json::{Map, Value, json};

/// String formats strict mode accepts.
const FORMATS: [&str; 9] = [
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];
/// Keywords kept as they are.
const KEPT: [&str; 16] = [
    "type",
    "title",
    "description",
    "enum",
    "const",
    "$ref",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];
/// Keywords strict mode cannot honour: the tool goes out non-strict.
const BLOCKING: [&str; 15] = [
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "patternProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "propertyNames",
    "prefixItems",
    "contains",
    "additionalItems",
];
/// Documented limits.
const MAX_PROPERTIES: usize = 5000;
const MAX_OBJECT_NESTING: usize = 10;
const MAX_ENUM_VALUES: usize = 1000;

/// A tool's `parameters` for OpenAI and whether it can be `strict`.
pub struct OpenAiParameters {
    pub schema: Value,
    pub strict: bool,
}

/// Builds `parameters` from an input schema, reporting what it weakened into `report`.
pub fn parameters(input: &Value, report: &mut Report) -> OpenAiParameters {
    let mut walk = Walk::default();
    let schema = walk.node(input, "", 0, 0, false, true);
    if walk.properties > MAX_PROPERTIES {
        walk.block(
            "",
            format!("more than {MAX_PROPERTIES} object properties in all"),
        );
    }
    if walk.enum_values > MAX_ENUM_VALUES {
        walk.block(
            "",
            format!("more than {MAX_ENUM_VALUES} enum values in all"),
        );
    }
    if walk.blockers.changes.is_empty() {
        report.changes.extend(walk.weakened.changes);
        return OpenAiParameters {
            schema,
            strict: true,
        };
    }
    for change in walk.blockers.changes {
        report.weaken(
            &change.path,
            format!(
                "strict mode off: {}; the provider does not enforce this tool's schema",
                change.change
            ),
        );
    }
    OpenAiParameters {
        schema: loose(input, "", 0, report),
        strict: false,
    }
}

#[derive(Default)]
struct Walk {
    weakened: Report,
    blockers: Report,
    properties: usize,
    enum_values: usize,
}

impl Walk {
    fn block(&mut self, path: &str, why: impl Into<String>) {
        self.blockers.weaken(path, why);
    }

    /// One schema node in strict form; `optional` makes it nullable.
    fn node(
        &mut self,
        schema: &Value,
        path: &str,
        depth: usize,
        objects: usize,
        optional: bool,
        root: bool,
    ) -> Value {
        if depth > MAX_DEPTH {
            self.block(
                path,
                format!("nested deeper than {MAX_DEPTH} schema levels"),
            );
            return json!({});
        }
        let Value::Object(map) = schema else {
            self.block(
                path,
                format!("the schema {} admits any value or none", compact(schema)),
            );
            return json!({});
        };
        let mut out = Map::new();
        let mut notes: Vec<String> = Vec::new();
        for (key, value) in map {
            match key.as_str() {
                "properties"
                | "required"
                | "additionalProperties"
                | "items"
                | "anyOf"
                | "oneOf"
                | "$defs"
                | "definitions" => {}
                "$schema" | "$id" | "$comment" => {}
                "default" => notes.push(format!("default: {}", compact(value))),
                "examples" => notes.push(format!("examples: {}", compact(value))),
                "format" => match value.as_str() {
                    Some(format) if FORMATS.contains(&format) => {
                        out.insert(key.clone(), value.clone());
                    }
                    _ => {
                        notes.push(format!("format: {}", compact(value)));
                        self.weakened.weaken(
                            path,
                            format!(
                                "format {} is not one strict mode knows: moved into the description, not enforced by the provider",
                                compact(value)
                            ),
                        );
                    }
                },
                key if KEPT.contains(&key) => {
                    if key == "enum" {
                        self.enum_values += value.as_array().map_or(0, Vec::len);
                    }
                    out.insert(key.to_owned(), value.clone());
                }
                key if BLOCKING.contains(&key) => {
                    self.block(
                        &child(path, key),
                        format!("`{key}` is outside strict mode's subset"),
                    );
                }
                other => {
                    self.weakened.weaken(
                        &child(path, other),
                        format!("`{other}` is outside strict mode's subset: dropped, not enforced by the provider"),
                    );
                }
            }
        }
        if !notes.is_empty() {
            let description = describe(map.get("description"), &notes.join("; "));
            out.insert("description".into(), description);
        }
        for defs in ["$defs", "definitions"] {
            if let Some(Value::Object(entries)) = map.get(defs) {
                let at = child(path, defs);
                let built: Map<String, Value> = entries
                    .iter()
                    .map(|(name, entry)| {
                        let value =
                            self.node(entry, &child(&at, name), depth + 1, objects, false, false);
                        (name.clone(), value)
                    })
                    .collect();
                out.insert(defs.into(), Value::Object(built));
            }
        }
        let is_object =
            map.get("type").is_some_and(|t| names(t, "object")) || map.contains_key("properties");
        if is_object {
            self.object(map, &mut out, path, depth, objects, root);
        }
        if let Some(items) = map.get("items") {
            match items {
                Value::Object(_) => {
                    let built = self.node(
                        items,
                        &child(path, "items"),
                        depth + 1,
                        objects,
                        false,
                        false,
                    );
                    out.insert("items".into(), built);
                }
                _ => self.block(&child(path, "items"), "`items` is not one schema"),
            }
        }
        for key in ["anyOf", "oneOf"] {
            let Some(branches) = map.get(key) else {
                continue;
            };
            let at = child(path, key);
            let Some(branches) = branches.as_array() else {
                self.block(&at, format!("`{key}` is not an array"));
                continue;
            };
            if root {
                self.block(&at, format!("the root is a `{key}`, not an object"));
            }
            if key == "oneOf" {
                self.weakened.weaken(
                    &at,
                    "oneOf became anyOf (strict mode has no oneOf): a value matching several branches is no longer refused by the provider",
                );
            }
            let mut built: Vec<Value> = match out.remove("anyOf") {
                Some(Value::Array(existing)) => existing,
                _ => Vec::new(),
            };
            for (index, branch) in branches.iter().enumerate() {
                built.push(self.node(
                    branch,
                    &child(&at, &index.to_string()),
                    depth + 1,
                    objects,
                    false,
                    false,
                ));
            }
            out.insert("anyOf".into(), Value::Array(built));
        }
        let typed = ["type", "anyOf", "$ref", "enum", "const"]
            .iter()
            .any(|key| out.contains_key(*key));
        if !typed {
            self.block(path, "a schema without a type admits any value");
        }
        if root && !is_object {
            self.block(path, "the root is not an object schema");
        }
        if optional {
            nullable(out, path, &mut self.weakened, schema)
        } else {
            Value::Object(out)
        }
    }

    /// An object's properties, all required, and `additionalProperties: false`.
    fn object(
        &mut self,
        map: &Map<String, Value>,
        out: &mut Map<String, Value>,
        path: &str,
        depth: usize,
        objects: usize,
        root: bool,
    ) {
        let objects = objects + 1;
        if objects > MAX_OBJECT_NESTING {
            self.block(
                path,
                format!("objects nested more than {MAX_OBJECT_NESTING} levels"),
            );
        }
        let empty = Map::new();
        let properties = match map.get("properties") {
            Some(Value::Object(properties)) => properties,
            Some(_) => {
                self.block(&child(path, "properties"), "`properties` is not an object");
                &empty
            }
            None => &empty,
        };
        match map.get("additionalProperties") {
            None | Some(Value::Bool(false)) => {}
            Some(_) => self.block(
                &child(path, "additionalProperties"),
                "additionalProperties admits keys strict mode would have to refuse",
            ),
        }
        if properties.is_empty()
            && !root
            && map.get("additionalProperties") != Some(&Value::Bool(false))
        {
            self.block(path, "an object without properties admits any keys");
        }
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        self.properties += properties.len();
        let at = child(path, "properties");
        let mut built = Map::new();
        for (name, property) in properties {
            let optional = !required.contains(&name.as_str());
            let value = self.node(
                property,
                &child(&at, name),
                depth + 1,
                objects,
                optional,
                false,
            );
            built.insert(name.clone(), value);
        }
        out.entry("type").or_insert_with(|| Value::from("object"));
        let names: Vec<Value> = built.keys().map(|name| Value::from(name.clone())).collect();
        out.insert("properties".into(), Value::Object(built));
        out.insert("required".into(), Value::Array(names));
        out.insert("additionalProperties".into(), Value::Bool(false));
    }
}

/// Whether a `type` (a name or a list) names `name`.
fn names(types: &Value, name: &str) -> bool {
    match types {
        Value::String(t) => t == name,
        Value::Array(list) => list.iter().any(|t| t == name),
        _ => false,
    }
}

/// An optional property as a required one that also admits `null`.
fn nullable(
    mut out: Map<String, Value>,
    path: &str,
    report: &mut Report,
    original: &Value,
) -> Value {
    if super::report::admits_null(original) {
        report.weaken(
            path,
            "optional and nullable: strict mode requires it, so leaving it out and sending null become one answer (null)",
        );
        return Value::Object(out);
    }
    let simple =
        out.contains_key("type") && !out.contains_key("const") && !out.contains_key("anyOf");
    if simple {
        let types = match out.remove("type") {
            Some(Value::Array(mut list)) => {
                list.push(Value::from("null"));
                list
            }
            Some(single) => vec![single, Value::from("null")],
            None => vec![Value::from("null")],
        };
        out.insert("type".into(), Value::Array(types));
        if let Some(Value::Array(values)) = out.get_mut("enum") {
            values.push(Value::Null);
        }
        return Value::Object(out);
    }
    if let Some(Value::Array(branches)) = out.get_mut("anyOf") {
        branches.push(json!({ "type": "null" }));
        return Value::Object(out);
    }
    let mut wrapper = Map::new();
    if let Some(description) = out.remove("description") {
        wrapper.insert("description".into(), description);
    }
    wrapper.insert(
        "anyOf".into(),
        json!([Value::Object(out), { "type": "null" }]),
    );
    Value::Object(wrapper)
}

/// A non-strict copy: `$schema` removed, parts deeper than [`MAX_DEPTH`] left out.
fn loose(schema: &Value, path: &str, depth: usize, report: &mut Report) -> Value {
    if depth > MAX_DEPTH {
        report.weaken(
            path,
            format!("nested deeper than {MAX_DEPTH} schema levels: left out"),
        );
        return json!({});
    }
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, _)| key.as_str() != "$schema")
                .map(|(key, value)| {
                    (
                        key.clone(),
                        loose(value, &child(path, key), depth + 1, report),
                    )
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(index, item)| {
                    loose(item, &child(path, &index.to_string()), depth + 1, report)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}
