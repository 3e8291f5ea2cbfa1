//! Cloning values of any depth: `Value`'s own `Clone` recurses once per nesting level.

use serde_json::{Map, Value, map};

/// Clones `value` with an explicit stack of half-built containers.
pub fn deep_clone(value: &Value) -> Value {
    let mut open: Vec<Building<'_>> = Vec::new();
    let mut completed = start(value, &mut open);
    loop {
        let Some(building) = open.last_mut() else {
            // `completed` always holds the finished root by now.
            return completed.unwrap_or(Value::Null);
        };
        if let Some(done) = completed.take() {
            building.accept(done);
        }
        match building.next_member() {
            Some(member) => completed = start(member, &mut open),
            None => completed = open.pop().map(Building::finish),
        }
    }
}

/// A scalar's clone, or `None` after opening a container on `open`.
fn start<'a>(value: &'a Value, open: &mut Vec<Building<'a>>) -> Option<Value> {
    match value {
        Value::Array(items) => {
            open.push(Building::Array(
                items.iter(),
                Vec::with_capacity(items.len()),
            ));
            None
        }
        Value::Object(members) => {
            open.push(Building::Object(members.iter(), Map::new(), ""));
            None
        }
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => Some(value.clone()),
    }
}

/// A container being copied: the source members left, the copy so far, and for objects
/// the key of the member being copied.
enum Building<'a> {
    Array(std::slice::Iter<'a, Value>, Vec<Value>),
    Object(map::Iter<'a>, Map<String, Value>, &'a str),
}

impl<'a> Building<'a> {
    fn next_member(&mut self) -> Option<&'a Value> {
        match self {
            Building::Array(source, _) => source.next(),
            Building::Object(source, _, key) => source.next().map(|(name, member)| {
                *key = name;
                member
            }),
        }
    }

    fn accept(&mut self, member: Value) {
        match self {
            Building::Array(_, copy) => copy.push(member),
            Building::Object(_, copy, key) => {
                copy.insert((*key).to_owned(), member);
            }
        }
    }

    fn finish(self) -> Value {
        match self {
            Building::Array(_, copy) => Value::Array(copy),
            Building::Object(_, copy, _) => Value::Object(copy),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::json::{drop_deep, json_equal, render_compact};
    use serde_json::json;

    #[test]
    fn clones_whole_values() {
        let check = |value: Value| {
            let copy = deep_clone(&value);
            assert_eq!(copy, value);
            assert_eq!(render_compact(&copy), render_compact(&value));
        };
        check(json!(null));
        check(json!("s"));
        check(json!([]));
        check(json!({}));
        check(json!({"z": [1, {"y": [[]]}], "a": 1.5, "m": {}}));
    }

    #[test]
    fn clones_deep_values() {
        let mut deep = json!(0);
        for _ in 0..100_000 {
            deep = Value::Array(vec![Value::Object(Map::from_iter([(
                "k".to_owned(),
                deep,
            )]))]);
        }
        let copy = deep_clone(&deep);
        assert!(json_equal(&copy, &deep));
        drop_deep(copy);
        drop_deep(deep);
    }
}
