//! Where a schema stops being typed: the first node the SDK renders as `unknown`, so an
//! ingested tool is warned about only when its types actually degrade (a `minimum` or a
//! `format` narrows values without changing their type, and is no reason to warn).

use serde_json::Value;

use super::schema_plan::{Alternative, plan};

/// The path (from `root`, as `root.properties.a.items`) of the first node of `schema`
/// that the SDK types as `unknown`, in document order; `None` when every node is typed.
pub fn untyped_part(schema: &Value, root: &str) -> Option<String> {
    let mut pending: Vec<(&Value, String)> = vec![(schema, root.to_owned())];
    while let Some((node, path)) = pending.pop() {
        let mut children = Vec::new();
        let mut branch = 0;
        for alternative in plan(node) {
            match alternative {
                Alternative::Keyword("unknown") => return Some(path),
                Alternative::Keyword(_) | Alternative::Literal(_) | Alternative::Array(None) => {}
                Alternative::Branch(schema) => {
                    children.push((schema, format!("{path}.oneOf[{branch}]")));
                    branch += 1;
                }
                Alternative::Array(Some(items)) => children.push((items, format!("{path}.items"))),
                Alternative::Object(shape) => {
                    for property in shape.properties {
                        if let Some(schema) = property.schema {
                            let name = property.name;
                            children.push((schema, format!("{path}.properties.{name}")));
                        }
                    }
                }
            }
        }
        pending.extend(children.into_iter().rev());
    }
    None
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn narrowing_keywords_and_annotations_keep_a_schema_typed() {
        let typed = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "count": { "type": "number", "minimum": 1, "maximum": 10, "default": 3 },
                "url": { "type": "string", "format": "uri" },
                "tags": { "type": "array", "items": { "type": "string", "pattern": "^a" } },
                "either": { "oneOf": [{ "type": "string" }, { "type": "null" }] }
            }
        });
        assert_eq!(untyped_part(&typed, "inputSchema"), None);
    }

    #[test]
    fn the_first_untyped_node_is_named_by_its_path() {
        let referencing = json!({
            "type": "object",
            "properties": {
                "fine": { "type": "string" },
                "list": { "type": "array", "items": { "oneOf": [{ "type": "string" }, { "$ref": "#/$defs/N" }] } },
                "later": { "anyOf": [] }
            },
            "$defs": { "N": { "type": "object" } }
        });
        assert_eq!(
            untyped_part(&referencing, "inputSchema").as_deref(),
            Some("inputSchema.properties.list.items.oneOf[1]")
        );
        assert_eq!(
            untyped_part(&json!({ "allOf": [] }), "outputSchema").as_deref(),
            Some("outputSchema")
        );
    }
}
