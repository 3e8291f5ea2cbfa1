//! Gemini's function `parameters`: the OpenAPI 3.0 subset of its `Schema` (upper-case
//! `type`, `nullable`, `anyOf`, string `enum`s, no `$ref`, no `additionalProperties`).
//! Local `$ref`s are inlined, a type list or a `null` branch becomes `nullable`, `oneOf`
//! becomes `anyOf`, `const` a one-value `enum`; what the subset cannot say (a non-string
//! `enum`, open maps, formats other than Gemini's, `allOf`, conditionals) is moved into
//! the description or dropped, and reported.

use super::report::{MAX_DEPTH, Report, child, compact, describe};
use serde_json::{Map, Value, json};

/// Keywords kept as they are.
const KEPT: [&str; 14] = [
    "title",
    "description",
    "default",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "required",
    "nullable",
];

/// The `parameters` of a declaration, or `None` for a tool without parameters.
pub fn parameters(input: &Value, report: &mut Report) -> Option<Value> {
    let mut walk = Walk {
        root: input,
        report,
        expanding: Vec::new(),
    };
    let schema = walk.node(input, "", 0);
    let empty = schema
        .get("properties")
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty);
    (!empty).then_some(schema)
}

struct Walk<'a, 'r> {
    root: &'a Value,
    report: &'r mut Report,
    /// The `$ref`s being inlined (a reference to one of them is recursive).
    expanding: Vec<&'a str>,
}

impl<'a> Walk<'a, '_> {
    fn node(&mut self, schema: &'a Value, path: &str, depth: usize) -> Value {
        if depth > MAX_DEPTH {
            self.report.weaken(
                path,
                format!("nested deeper than {MAX_DEPTH} schema levels: left out (any value)"),
            );
            return json!({});
        }
        let Value::Object(map) = schema else {
            if schema == &Value::Bool(false) {
                self.report.weaken(
                    path,
                    "the schema `false` admits nothing: Gemini cannot say so (any value)",
                );
            }
            return json!({});
        };
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            return self.reference(reference, map, path, depth);
        }
        let mut out = Map::new();
        let mut notes: Vec<String> = Vec::new();
        let mut nullable = false;
        for (key, value) in map {
            match key.as_str() {
                "type"
                | "properties"
                | "items"
                | "anyOf"
                | "oneOf"
                | "enum"
                | "const"
                | "format"
                | "examples"
                | "additionalProperties" => {}
                "$schema" | "$id" | "$comment" | "$defs" | "definitions" => {}
                key if KEPT.contains(&key) => {
                    out.insert(key.to_owned(), value.clone());
                }
                other => {
                    self.report.weaken(
                        &child(path, other),
                        format!("`{other}` is outside Gemini's schema: dropped, not enforced by the provider"),
                    );
                }
            }
        }
        // The type: one name, or a list (with null: nullable; several others: anyOf).
        let mut types: Vec<&str> = match map.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if types.contains(&"null") {
            nullable = true;
            types.retain(|t| *t != "null");
        }
        match types.as_slice() {
            [] => {}
            [single] => {
                out.insert("type".into(), Value::from(single.to_uppercase()));
            }
            several => {
                let branches: Vec<Value> = several
                    .iter()
                    .map(|t| json!({ "type": t.to_uppercase() }))
                    .collect();
                out.insert("anyOf".into(), Value::Array(branches));
                self.report.weaken(
                    &child(path, "type"),
                    "a list of types became anyOf: its other keywords now apply to every branch",
                );
            }
        }
        if let Some(Value::Object(properties)) = map.get("properties") {
            let at = child(path, "properties");
            let built: Map<String, Value> = properties
                .iter()
                .map(|(name, property)| {
                    (
                        name.clone(),
                        self.node(property, &child(&at, name), depth + 1),
                    )
                })
                .collect();
            out.insert("properties".into(), Value::Object(built));
            out.entry("type").or_insert_with(|| Value::from("OBJECT"));
        }
        match map.get("additionalProperties") {
            None => {}
            Some(Value::Bool(false)) => self.report.weaken(
                &child(path, "additionalProperties"),
                "additionalProperties: false dropped (Gemini's schema cannot close an object): other keys are not refused by the provider",
            ),
            Some(other) => self.report.weaken(
                &child(path, "additionalProperties"),
                format!("additionalProperties {} dropped: the shape of other keys is not told to the model", compact(other)),
            ),
        }
        if let Some(items) = map.get("items") {
            let built = self.node(items, &child(path, "items"), depth + 1);
            out.insert("items".into(), built);
        }
        for key in ["anyOf", "oneOf"] {
            let Some(Value::Array(branches)) = map.get(key) else {
                continue;
            };
            let at = child(path, key);
            if key == "oneOf" {
                self.report.weaken(&at, "oneOf became anyOf: a value matching several branches is no longer refused by the provider");
            }
            let mut built = Vec::new();
            for (index, branch) in branches.iter().enumerate() {
                if branch.get("type").is_some_and(|t| t == "null")
                    && branch.as_object().is_some_and(|b| b.len() == 1)
                {
                    nullable = true;
                    continue;
                }
                built.push(self.node(branch, &child(&at, &index.to_string()), depth + 1));
            }
            if built.len() == 1 && !out.contains_key("anyOf") {
                // One branch left beside null: merged into the node itself.
                if let Some(Value::Object(only)) = built.pop() {
                    for (k, v) in only {
                        out.entry(k).or_insert(v);
                    }
                }
            } else if !built.is_empty() {
                match out.get_mut("anyOf") {
                    Some(Value::Array(existing)) => existing.extend(built),
                    _ => {
                        out.insert("anyOf".into(), Value::Array(built));
                    }
                }
            }
        }
        self.values(map, &mut out, &mut notes, &mut nullable, path);
        if let Some(format) = map.get("format") {
            let kind = out.get("type").and_then(Value::as_str).unwrap_or("");
            let known = matches!(
                (kind, format.as_str()),
                ("STRING", Some("enum" | "date-time"))
                    | ("NUMBER", Some("float" | "double"))
                    | ("INTEGER", Some("int32" | "int64"))
            );
            if known {
                out.insert("format".into(), format.clone());
            } else {
                notes.push(format!("format: {}", compact(format)));
                self.report.weaken(
                    &child(path, "format"),
                    format!("format {} is not one Gemini takes for this type: moved into the description", compact(format)),
                );
            }
        }
        if let Some(Value::Array(examples)) = map.get("examples")
            && let Some(first) = examples.first()
        {
            out.insert("example".into(), first.clone());
        }
        if nullable {
            out.insert("nullable".into(), Value::Bool(true));
        }
        let typed = ["type", "anyOf", "enum"]
            .iter()
            .any(|key| out.contains_key(*key));
        if !typed {
            self.report.weaken(
                path,
                "any JSON value: Gemini's schema has no such type, so it is left without one",
            );
        } else if out.get("type").is_some_and(|t| t == "OBJECT") && !out.contains_key("properties")
        {
            self.report.weaken(
                path,
                "an object with no declared properties: Gemini is not told which keys it takes",
            );
        }
        if !notes.is_empty() {
            let description = describe(out.get("description"), &notes.join("; "));
            out.insert("description".into(), description);
        }
        Value::Object(out)
    }

    /// `enum` and `const`: strings stay an `enum`; other values go into the description.
    fn values(
        &mut self,
        map: &Map<String, Value>,
        out: &mut Map<String, Value>,
        notes: &mut Vec<String>,
        nullable: &mut bool,
        path: &str,
    ) {
        let (key, values): (&str, Vec<&Value>) = match (map.get("enum"), map.get("const")) {
            (Some(Value::Array(values)), _) => ("enum", values.iter().collect()),
            (None, Some(value)) => ("const", vec![value]),
            _ => return,
        };
        if values.iter().any(|v| v.is_null()) {
            *nullable = true;
        }
        let non_null: Vec<&Value> = values.into_iter().filter(|v| !v.is_null()).collect();
        if non_null.is_empty() {
            return;
        }
        if non_null.iter().all(|v| v.is_string()) {
            out.insert(
                "enum".into(),
                Value::Array(non_null.into_iter().cloned().collect()),
            );
            out.entry("type").or_insert_with(|| Value::from("STRING"));
            return;
        }
        let listed: Vec<String> = non_null.iter().map(|v| compact(v)).collect();
        notes.push(format!("one of: {}", listed.join(", ")));
        self.report.weaken(
            &child(path, key),
            format!("`{key}` of non-strings (Gemini takes string enums only): moved into the description, not enforced by the provider"),
        );
    }

    /// A local `$ref` inlined (its siblings' description kept); a recursive or foreign
    /// one becomes any value, reported.
    fn reference(
        &mut self,
        reference: &'a str,
        map: &'a Map<String, Value>,
        path: &str,
        depth: usize,
    ) -> Value {
        let target = reference
            .strip_prefix('#')
            .and_then(|pointer| self.root.pointer(pointer));
        let at = child(path, "$ref");
        let Some(target) = target else {
            self.report.weaken(
                &at,
                format!("$ref {reference:?} does not resolve in this schema: any value"),
            );
            return json!({});
        };
        if self.expanding.contains(&reference) {
            self.report.weaken(
                &at,
                format!("recursive $ref {reference:?}: cut here (any value)"),
            );
            return json!({});
        }
        self.expanding.push(reference);
        let mut built = self.node(target, path, depth + 1);
        self.expanding.pop();
        if let (Some(description), Value::Object(out)) = (map.get("description"), &mut built) {
            out.insert("description".into(), description.clone());
        }
        built
    }
}
