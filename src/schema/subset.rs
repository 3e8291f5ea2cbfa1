//! The enforced raw JSON Schema subset: what the DSL compiles to plus a few raw
//! conveniences; every other keyword is rejected with its path.

use serde_json::Value;

use crate::json::{Segment, check_lossless};

use super::error::SchemaError;
use super::spec_path::{PathId, SpecPaths};
use super::types::JsonType;

/// Accepts exactly the supported subset: `type` (a name or a non-empty array of names),
/// `properties`, `required`, boolean `additionalProperties`, single-schema `items`, `enum`,
/// `const`, `oneOf` and lossless annotations; `{}` accepts anything. The first problem in
/// document order is reported, with a path starting at `root`.
pub fn check_supported(schema: &Value, root: &str) -> Result<(), SchemaError> {
    let mut paths = SpecPaths::default();
    let mut pending: Vec<(&Value, PathId)> = vec![(schema, None)];
    while let Some((schema, at)) = pending.pop() {
        let Value::Object(keywords) = schema else {
            return Err(paths.error(root, at, "expected a schema object"));
        };
        let mut children: Vec<(&Value, PathId)> = Vec::new();
        for (keyword, argument) in keywords {
            let keyword_at = paths.child(at, Segment::Key(keyword));
            let problem = match keyword.as_str() {
                "type" => check_type(argument),
                "properties" => match argument {
                    Value::Object(properties) => {
                        for (name, property) in properties {
                            children.push((property, paths.child(keyword_at, Segment::Key(name))));
                        }
                        None
                    }
                    _ => Some("properties must be an object of schemas".to_owned()),
                },
                "required" => match argument {
                    Value::Array(names) if names.iter().all(Value::is_string) => None,
                    _ => Some("required must be an array of property names".to_owned()),
                },
                "additionalProperties" => match argument {
                    Value::Bool(_) => None,
                    _ => Some("additionalProperties must be true or false".to_owned()),
                },
                "items" => match argument {
                    Value::Array(_) => {
                        Some("items must be one schema (tuple items are unsupported)".to_owned())
                    }
                    _ => {
                        children.push((argument, keyword_at));
                        None
                    }
                },
                "oneOf" => match argument {
                    Value::Array(branches) if !branches.is_empty() => {
                        for (index, branch) in branches.iter().enumerate() {
                            children.push((branch, paths.child(keyword_at, Segment::Index(index))));
                        }
                        None
                    }
                    _ => Some("oneOf must be a non-empty array of schemas".to_owned()),
                },
                "enum" => match argument {
                    Value::Array(members) if !members.is_empty() => None,
                    _ => Some("enum must be a non-empty array".to_owned()),
                },
                "examples" => match argument {
                    Value::Array(_) => None,
                    _ => Some("examples must be an array".to_owned()),
                },
                "const" | "default" => None,
                "title" | "description" | "$comment" | "$schema" | "$id" => match argument {
                    Value::String(_) => None,
                    _ => Some(format!("{keyword} must be a string")),
                },
                "deprecated" | "readOnly" | "writeOnly" => match argument {
                    Value::Bool(_) => None,
                    _ => Some(format!("{keyword} must be true or false")),
                },
                _ => Some(format!("unsupported keyword \"{keyword}\"")),
            };
            if let Some(message) = problem {
                return Err(paths.error(root, at, message));
            }
            if let "enum" | "const" | "default" | "examples" = keyword.as_str()
                && let Err(lossy) = check_lossless(argument, &paths.render(root, keyword_at))
            {
                return Err(SchemaError {
                    path: lossy.path,
                    message: format!("not lossless JSON: {}", lossy.reason),
                });
            }
        }
        pending.extend(children.into_iter().rev());
    }
    Ok(())
}

fn check_type(argument: &Value) -> Option<String> {
    let unknown = |name: &String| {
        JsonType::from_name(name)
            .is_none()
            .then(|| format!("unknown type \"{name}\""))
    };
    match argument {
        Value::String(name) => unknown(name),
        Value::Array(names) if !names.is_empty() => names.iter().find_map(|name| match name {
            Value::String(name) => unknown(name),
            _ => Some("type must be a type name or a non-empty array of type names".to_owned()),
        }),
        _ => Some("type must be a type name or a non-empty array of type names".to_owned()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::json::{drop_deep, parse};

    fn check(schema: &str, expected: Result<(), &str>) {
        let schema = parse(schema).unwrap();
        assert_eq!(
            check_supported(&schema, "outputSchema").map_err(|e| e.to_string()),
            expected.map_err(str::to_owned),
            "{schema}"
        );
    }

    #[test]
    fn accepts_the_subset() {
        for schema in [
            "{}",
            r#"{"type":"string"}"#,
            r#"{"type":["string","null"]}"#,
            r#"{"type":"object","properties":{"a":{"type":"integer"},"b":{}},"required":["a","c"],"additionalProperties":false}"#,
            r#"{"type":"object","additionalProperties":true}"#,
            r#"{"type":"array","items":{"enum":[1,"x",null,{"a":[true]}]}}"#,
            r#"{"const":{"a":[1.0]}}"#,
            r#"{"oneOf":[{"type":"string"},{}]}"#,
            r#"{"title":"t","description":"d","default":{"x":1},"examples":[1,"two"],"$comment":"c","deprecated":true,"readOnly":false,"writeOnly":false,"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"urn:example"}"#,
        ] {
            check(schema, Ok(()));
        }
    }

    #[test]
    fn rejects_everything_else_with_its_path() {
        check("true", Err("outputSchema: expected a schema object"));
        check(
            r#"{"anyOf":[{}]}"#,
            Err(r#"outputSchema: unsupported keyword "anyOf""#),
        );
        check(
            r#"{"type":"object","properties":{"a":{"anyOf":[{"type":"string"}]}}}"#,
            Err(r#"outputSchema.properties.a: unsupported keyword "anyOf""#),
        );
        for keyword in [
            "$ref",
            "allOf",
            "not",
            "minimum",
            "maximum",
            "pattern",
            "format",
            "minLength",
            "patternProperties",
            "$defs",
            "definitions",
            "if",
            "prefixItems",
            "contains",
            "uniqueItems",
            "dependentRequired",
            "propertyNames",
            "unevaluatedProperties",
            "multipleOf",
        ] {
            check(
                &format!(r#"{{"type":"string","{keyword}":1}}"#),
                Err(&format!(r#"outputSchema: unsupported keyword "{keyword}""#)),
            );
        }
        check(
            r#"{"items":[{}]}"#,
            Err("outputSchema: items must be one schema (tuple items are unsupported)"),
        );
        check(
            r#"{"items":true}"#,
            Err("outputSchema.items: expected a schema object"),
        );
        check(
            r#"{"type":"json"}"#,
            Err(r#"outputSchema: unknown type "json""#),
        );
        check(
            r#"{"type":["string","text"]}"#,
            Err(r#"outputSchema: unknown type "text""#),
        );
        check(
            r#"{"type":[]}"#,
            Err("outputSchema: type must be a type name or a non-empty array of type names"),
        );
        check(
            r#"{"type":[1]}"#,
            Err("outputSchema: type must be a type name or a non-empty array of type names"),
        );
        check(
            r#"{"type":5}"#,
            Err("outputSchema: type must be a type name or a non-empty array of type names"),
        );
        check(
            r#"{"properties":[]}"#,
            Err("outputSchema: properties must be an object of schemas"),
        );
        check(
            r#"{"required":"a"}"#,
            Err("outputSchema: required must be an array of property names"),
        );
        check(
            r#"{"required":[1]}"#,
            Err("outputSchema: required must be an array of property names"),
        );
        check(
            r#"{"additionalProperties":{}}"#,
            Err("outputSchema: additionalProperties must be true or false"),
        );
        check(
            r#"{"oneOf":[]}"#,
            Err("outputSchema: oneOf must be a non-empty array of schemas"),
        );
        check(
            r#"{"oneOf":{}}"#,
            Err("outputSchema: oneOf must be a non-empty array of schemas"),
        );
        check(
            r#"{"oneOf":[{},{"not":{}}]}"#,
            Err(r#"outputSchema.oneOf[1]: unsupported keyword "not""#),
        );
        check(
            r#"{"enum":[]}"#,
            Err("outputSchema: enum must be a non-empty array"),
        );
        check(
            r#"{"enum":"a"}"#,
            Err("outputSchema: enum must be a non-empty array"),
        );
        check(
            r#"{"examples":1}"#,
            Err("outputSchema: examples must be an array"),
        );
        check(
            r#"{"title":1}"#,
            Err("outputSchema: title must be a string"),
        );
        check(r#"{"$id":null}"#, Err("outputSchema: $id must be a string"));
        check(
            r#"{"deprecated":"yes"}"#,
            Err("outputSchema: deprecated must be true or false"),
        );
        check(
            r#"{"const":{"a":[1e400]}}"#,
            Err(
                "outputSchema.const.a[0]: not lossless JSON: 1e+400 is outside the range of a double",
            ),
        );
        check(
            r#"{"items":{"enum":[1,9007199254740993]}}"#,
            Err(
                "outputSchema.items.enum[1]: not lossless JSON: 9007199254740993 does not survive a round trip as a double",
            ),
        );
        check(
            r#"{"default":-0}"#,
            Err(
                "outputSchema.default: not lossless JSON: -0 is negative zero, which JSON.stringify writes as 0",
            ),
        );
        check(
            r#"{"examples":[1,0.10000000000000000001]}"#,
            Err(
                "outputSchema.examples[1]: not lossless JSON: 0.10000000000000000001 does not survive a round trip as a double",
            ),
        );
        // A node's own keywords first, then its children in document order.
        check(
            r#"{"properties":{"a":{"minimum":1},"b":{"pattern":"x"}},"format":"x"}"#,
            Err(r#"outputSchema: unsupported keyword "format""#),
        );
        check(
            r#"{"properties":{"a":{"items":{"minimum":1}},"b":{"pattern":"x"}},"oneOf":[{"not":{}}]}"#,
            Err(r#"outputSchema.properties.a.items: unsupported keyword "minimum""#),
        );
    }

    #[test]
    fn checks_deep_schemas_without_recursion() {
        let depth = 10_000;
        let wrap = |inner: Value| {
            Value::Object(
                [
                    ("type".to_owned(), Value::from("array")),
                    ("items".to_owned(), inner),
                ]
                .into_iter()
                .collect(),
            )
        };
        let valid = (0..depth).fold(parse(r#"{"const":[[[1]]]}"#).unwrap(), |inner, _| {
            wrap(inner)
        });
        assert_eq!(check_supported(&valid, "s"), Ok(()));
        let invalid = (0..depth).fold(parse(r#"{"anyOf":[]}"#).unwrap(), |inner, _| wrap(inner));
        let error = check_supported(&invalid, "s").unwrap_err();
        assert_eq!(
            (error.path.len(), error.message),
            (
                1 + depth * ".items".len(),
                r#"unsupported keyword "anyOf""#.to_owned()
            )
        );
        drop_deep(valid);
        drop_deep(invalid);
    }
}
