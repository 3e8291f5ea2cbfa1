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
mod tests;
