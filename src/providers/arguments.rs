//! The way back from OpenAI's strict schemas: a strict model must send every property,
//! `null` for the ones it leaves out, so before validation a `null` given for an optional
//! property whose schema does not admit `null` is taken as the property left out.

use super::report::{MAX_DEPTH, admits_null};
use serde_json::Value;

/// Drops, at every object level the schema describes (properties and array items, not
/// `anyOf` branches or `$ref`s), the `null`s of optional properties that do not admit
/// `null`. Other values are left to validation.
pub fn drop_strict_nulls(schema: &Value, arguments: &mut Value) {
    let mut work: Vec<(&Value, &mut Value, usize)> = vec![(schema, arguments, 0)];
    while let Some((schema, value, depth)) = work.pop() {
        if depth > MAX_DEPTH {
            continue;
        }
        match value {
            Value::Object(fields) => {
                let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
                    continue;
                };
                let required = |name: &str| {
                    schema
                        .get("required")
                        .and_then(Value::as_array)
                        .is_some_and(|names| names.iter().any(|n| n == name))
                };
                fields.retain(|name, field| {
                    let dropped = field.is_null()
                        && !required(name)
                        && properties.get(name).is_some_and(|p| !admits_null(p));
                    !dropped
                });
                for (name, field) in fields.iter_mut() {
                    if let Some(property) = properties.get(name) {
                        work.push((property, field, depth + 1));
                    }
                }
            }
            Value::Array(items) => {
                let Some(item) = schema.get("items").filter(|i| i.is_object()) else {
                    continue;
                };
                for element in items.iter_mut() {
                    work.push((item, element, depth + 1));
                }
            }
            _ => {}
        }
    }
}
