//! JSON value equality as JSON Schema defines it: numbers by mathematical value, objects
//! regardless of key order, at any depth.

use serde_json::Value;

use super::decimal::Decimal;

/// True when `a` and `b` denote the same JSON value (`1`, `1.0` and `1e0` are equal).
/// Scalars compare without allocating; containers use an explicit work list.
pub fn json_equal(a: &Value, b: &Value) -> bool {
    let mut pending: Vec<(&Value, &Value)> = Vec::new();
    let (mut a, mut b) = (a, b);
    loop {
        match (a, b) {
            (Value::Null, Value::Null) => {}
            (Value::Bool(x), Value::Bool(y)) if x == y => {}
            (Value::String(x), Value::String(y)) if x == y => {}
            (Value::Number(x), Value::Number(y)) => {
                if !same_number(x.as_str(), y.as_str()) {
                    return false;
                }
            }
            (Value::Array(xs), Value::Array(ys)) if xs.len() == ys.len() => {
                pending.extend(xs.iter().zip(ys));
            }
            (Value::Object(xs), Value::Object(ys)) if xs.len() == ys.len() => {
                for (key, x) in xs {
                    match ys.get(key) {
                        Some(y) => pending.push((x, y)),
                        None => return false,
                    }
                }
            }
            _ => return false,
        }
        match pending.pop() {
            Some((x, y)) => (a, b) = (x, y),
            None => return true,
        }
    }
}

/// Number texts with the same mathematical value.
pub(crate) fn same_number(a: &str, b: &str) -> bool {
    a == b
        || match (Decimal::parse(a), Decimal::parse(b)) {
            (Some(a), Some(b)) => a.same_value(&b),
            _ => false,
        }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::json::{drop_deep, parse};
    use serde_json::{Map, json};

    #[test]
    fn compares_json_values() {
        let check = |a: &str, b: &str, expected: bool| {
            let (a, b) = (parse(a).unwrap(), parse(b).unwrap());
            assert_eq!(
                (json_equal(&a, &b), json_equal(&b, &a)),
                (expected, expected)
            );
        };
        check("null", "null", true);
        check("1", "1.0", true);
        check("100", "1e2", true);
        check("0", "-0", true);
        check("1", "2", false);
        check("1", "\"1\"", false);
        check("true", "true", true);
        check("true", "false", false);
        check("\"a\"", "\"a\"", true);
        check("\"a\"", "\"b\"", false);
        check("[1,[2]]", "[1.0,[2e0]]", true);
        check("[1,2]", "[2,1]", false);
        check("[1]", "[1,1]", false);
        check(r#"{"a":1,"b":[true]}"#, r#"{"b":[true],"a":1}"#, true);
        check(r#"{"a":1}"#, r#"{"b":1}"#, false);
        check(r#"{"a":1}"#, r#"{"a":1,"b":1}"#, false);
        check("[]", "{}", false);
        check("null", "false", false);
    }

    #[test]
    fn compares_deep_values() {
        let build = |leaf: i64| {
            let mut value = json!(leaf);
            for _ in 0..100_000 {
                value = Value::Object(Map::from_iter([(
                    "k".to_owned(),
                    Value::Array(vec![value]),
                )]));
            }
            value
        };
        let (one, other_one, two) = (build(1), build(1), build(2));
        assert_eq!(
            (json_equal(&one, &other_one), json_equal(&one, &two)),
            (true, false)
        );
        drop_deep(one);
        drop_deep(other_one);
        drop_deep(two);
    }
}
