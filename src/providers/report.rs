//! What a provider shape weakened, collected per tool as it is built.

use dsh_tools_protocol::SchemaChange;
use serde_json::Value;

/// Schema levels a provider shape walks; deeper parts are reported and left out, so the
/// walk (and every value it builds) stays within a bounded recursion depth.
pub const MAX_DEPTH: usize = 64;

/// The weakenings of one tool, in schema order.
#[derive(Debug, Default)]
pub struct Report {
    pub changes: Vec<SchemaChange>,
}

impl Report {
    /// Records that the part at `path` was weakened as `change` says.
    pub fn weaken(&mut self, path: &str, change: impl Into<String>) {
        self.changes.push(SchemaChange {
            path: path.to_owned(),
            change: change.into(),
        });
    }
}

/// `path` extended by one JSON-pointer segment.
pub fn child(path: &str, segment: &str) -> String {
    let escaped = segment.replace('~', "~0").replace('/', "~1");
    format!("{path}/{escaped}")
}

/// Compact JSON of a small value, for messages and descriptions.
pub fn compact(value: &Value) -> String {
    let text = crate::json::render_compact(value);
    match text.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// `description` with `note` appended as a sentence of its own.
pub fn describe(description: Option<&Value>, note: &str) -> Value {
    match description.and_then(Value::as_str) {
        Some(text) if !text.is_empty() => Value::from(format!("{text} ({note})")),
        _ => Value::from(note.to_owned()),
    }
}

/// Whether a schema admits `null` (`type` names it, `enum` or `const` holds it, or one of
/// its `anyOf`/`oneOf` branches does so itself: one level, no recursion).
pub fn admits_null(schema: &Value) -> bool {
    own_null(schema)
        || ["anyOf", "oneOf"].iter().any(|key| {
            schema
                .get(*key)
                .and_then(Value::as_array)
                .is_some_and(|branches| branches.iter().any(own_null))
        })
}

fn own_null(schema: &Value) -> bool {
    let Some(map) = schema.as_object() else {
        return schema == &Value::Bool(true);
    };
    let names_null = |t: &Value| t == "null";
    match map.get("type") {
        Some(Value::String(t)) if t == "null" => return true,
        Some(Value::Array(types)) if types.iter().any(names_null) => return true,
        _ => {}
    }
    if let Some(Value::Array(values)) = map.get("enum")
        && values.iter().any(Value::is_null)
    {
        return true;
    }
    map.get("const").is_some_and(Value::is_null)
}
