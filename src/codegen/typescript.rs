//! JSON Schema → TypeScript type text, with an explicit work stack so that schema depth
//! never reaches the call stack.

use std::collections::HashMap;

use serde_json::Value;

use super::schema_plan::{Alternative, plan};
use super::ts_text::{doc_comment, indentation, json_string, property_key};

/// The TypeScript type for `schema`, rendered at indentation level 0. Never fails: a node
/// outside the supported subset becomes `unknown` and the rest of the schema still renders.
/// Same input, byte-identical output.
pub fn json_schema_to_ts(schema: &Value) -> String {
    let mut out = String::new();
    write_type(schema, 0, &mut out);
    out
}

/// One step of the rendering, in output order once popped from the work stack.
enum Piece<'a> {
    Text(&'static str),
    Owned(String),
    /// A line break followed by the indentation of the level.
    Line(usize),
    /// A schema node whose first line continues the current line and whose nested lines
    /// are indented from the level.
    Type {
        schema: &'a Value,
        level: usize,
    },
    /// An `enum`/`const` value as a literal type.
    Literal(&'a Value),
}

/// Appends the type for `schema` to `out`, as if its first line began at `level`.
pub(super) fn write_type(schema: &Value, level: usize, out: &mut String) {
    let mut compatibility = JsonCompatibility::default();
    let mut stack = vec![Piece::Type { schema, level }];
    let mut pieces = Vec::new();
    while let Some(piece) = stack.pop() {
        match piece {
            Piece::Text(text) => out.push_str(text),
            Piece::Owned(text) => out.push_str(&text),
            Piece::Line(level) => {
                out.push('\n');
                out.push_str(indentation(level));
            }
            Piece::Type { schema, level } => {
                type_pieces(schema, level, &mut compatibility, &mut pieces);
            }
            Piece::Literal(value) => literal_pieces(value, &mut pieces),
        }
        stack.extend(pieces.drain(..).rev());
    }
}

/// The pieces of one schema node, children left as further [`Piece::Type`]s.
fn type_pieces<'a>(
    schema: &'a Value,
    level: usize,
    compatibility: &mut JsonCompatibility,
    pieces: &mut Vec<Piece<'a>>,
) {
    let alternatives = plan(schema);
    if alternatives.is_empty() {
        pieces.push(Piece::Text("never"));
    }
    for (index, alternative) in alternatives.into_iter().enumerate() {
        if index > 0 {
            pieces.push(Piece::Text(" | "));
        }
        match alternative {
            Alternative::Keyword(keyword) => pieces.push(Piece::Text(keyword)),
            Alternative::Literal(value) => pieces.push(Piece::Literal(value)),
            Alternative::Branch(schema) => pieces.push(Piece::Type { schema, level }),
            Alternative::Array(None) => pieces.push(Piece::Text("JsonValue[]")),
            Alternative::Array(Some(items)) => {
                let is_union = plan(items).len() > 1;
                if is_union {
                    pieces.push(Piece::Text("("));
                }
                pieces.push(Piece::Type {
                    schema: items,
                    level,
                });
                pieces.push(Piece::Text(if is_union { ")[]" } else { "[]" }));
            }
            Alternative::Object(shape) if shape.properties.is_empty() && !shape.open => {
                pieces.push(Piece::Text("Record<string, never>"));
            }
            Alternative::Object(shape) => {
                pieces.push(Piece::Text("{"));
                let mut all_json = true;
                for property in &shape.properties {
                    let description = property
                        .schema
                        .and_then(|schema| schema.get("description"))
                        .and_then(Value::as_str)
                        .and_then(|description| doc_comment(description, level + 1));
                    if let Some(comment) = description {
                        pieces.push(Piece::Line(level + 1));
                        pieces.push(Piece::Owned(comment));
                    }
                    pieces.push(Piece::Line(level + 1));
                    pieces.push(Piece::Owned(property_key(property.name)));
                    pieces.push(Piece::Text(if property.required { ": " } else { "?: " }));
                    match property.schema {
                        Some(schema) => {
                            if shape.open && all_json {
                                all_json = compatibility.is_json(schema);
                            }
                            pieces.push(Piece::Type {
                                schema,
                                level: level + 1,
                            });
                        }
                        None => pieces.push(Piece::Text("JsonValue")),
                    }
                    pieces.push(Piece::Text(";"));
                }
                if shape.open {
                    let all_required = shape.properties.iter().all(|property| property.required);
                    pieces.push(Piece::Line(level + 1));
                    pieces.push(Piece::Text(match (all_json, all_required) {
                        (true, true) => "[key: string]: JsonValue;",
                        (true, false) => "[key: string]: JsonValue | undefined;",
                        (false, _) => "[key: string]: unknown;",
                    }));
                }
                pieces.push(Piece::Line(level));
                pieces.push(Piece::Text("}"));
            }
        }
    }
}

/// The pieces of a literal type: JSON text, except that an empty object is written
/// `Record<string, never>`, since the TypeScript type `{}` means any non-nullish value.
fn literal_pieces<'a>(value: &'a Value, pieces: &mut Vec<Piece<'a>>) {
    match value {
        Value::Null => pieces.push(Piece::Text("null")),
        Value::Bool(true) => pieces.push(Piece::Text("true")),
        Value::Bool(false) => pieces.push(Piece::Text("false")),
        Value::Number(number) => pieces.push(Piece::Owned(number.to_string())),
        Value::String(text) => pieces.push(Piece::Owned(json_string(text))),
        Value::Array(items) => {
            pieces.push(Piece::Text("["));
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    pieces.push(Piece::Text(","));
                }
                pieces.push(Piece::Literal(item));
            }
            pieces.push(Piece::Text("]"));
        }
        Value::Object(members) if members.is_empty() => {
            pieces.push(Piece::Text("Record<string, never>"));
        }
        Value::Object(members) => {
            pieces.push(Piece::Text("{"));
            for (index, (key, member)) in members.iter().enumerate() {
                if index > 0 {
                    pieces.push(Piece::Text(","));
                }
                pieces.push(Piece::Owned(json_string(key)));
                pieces.push(Piece::Text(":"));
                pieces.push(Piece::Literal(member));
            }
            pieces.push(Piece::Text("}"));
        }
    }
}

/// Whether a node's type is assignable to `JsonValue`. TypeScript (under `--strict`)
/// requires every member of an object type to be assignable to its index signature, and an
/// optional member's type includes `undefined`; so an open object's index signature is the
/// narrowest valid one: `JsonValue` when all its members are required JSON types (then the
/// object itself is a `JsonValue`), `JsonValue | undefined` when some JSON member is
/// optional, `unknown` when a member is not JSON (has `unknown` inside, or is such an open
/// object). Answers are memoized by node address, so one render visits each node a bounded
/// number of times however deeply open objects nest.
#[derive(Default)]
struct JsonCompatibility {
    known: HashMap<*const Value, bool>,
}

impl JsonCompatibility {
    fn is_json(&mut self, root: &Value) -> bool {
        let mut stack = vec![(root, false)];
        while let Some((node, children_known)) = stack.pop() {
            if self.known.contains_key(&std::ptr::from_ref(node)) {
                continue;
            }
            let alternatives = plan(node);
            let mut children = Vec::new();
            let mut is_json = true;
            for alternative in &alternatives {
                match alternative {
                    Alternative::Keyword(keyword) => is_json &= *keyword != "unknown",
                    Alternative::Literal(_) | Alternative::Array(None) => {}
                    Alternative::Branch(child) | Alternative::Array(Some(child)) => {
                        children.push(*child);
                    }
                    Alternative::Object(shape) => {
                        is_json &= !shape.open || shape.properties.iter().all(|p| p.required);
                        children.extend(shape.properties.iter().filter_map(|p| p.schema));
                    }
                }
            }
            if children_known {
                let children_json = children.iter().all(|child| {
                    self.known
                        .get(&std::ptr::from_ref(*child))
                        .copied()
                        .unwrap_or(false)
                });
                self.known
                    .insert(std::ptr::from_ref(node), is_json && children_json);
            } else {
                stack.push((node, true));
                stack.extend(children.into_iter().map(|child| (child, false)));
            }
        }
        self.known
            .get(&std::ptr::from_ref(root))
            .copied()
            .unwrap_or(false)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
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
}
