//! Dropping values of any depth: `Value`'s own `Drop` recurses once per nesting level.

use serde_json::Value;

/// Drops `value` with an explicit work list, so a 100,000-deep value cannot overflow the
/// stack. Flat values allocate nothing.
pub fn drop_deep(value: Value) {
    let mut pending: Vec<Value> = Vec::new();
    let mut current = value;
    loop {
        // Move nested containers out, so dropping `current` itself is shallow.
        match &mut current {
            Value::Array(items) => {
                pending.extend(items.drain(..).filter(has_members));
            }
            Value::Object(members) => {
                pending.extend(std::mem::take(members).into_values().filter(has_members));
            }
            Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
        }
        drop(current);
        match pending.pop() {
            Some(next) => current = next,
            None => return,
        }
    }
}

fn has_members(value: &Value) -> bool {
    match value {
        Value::Array(items) => !items.is_empty(),
        Value::Object(members) => !members.is_empty(),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, json};

    #[test]
    fn drops_deep_arrays_and_objects() {
        let mut value = json!("leaf");
        for level in 0..200_000 {
            value = if level % 2 == 0 {
                Value::Array(vec![Value::Null, value, json!([1, 2])])
            } else {
                Value::Object(Map::from_iter([
                    ("k".to_owned(), value),
                    ("n".to_owned(), json!({})),
                ]))
            };
        }
        drop_deep(value);
        drop_deep(json!(1));
        drop_deep(json!({"a": [1, {"b": []}]}));
    }
}
