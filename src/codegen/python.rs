//! JSON Schema → Python type text: annotations for one schema node and, inside the SDK
//! render, the named `TypedDict` classes its objects become; explicit work stacks only.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::schema_plan::{Alternative, ObjectShape, plan};
use super::ts_text::json_string;

/// The Python annotation for `schema` outside the SDK render: there is no naming context
/// for a `TypedDict` declaration, so every object is `dict[str, Any]`, and any JSON is
/// `Any`. Never fails; a node outside the supported subset becomes `Any` and only that
/// node. Same input, byte-identical output.
pub fn json_schema_to_py(schema: &Value) -> String {
    let mut out = String::new();
    let mut classes = Classes::standalone();
    write_annotation(schema, "Value", &mut classes, &mut out);
    out
}

/// Python's hard keywords: not usable as attributes or `TypedDict` fields.
const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// Whether `name` can be written as `tools.name` or as a `TypedDict` field: a plain ASCII
/// identifier that is not a keyword and not a dunder-style name (which would collide with
/// class machinery such as `__getitem__`).
pub(super) fn is_plain_name(name: &str) -> bool {
    let mut chars = name.chars();
    let starts = chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_');
    starts
        && chars.all(|rest| rest.is_ascii_alphanumeric() || rest == '_')
        && !KEYWORDS.contains(&name)
        && !name.starts_with("__")
}

/// `name` in PascalCase from its ASCII alphanumeric runs (`read_file` → `ReadFile`); empty
/// when it has none.
pub(super) fn pascal_case(name: &str) -> String {
    let mut out = String::new();
    for word in name.split(|c: char| !c.is_ascii_alphanumeric()) {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            out.push(first.to_ascii_uppercase());
            out.extend(chars);
        }
    }
    out
}

/// Longest class name built from a path of field names.
const MAX_NAME_LEN: usize = 64;

/// `hint` + `suffix`, or `Nested` once that would pass [`MAX_NAME_LEN`] (deep nesting
/// would otherwise make names grow without bound; `claim` numbers the `Nested` classes).
fn extend_hint(hint: &str, suffix: &str) -> String {
    if hint.len() + suffix.len() > MAX_NAME_LEN {
        "Nested".to_owned()
    } else {
        format!("{hint}{suffix}")
    }
}

/// One `TypedDict` still to be declared.
pub(super) struct PendingClass<'a> {
    pub name: String,
    pub shape: ObjectShape<'a>,
}

/// The naming context of the SDK render: which class names are taken and which classes
/// are still to be declared. Without it (`standalone`) objects stay `dict[str, Any]`.
pub(super) struct Classes<'a> {
    named: bool,
    taken: HashSet<String>,
    /// The next suffix to try per base name, so claiming stays linear.
    next_suffix: HashMap<String, usize>,
    pub pending: Vec<PendingClass<'a>>,
}

impl<'a> Classes<'a> {
    fn standalone() -> Self {
        Classes {
            named: false,
            taken: HashSet::new(),
            next_suffix: HashMap::new(),
            pending: Vec::new(),
        }
    }

    /// A naming context in which `reserved` names are already taken.
    pub(super) fn named(reserved: &[&str]) -> Self {
        Classes {
            named: true,
            taken: reserved.iter().map(|name| (*name).to_owned()).collect(),
            next_suffix: HashMap::new(),
            pending: Vec::new(),
        }
    }

    /// `base` if free, else `base2`, `base3`, ...; the name is taken from then on.
    pub(super) fn claim(&mut self, base: &str) -> String {
        let mut name = base.to_owned();
        let suffix = self.next_suffix.entry(base.to_owned()).or_insert(1);
        while self.taken.contains(&name) {
            *suffix += 1;
            name = format!("{base}{suffix}");
        }
        self.taken.insert(name.clone());
        name
    }

    /// Frees a claimed name again (the SDK claims a tool's type name before knowing whether
    /// its root object or an alias will carry it).
    pub(super) fn release(&mut self, name: &str) {
        self.taken.remove(name);
    }

    fn any_json(&self) -> &'static str {
        if self.named { "JsonValue" } else { "Any" }
    }
}

/// One step of rendering an annotation, in output order once popped from the work stack.
enum Piece<'a> {
    Text(&'static str),
    Owned(String),
    /// A schema node; `hint` names the classes its objects become.
    Type {
        schema: &'a Value,
        hint: String,
    },
}

/// Appends the annotation of `schema` to `out`; objects that need a `TypedDict` are named
/// from `hint` and queued in `classes`.
pub(super) fn write_annotation<'a>(
    schema: &'a Value,
    hint: &str,
    classes: &mut Classes<'a>,
    out: &mut String,
) {
    let mut stack = vec![Piece::Type {
        schema,
        hint: hint.to_owned(),
    }];
    let mut pieces = Vec::new();
    while let Some(piece) = stack.pop() {
        match piece {
            Piece::Text(text) => out.push_str(text),
            Piece::Owned(text) => out.push_str(&text),
            Piece::Type { schema, hint } => type_pieces(schema, &hint, classes, &mut pieces),
        }
        stack.extend(pieces.drain(..).rev());
    }
}

/// The pieces of one node, children left as further [`Piece::Type`]s.
fn type_pieces<'a>(
    schema: &'a Value,
    hint: &str,
    classes: &mut Classes<'a>,
    pieces: &mut Vec<Piece<'a>>,
) {
    let alternatives = plan(schema);
    if alternatives.is_empty() {
        pieces.push(Piece::Text("Never"));
        return;
    }
    let several = alternatives.len() > 1;
    let integer_only = is_integer_only(schema);
    let mut literals: Vec<String> = Vec::new();
    let mut literal_slot = None;
    let mut written: Vec<&'static str> = Vec::new();
    for (index, alternative) in alternatives.into_iter().enumerate() {
        let keyword = match alternative {
            Alternative::Literal(value) => match literal_text(value) {
                Some(literal) => {
                    literals.push(literal);
                    if literal_slot.is_none() {
                        separate(pieces);
                        literal_slot = Some(pieces.len());
                        pieces.push(Piece::Text(""));
                    }
                    continue;
                }
                None => match value {
                    Value::Null => "None",
                    Value::Number(_) => "float",
                    _ => "Any",
                },
            },
            Alternative::Keyword(keyword) => match keyword {
                "string" => "str",
                "number" if integer_only => "int",
                "number" => "float",
                "boolean" => "bool",
                "null" => "None",
                "JsonValue" => classes.any_json(),
                _ => "Any",
            },
            Alternative::Branch(branch) => {
                separate(pieces);
                pieces.push(Piece::Type {
                    schema: branch,
                    hint: extend_hint(hint, &format!("Option{}", index + 1)),
                });
                continue;
            }
            Alternative::Array(None) if classes.named => "list[JsonValue]",
            Alternative::Array(None) => "list[Any]",
            Alternative::Array(Some(items)) => {
                separate(pieces);
                pieces.push(Piece::Text("list["));
                pieces.push(Piece::Type {
                    schema: items,
                    hint: extend_hint(hint, "Item"),
                });
                pieces.push(Piece::Text("]"));
                continue;
            }
            Alternative::Object(shape) => {
                let fields_legal = shape.properties.iter().all(|p| is_plain_name(p.name));
                if shape.properties.is_empty() && !shape.open {
                    "dict[str, Never]"
                } else if shape.properties.is_empty() && classes.named {
                    "dict[str, JsonValue]"
                } else if !classes.named || !fields_legal {
                    "dict[str, Any]"
                } else {
                    let base = if several {
                        extend_hint(hint, &format!("Option{}", index + 1))
                    } else {
                        hint.to_owned()
                    };
                    let name = classes.claim(&base);
                    separate(pieces);
                    pieces.push(Piece::Owned(name.clone()));
                    classes.pending.push(PendingClass { name, shape });
                    continue;
                }
            }
        };
        // The same simple member twice (`Any | Any`) says nothing more.
        if !written.contains(&keyword) {
            written.push(keyword);
            separate(pieces);
            pieces.push(Piece::Text(keyword));
        }
    }
    if let Some(slot) = literal_slot {
        pieces[slot] = Piece::Owned(format!("Literal[{}]", literals.join(", ")));
    }
}

/// Appends the ` | ` between union members (nothing before the first).
fn separate(pieces: &mut Vec<Piece<'_>>) {
    if !pieces.is_empty() {
        pieces.push(Piece::Text(" | "));
    }
}

/// `type: "integer"` (alone or with `null`), which renders as `int` rather than `float`.
fn is_integer_only(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(name)) => name == "integer",
        Some(Value::Array(names)) => {
            names.iter().any(|n| n == "integer") && !names.iter().any(|n| n == "number")
        }
        _ => false,
    }
}

/// The `Literal[...]` member for a value Python's `Literal` accepts: strings, integers and
/// booleans (`null` is written `None` beside the literal).
fn literal_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(json_string(text)),
        Value::Bool(true) => Some("True".to_owned()),
        Value::Bool(false) => Some("False".to_owned()),
        Value::Number(number) => {
            let text = number.to_string();
            let digits = text.strip_prefix('-').unwrap_or(&text);
            (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then_some(text)
        }
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

/// `description` as `#` comment lines at `indent`; empty when there is nothing to say.
pub(super) fn comment_lines(description: &str, indent: &str) -> String {
    let text = description.replace("\r\n", "\n");
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    for line in trimmed.split(['\n', '\r']).map(str::trim_end) {
        out.push_str(indent);
        out.push('#');
        if !line.is_empty() {
            out.push(' ');
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// Declares every queued class (and the classes their fields queue in turn), each after
/// the classes it refers to, as `class X(TypedDict):` blocks.
pub(super) fn write_classes<'a>(classes: &mut Classes<'a>, out: &mut String) {
    let mut blocks: Vec<String> = Vec::new();
    while let Some(class) = classes.pending.pop() {
        // The description stays with the field (or binding) that uses the class.
        let mut block = String::from("class ");
        block.push_str(&class.name);
        block.push_str("(TypedDict):");
        for property in &class.shape.properties {
            block.push('\n');
            let description = property
                .schema
                .and_then(|schema| schema.get("description"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            block.push_str(&comment_lines(description, "    "));
            block.push_str("    ");
            block.push_str(property.name);
            block.push_str(": ");
            if !property.required {
                block.push_str("NotRequired[");
            }
            match property.schema {
                Some(schema) => {
                    let field = pascal_case(property.name);
                    // Deep nesting would make names grow without bound: past a length,
                    // nested classes are numbered instead.
                    let hint = extend_hint(&class.name, &field);
                    write_annotation(schema, &hint, classes, &mut block);
                }
                None => block.push_str("JsonValue"),
            }
            if !property.required {
                block.push(']');
            }
        }
        blocks.push(block);
    }
    // Classes are queued parent first; declaring them in reverse puts each after the
    // classes its fields name.
    for block in blocks.iter().rev() {
        out.push_str(block);
        out.push_str("\n\n");
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(schema: Value, expected: &str) {
        assert_eq!(json_schema_to_py(&schema), expected, "schema: {schema}");
    }

    #[test]
    fn standalone_annotations() {
        check(json!({"type": "string"}), "str");
        check(json!({"type": "integer"}), "int");
        check(json!({"type": "number"}), "float");
        check(json!({"type": ["integer", "null"]}), "int | None");
        check(json!({"type": ["integer", "number"]}), "float");
        check(json!({"type": "boolean"}), "bool");
        check(json!({"type": "null"}), "None");
        check(json!({}), "Any");
        check(json!(true), "Any");
        check(json!({"type": "array"}), "list[Any]");
        check(
            json!({"type": "array", "items": {"type": "array", "items": {"type": "string"}}}),
            "list[list[str]]",
        );
        check(
            json!({"type": "object", "properties": {"a": {"type": "string"}}}),
            "dict[str, Any]",
        );
        check(json!({"type": "object"}), "dict[str, Any]");
        check(
            json!({"type": "object", "additionalProperties": false}),
            "dict[str, Never]",
        );
        check(
            json!({"enum": ["a", 1, true, null, 1.5, [1]]}),
            "Literal[\"a\", 1, True] | None | float | Any",
        );
        check(json!({"const": "x\"y"}), "Literal[\"x\\\"y\"]");
        check(json!({"enum": []}), "Never");
        check(
            json!({"oneOf": [{"type": "string"}, {"type": "array", "items": {"$ref": "#"}}]}),
            "str | list[Any]",
        );
        check(json!({"anyOf": []}), "Any");
        check(json!({"type": "object", "additionalProperties": {}}), "Any");
        check(json!(null), "Any");
    }

    #[test]
    fn names() {
        let plain =
            |name: &str, expected: bool| assert_eq!(is_plain_name(name), expected, "{name}");
        plain("read_file", true);
        plain("mcp__srv__tool", true);
        plain("_x", true);
        plain("class", false);
        plain("my-tool", false);
        plain("__proto__", false);
        plain("café", false);
        plain("", false);
        plain("9lives", false);
        assert_eq!(pascal_case("read_file"), "ReadFile");
        assert_eq!(pascal_case("my-tool.v2"), "MyToolV2");
        assert_eq!(pascal_case("--"), "");
    }

    #[test]
    fn comments() {
        assert_eq!(comment_lines("  ", "    "), "");
        assert_eq!(comment_lines("a\r\n\nb ", "  "), "  # a\n  #\n  # b\n");
    }

    #[test]
    fn deep_arrays_render_without_recursion() {
        let mut schema = json!({"type": "string"});
        for _ in 0..10_000 {
            let mut wrapper = serde_json::Map::new();
            wrapper.insert("type".into(), json!("array"));
            wrapper.insert("items".into(), schema);
            schema = Value::Object(wrapper);
        }
        let rendered = json_schema_to_py(&schema);
        let mut stack = vec![schema];
        while let Some(mut node) = stack.pop() {
            if let Value::Object(members) = &mut node {
                stack.extend(std::mem::take(members).into_iter().map(|(_, v)| v));
            }
        }
        assert_eq!(
            rendered,
            format!("{}str{}", "list[".repeat(10_000), "]".repeat(10_000))
        );
    }
}
