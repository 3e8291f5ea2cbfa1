//! Tests of the TypeScript SDK text: declarations, doc comments and the exact types of each schema shape.

use serde_json::json;

use super::*;

fn check(schema: Value, expected: &str) {
    assert_eq!(json_schema_to_ts(&schema), expected, "schema: {schema}");
}

#[test]
fn primitives() {
    check(json!({"type": "string"}), "string");
    check(json!({"type": "number"}), "number");
    check(json!({"type": "integer"}), "number");
    check(json!({"type": "boolean"}), "boolean");
    check(json!({"type": "null"}), "null");
    check(
        json!({"type": "string", "minLength": 1, "format": "uri", "default": "x"}),
        "string",
    );
}

#[test]
fn any_json() {
    check(json!({}), "JsonValue");
    check(
        json!({"description": "anything", "title": "Any", "x-vendor": 1}),
        "JsonValue",
    );
    check(json!(true), "JsonValue");
}

#[test]
fn type_arrays_are_unions_without_duplicates() {
    check(json!({"type": ["string", "null"]}), "string | null");
    check(
        json!({"type": ["integer", "number", "string", "integer"]}),
        "number | string",
    );
    check(json!({"type": ["string"]}), "string");
    check(
        json!({"type": ["object", "null"], "properties": {"a": {"type": "string"}}}),
        "{\n  a?: string;\n  [key: string]: JsonValue | undefined;\n} | null",
    );
    check(
        json!({"type": ["array", "boolean"], "items": {"type": "number"}}),
        "number[] | boolean",
    );
}

#[test]
fn arrays() {
    check(
        json!({"type": "array", "items": {"type": "string"}}),
        "string[]",
    );
    check(json!({"type": "array"}), "JsonValue[]");
    check(json!({"type": "array", "items": {}}), "JsonValue[]");
    check(json!({"type": "array", "items": true}), "JsonValue[]");
    check(
        json!({"type": "array", "items": {"type": ["string", "number"]}}),
        "(string | number)[]",
    );
    check(
        json!({"type": "array", "items": {"enum": ["a", "b"]}}),
        "(\"a\" | \"b\")[]",
    );
    check(
        json!({"type": "array", "items": {"enum": ["a"]}}),
        "\"a\"[]",
    );
    check(json!({"type": "array", "items": {"enum": []}}), "never[]");
    check(
        json!({"type": "array", "items": {"type": "array", "items": {"type": "integer"}}}),
        "number[][]",
    );
    check(
        json!({"type": "array", "items": {"oneOf": [{"type": "string"}]}}),
        "string[]",
    );
    check(
        json!({"type": "array", "items": {"oneOf": [{"oneOf": [{"type": ["string", "null"]}]}]}}),
        "(string | null)[]",
    );
    check(
        json!({"type": "array", "items": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"], "additionalProperties": false}}),
        "{\n  id: number;\n}[]",
    );
    check(json!({"items": {"type": "string"}}), "string[]");
}

#[test]
fn objects() {
    check(
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Absolute file path"},
                "offset": {"type": "number"},
                "my-key": {"type": "boolean"},
                "__proto__": {"type": "null"}
            },
            "required": ["path", "my-key"]
        }),
        "{\n  /** Absolute file path */\n  path: string;\n  offset?: number;\n  \"my-key\": boolean;\n  \"__proto__\"?: null;\n  [key: string]: JsonValue | undefined;\n}",
    );
    check(
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}),
        "{\n  a?: string;\n}",
    );
    check(
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": true}),
        "{\n  a?: string;\n  [key: string]: JsonValue | undefined;\n}",
    );
    check(
        json!({"type": "object"}),
        "{\n  [key: string]: JsonValue;\n}",
    );
    check(
        json!({"type": "object", "properties": {}}),
        "{\n  [key: string]: JsonValue;\n}",
    );
    check(
        json!({"type": "object", "additionalProperties": false}),
        "Record<string, never>",
    );
    check(
        json!({"properties": {"a": {"type": "number"}}, "required": ["a"]}),
        "{\n  a: number;\n  [key: string]: JsonValue;\n}",
    );
}

#[test]
fn undeclared_required_keys_follow_declared_ones() {
    check(
        json!({"type": "object", "properties": {"a": {}}, "required": ["z", "a", "z", "my key"], "additionalProperties": false}),
        "{\n  a: JsonValue;\n  z: JsonValue;\n  \"my key\": JsonValue;\n}",
    );
}

#[test]
fn nested_objects_indent() {
    check(
        json!({
            "type": "object",
            "properties": {
                "config": {
                    "type": "object",
                    "description": "Connection settings.\nAll optional.",
                    "properties": {
                        "host": {"type": "string", "description": "Host name"},
                        "ports": {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "integer"}}, "additionalProperties": false}}
                    },
                    "additionalProperties": false
                }
            },
            "required": ["config"],
            "additionalProperties": false
        }),
        "{
  /**
   * Connection settings.
   * All optional.
   */
  config: {
    /** Host name */
    host?: string;
    ports?: {
      n?: number;
    }[];
  };
}",
    );
}

#[test]
fn descriptions_cannot_escape_their_comment() {
    check(
        json!({"type": "object", "properties": {"a": {"type": "string", "description": "x */ y"}}, "additionalProperties": false}),
        "{\n  /** x *\\/ y */\n  a?: string;\n}",
    );
    check(
        json!({"type": "object", "properties": {"a": {"type": "string", "description": 5}}, "additionalProperties": false}),
        "{\n  a?: string;\n}",
    );
}

#[test]
fn enums_and_consts_are_literal_types() {
    check(json!({"enum": ["red", "green"]}), "\"red\" | \"green\"");
    check(json!({"type": "string", "enum": ["only"]}), "\"only\"");
    check(
        json!({"enum": [1, -2.5, 1e3, true, false, null]}),
        "1 | -2.5 | 1000.0 | true | false | null",
    );
    check(json!({"enum": []}), "never");
    check(json!({"const": "fixed"}), "\"fixed\"");
    check(json!({"const": 42, "enum": [1, 2]}), "42");
    check(
        json!({"const": "quote\" and \\ and\nline"}),
        "\"quote\\\" and \\\\ and\\nline\"",
    );
    check(
        json!({"enum": [[1, "a"], {"k": [true], "my key": {}}, {}, []]}),
        "[1,\"a\"] | {\"k\":[true],\"my key\":Record<string, never>} | Record<string, never> | []",
    );
    check(json!({"enum": "red"}), "unknown");
}

#[test]
fn one_of_is_a_union_of_branches() {
    check(
        json!({"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "number"}}, {"const": 0}]}),
        "string | number[] | 0",
    );
    check(
        json!({"oneOf": [
            {"type": "object", "properties": {"kind": {"const": "a"}}, "required": ["kind"], "additionalProperties": false},
            {"type": "null"}
        ]}),
        "{\n  kind: \"a\";\n} | null",
    );
    check(json!({"oneOf": [{"type": "integer"}]}), "number");
    check(
        json!({"oneOf": [{"enum": [1, 2]}, {"type": "string"}]}),
        "1 | 2 | string",
    );
    check(json!({"oneOf": []}), "never");
    check(json!({"oneOf": {"type": "string"}}), "unknown");
    check(
        json!({"description": "d", "oneOf": [{"type": "string"}, {"type": "null"}]}),
        "string | null",
    );
}

#[test]
fn unsupported_nodes_degrade_alone() {
    for &keyword in crate::codegen::schema_plan::UNSUPPORTED_KEYWORDS {
        check(json!({"type": "string", keyword: {}}), "unknown");
    }
    check(json!({"type": "strin"}), "unknown");
    check(json!({"type": ["string", "date"]}), "unknown");
    check(json!({"type": ["string", 1]}), "unknown");
    check(json!({"type": []}), "unknown");
    check(json!({"type": 7}), "unknown");
    check(
        json!({"type": "array", "items": [{"type": "string"}]}),
        "unknown",
    );
    check(json!({"type": "array", "items": 3}), "unknown");
    check(
        json!({"type": "object", "additionalProperties": {"type": "string"}}),
        "unknown",
    );
    check(json!({"type": "object", "properties": []}), "unknown");
    check(json!({"type": "object", "required": "a"}), "unknown");
    check(json!({"type": "object", "required": [1]}), "unknown");
    check(json!({"properties": {}, "items": {}}), "unknown");
    check(
        json!({"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}),
        "unknown",
    );
    check(json!(false), "unknown");
    check(json!(null), "unknown");
    check(json!("string"), "unknown");
    check(
        json!({"type": "array", "items": {"$ref": "#/$defs/item"}}),
        "unknown[]",
    );
    check(json!({"type": "array", "items": false}), "unknown[]");
    check(
        json!({"oneOf": [{"type": "string"}, {"anyOf": []}]}),
        "string | unknown",
    );
}

#[test]
fn unknown_members_turn_the_open_index_signature_unknown() {
    check(
        json!({
            "$defs": {"node": {"type": "string"}},
            "type": "object",
            "properties": {
                "ref": {"$ref": "#/$defs/node", "description": "Recursive"},
                "ok": {"type": "string"}
            },
            "required": ["ref"]
        }),
        "{\n  /** Recursive */\n  ref: unknown;\n  ok?: string;\n  [key: string]: unknown;\n}",
    );
    check(
        json!({
            "type": "object",
            "properties": {
                "outer": {
                    "type": "object",
                    "properties": {"deep": {"type": "array", "items": {"oneOf": [{"type": "null"}, {"not": {}}]}}},
                    "additionalProperties": false
                }
            }
        }),
        "{\n  outer?: {\n    deep?: (null | unknown)[];\n  };\n  [key: string]: unknown;\n}",
    );
    check(
        json!({
            "type": "object",
            "properties": {
                "closed": {"type": "object", "properties": {"x": {"allOf": []}}, "additionalProperties": false},
                "open": {"type": "object", "properties": {"y": {"type": "string"}}}
            },
            "additionalProperties": false
        }),
        "{\n  closed?: {\n    x?: unknown;\n  };\n  open?: {\n    y?: string;\n    [key: string]: JsonValue | undefined;\n  };\n}",
    );
}

#[test]
fn open_index_signatures_are_the_narrowest_valid_type() {
    let open = |properties: Value, required: Value| json!({"type": "object", "properties": properties, "required": required});
    check(
        open(json!({"a": {"type": "string"}}), json!(["a"])),
        "{\n  a: string;\n  [key: string]: JsonValue;\n}",
    );
    check(
        open(json!({"a": {"type": "string"}}), json!([])),
        "{\n  a?: string;\n  [key: string]: JsonValue | undefined;\n}",
    );
    check(
        open(
            json!({"child": open(json!({"x": {"type": "number"}}), json!(["x"]))}),
            json!(["child"]),
        ),
        "{\n  child: {\n    x: number;\n    [key: string]: JsonValue;\n  };\n  [key: string]: JsonValue;\n}",
    );
    check(
        open(
            json!({"child": open(json!({"x": {"type": "number"}}), json!([]))}),
            json!(["child"]),
        ),
        "{\n  child: {\n    x?: number;\n    [key: string]: JsonValue | undefined;\n  };\n  [key: string]: unknown;\n}",
    );
    check(
        open(
            json!({"child": {"type": "object", "properties": {"x": {"type": "number"}}, "additionalProperties": false}}),
            json!(["child"]),
        ),
        "{\n  child: {\n    x?: number;\n  };\n  [key: string]: JsonValue;\n}",
    );
    check(
        open(
            json!({"list": {"type": "array", "items": open(json!({"x": {}}), json!([]))}}),
            json!(["list"]),
        ),
        "{\n  list: {\n    x?: JsonValue;\n    [key: string]: JsonValue | undefined;\n  }[];\n  [key: string]: unknown;\n}",
    );
    check(
        open(
            json!({"u": {"oneOf": [{"type": "null"}, open(json!({}), json!([]))]}}),
            json!(["u"]),
        ),
        "{\n  u: null | {\n    [key: string]: JsonValue;\n  };\n  [key: string]: JsonValue;\n}",
    );
}

#[test]
fn rendering_is_deterministic() {
    let schema = json!({
        "type": "object",
        "properties": {"b": {"enum": [2, 1]}, "a": {"type": ["null", "string"]}},
        "required": ["b"]
    });
    let first = json_schema_to_ts(&schema);
    assert_eq!(first, json_schema_to_ts(&schema.clone()));
    assert_eq!(
        first,
        "{\n  b: 2 | 1;\n  a?: null | string;\n  [key: string]: JsonValue | undefined;\n}"
    );
}

/// An object value built by moving `members` in: `json!` would deep-copy (and later
/// recursively drop) an interpolated deep value.
fn object<const N: usize>(members: [(&str, Value); N]) -> Value {
    Value::Object(
        members
            .into_iter()
            .map(|(key, member)| (key.to_owned(), member))
            .collect(),
    )
}

/// Builds `depth` wrappings of `leaf` from the inside out, without recursion.
fn nest(depth: usize, leaf: Value, wrap: impl Fn(Value) -> Value) -> Value {
    (0..depth).fold(leaf, |inner, _| wrap(inner))
}

/// Drops `value` without serde_json's recursive `Drop`: children are detached first.
fn dismantle(value: Value) {
    let mut stack = vec![value];
    while let Some(mut node) = stack.pop() {
        match &mut node {
            Value::Array(items) => stack.append(items),
            Value::Object(members) => {
                stack.extend(
                    std::mem::take(members)
                        .into_iter()
                        .map(|(_, member)| member),
                );
            }
            _ => {}
        }
    }
}

const DEPTH: usize = 10_000;

#[test]
fn deep_arrays_render_without_recursion() {
    let schema = nest(DEPTH, json!({"type": "string"}), |items| {
        object([("type", json!("array")), ("items", items)])
    });
    let rendered = json_schema_to_ts(&schema);
    dismantle(schema);
    assert_eq!(rendered, format!("string{}", "[]".repeat(DEPTH)));
}

#[test]
fn deep_objects_render_with_capped_indentation() {
    let schema = nest(DEPTH, json!({"$ref": "#"}), |inner| {
        object([
            ("type", json!("object")),
            ("properties", object([("a", inner)])),
            ("required", json!(["a"])),
        ])
    });
    let rendered = json_schema_to_ts(&schema);
    dismantle(schema);
    let mut expected = String::new();
    for level in 0..DEPTH {
        expected.push_str("{\n");
        expected.push_str(indentation(level + 1));
        expected.push_str("a: ");
    }
    expected.push_str("unknown;");
    for level in (0..DEPTH).rev() {
        expected.push('\n');
        expected.push_str(indentation(level + 1));
        expected.push_str("[key: string]: unknown;\n");
        expected.push_str(indentation(level));
        expected.push('}');
        if level > 0 {
            expected.push(';');
        }
    }
    assert_eq!(rendered, expected);
}

#[test]
fn deep_one_of_chains_and_literals_render_without_recursion() {
    let chain = nest(DEPTH, json!({"type": "boolean"}), |branch| {
        object([("oneOf", Value::Array(vec![branch]))])
    });
    let array_of_chain = object([("type", json!("array")), ("items", chain)]);
    assert_eq!(json_schema_to_ts(&array_of_chain), "boolean[]");
    dismantle(array_of_chain);

    let literal = nest(DEPTH, json!(0), |inner| Value::Array(vec![inner]));
    let schema = object([("const", literal)]);
    let rendered = json_schema_to_ts(&schema);
    dismantle(schema);
    assert_eq!(
        rendered,
        format!("{}0{}", "[".repeat(DEPTH), "]".repeat(DEPTH))
    );

    let unions = nest(DEPTH, json!({"type": "null"}), |inner| {
        object([(
            "oneOf",
            Value::Array(vec![json!({"type": "string"}), inner]),
        )])
    });
    let rendered = json_schema_to_ts(&unions);
    dismantle(unions);
    assert_eq!(rendered, format!("{}null", "string | ".repeat(DEPTH)));
}
