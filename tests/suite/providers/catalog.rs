//! A catalog of client tools for the provider tests: 60 DSL tools that together use every
//! construct of the DSL (each scalar type, `enum`, `const`, arrays, nested and open or
//! closed objects, `json`, `oneOf`, every annotation, required and optional parameters),
//! plus raw-schema tools from the discovery catalog.

#![allow(clippy::unwrap_used)]

use crate::support::catalog::Catalog;
use serde_json::{Value, json};

/// Every DSL construct, as one parameter schema each (`required` added by the caller).
pub fn constructs() -> Vec<(&'static str, Value)> {
    vec![
        (
            "string",
            json!({ "type": "string", "description": "A name." }),
        ),
        ("number", json!({ "type": "number", "title": "Ratio" })),
        ("integer", json!({ "type": "integer", "default": 3 })),
        ("boolean", json!({ "type": "boolean", "examples": [true] })),
        ("null", json!({ "type": "null" })),
        (
            "string_enum",
            json!({ "type": "string", "enum": ["fast", "deep"] }),
        ),
        (
            "integer_enum",
            json!({ "type": "integer", "enum": [1, 2, 3] }),
        ),
        ("string_const", json!({ "type": "string", "const": "v1" })),
        ("number_const", json!({ "type": "number", "const": 2.5 })),
        (
            "enum_and_const",
            json!({ "type": "string", "enum": ["a", "b"], "const": "a" }),
        ),
        (
            "strings",
            json!({ "type": "array", "items": { "type": "string" } }),
        ),
        (
            "records",
            json!({ "type": "array", "items": { "type": "object", "properties": {
                "id": { "type": "integer", "required": true }, "note": { "type": "string" }
            }, "additionalProperties": false } }),
        ),
        (
            "nested",
            json!({ "type": "object", "properties": {
                "inner": { "type": "object", "properties": { "depth": { "type": "integer", "required": true } }, "additionalProperties": false }
            }, "additionalProperties": false }),
        ),
        (
            "closed",
            json!({ "type": "object", "properties": { "k": { "type": "string", "required": true } }, "additionalProperties": false }),
        ),
        (
            "open",
            json!({ "type": "object", "properties": { "k": { "type": "string" } }, "additionalProperties": true }),
        ),
        (
            "any",
            json!({ "type": "json", "description": "Any JSON value." }),
        ),
        (
            "scalar_union",
            json!({ "oneOf": [{ "type": "string" }, { "type": "integer" }], "description": "Id or name." }),
        ),
        (
            "object_union",
            json!({ "oneOf": [
                { "type": "object", "properties": { "path": { "type": "string", "required": true } }, "additionalProperties": false },
                { "type": "object", "properties": { "url": { "type": "string", "required": true } }, "additionalProperties": false }
            ] }),
        ),
    ]
}

/// 60 DSL tool specs: tool `i` takes construct `i` (required) and another (optional).
pub fn dsl_tools() -> Vec<Value> {
    let all = constructs();
    (0..60)
        .map(|i| {
            let (first, schema) = &all[i % all.len()];
            let (second, other) = &all[(i * 7 + 3) % all.len()];
            let mut required = schema.clone();
            required["required"] = json!(true);
            json!({
                "name": format!("tool_{i:02}_{first}"),
                "description": format!("Takes a {first} and maybe a {second}."),
                "parameters": { "a": required, "b": other },
                "output": { "schema": { "type": "json" } },
            })
        })
        .collect()
}

/// The first `n` tools of the discovery catalog as raw-schema client tools.
pub fn raw_tools(n: usize) -> Vec<Value> {
    Catalog::load()
        .tools
        .into_iter()
        .take(n)
        .map(|tool| {
            json!({
                "name": tool.name,
                "description": tool.description,
                "inputSchema": tool.input_schema,
                "output": { "schema": { "type": "json" } },
            })
        })
        .collect()
}
