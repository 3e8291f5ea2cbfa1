//! The enforced subset's acceptances and refusals, each refusal with its path and wording.

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
        r#"{"type":"object","properties":{"a":{"type":"integer"},"b":{}},"required":["a"],"additionalProperties":false}"#,
        r#"{"type":"object","additionalProperties":true}"#,
        r#"{"type":"object"}"#,
        r#"{"type":"array","items":{"type":"integer","enum":[1,2.0]}}"#,
        r#"{"type":"string","enum":["a","b"],"const":"b"}"#,
        r#"{"type":"null","const":null}"#,
        r#"{"oneOf":[{"type":"string"},{}]}"#,
        r#"{"title":"t","description":"d","default":{"x":1},"examples":{"any":["json"]}}"#,
        r#"{"type":"number","default":"not a number","examples":[true]}"#,
        // What zod, pydantic and OpenAPI generators write on their nodes.
        r#"{"$schema":"http://json-schema.org/draft-07/schema#","$id":"urn:x","$comment":"c","type":"object","properties":{"a":{"type":"string","deprecated":true,"readOnly":false,"writeOnly":true}}}"#,
    ] {
        check(schema, Ok(()));
    }
}

#[test]
fn refuses_keywords_outside_the_subset() {
    check("true", Err("outputSchema: expected a schema object"));
    check(
        r#"{"type":"object","properties":{"a":{"anyOf":[{"type":"string"}]}}}"#,
        Err(r#"outputSchema.properties.a: unsupported keyword "anyOf""#),
    );
    for keyword in [
        "$ref",
        "allOf",
        "anyOf",
        "not",
        "minimum",
        "pattern",
        "format",
        "minLength",
        "patternProperties",
        "$defs",
        "if",
        "prefixItems",
        "uniqueItems",
        "propertyNames",
        "multipleOf",
    ] {
        check(
            &format!(r#"{{"type":"string","{keyword}":"x"}}"#),
            Err(&format!(r#"outputSchema: unsupported keyword "{keyword}""#)),
        );
    }
    check(
        r#"{"title":1}"#,
        Err("outputSchema: title must be a string"),
    );
    check(
        r#"{"description":null}"#,
        Err("outputSchema: description must be a string"),
    );
    check(
        r#"{"type":"object","properties":{"a":{"$schema":7}}}"#,
        Err("outputSchema.properties.a: $schema must be a string"),
    );
    check(
        r#"{"readOnly":"yes"}"#,
        Err("outputSchema: readOnly must be true or false"),
    );
}

#[test]
fn refuses_type_arrays_and_malformed_types() {
    check(
        r#"{"type":["string","null"]}"#,
        Err("outputSchema: type arrays are not supported (use oneOf)"),
    );
    check(
        r#"{"type":"json"}"#,
        Err(r#"outputSchema: unknown type "json""#),
    );
    check(
        r#"{"type":5}"#,
        Err("outputSchema: type must be one type name"),
    );
}

#[test]
fn refuses_one_of_with_fewer_than_two_branches_or_beside_type() {
    for branches in ["[]", r#"[{"type":"string"}]"#, "{}"] {
        check(
            &format!(r#"{{"oneOf":{branches}}}"#),
            Err("outputSchema: oneOf must be an array of at least two schemas"),
        );
    }
    check(
        r#"{"type":"string","oneOf":[{},{}]}"#,
        Err(r#"outputSchema: "type" and "oneOf" cannot be combined"#),
    );
    check(
        r#"{"oneOf":[{},{}],"enum":[1]}"#,
        Err("outputSchema: enum is not supported beside oneOf"),
    );
    check(
        r#"{"oneOf":[{},{"not":{}}]}"#,
        Err(r#"outputSchema.oneOf[1]: unsupported keyword "not""#),
    );
}

#[test]
fn refuses_keywords_on_the_wrong_node_type() {
    let on = |keyword: &str, kind: &str| {
        format!("outputSchema: {keyword} is not supported on type \"{kind}\"")
    };
    check(
        r#"{"type":"string","items":{}}"#,
        Err(&on("items", "string")),
    );
    check(
        r#"{"type":"array","properties":{}}"#,
        Err(&on("properties", "array")),
    );
    check(
        r#"{"type":"string","required":[]}"#,
        Err(&on("required", "string")),
    );
    check(
        r#"{"type":"integer","additionalProperties":false}"#,
        Err(&on("additionalProperties", "integer")),
    );
    check(
        r#"{"type":"object","enum":[{}]}"#,
        Err(&on("enum", "object")),
    );
    check(r#"{"type":"array","const":[]}"#, Err(&on("const", "array")));
    for keyword in [
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
    ] {
        check(
            &format!(r#"{{"{keyword}":1}}"#),
            Err(&format!("outputSchema: {keyword} requires type or oneOf")),
        );
    }
}

#[test]
fn refuses_malformed_object_array_and_scalar_keywords() {
    check(
        r#"{"type":"object","properties":{"a":{}},"required":["a","c"]}"#,
        Err(r#"outputSchema: required names "c", which is not in properties"#),
    );
    check(
        r#"{"type":"object","required":["a"]}"#,
        Err(r#"outputSchema: required names "a", which is not in properties"#),
    );
    check(
        r#"{"type":"object","required":[1]}"#,
        Err("outputSchema: required must be an array of property names"),
    );
    check(
        r#"{"type":"object","properties":[]}"#,
        Err("outputSchema: properties must be an object of schemas"),
    );
    check(
        r#"{"type":"object","additionalProperties":{}}"#,
        Err("outputSchema: additionalProperties must be true or false"),
    );
    check(
        r#"{"type":"array","items":[{}]}"#,
        Err("outputSchema: items must be one schema (tuple items are unsupported)"),
    );
    check(
        r#"{"type":"array","items":true}"#,
        Err("outputSchema.items: expected a schema object"),
    );
    check(
        r#"{"type":"string","enum":[]}"#,
        Err("outputSchema: enum must be a non-empty array"),
    );
    check(
        r#"{"type":"string","enum":"a"}"#,
        Err("outputSchema: enum must be a non-empty array"),
    );
    check(
        r#"{"type":"string","enum":["a",1]}"#,
        Err("outputSchema: enum member 1 is not a string"),
    );
    check(
        r#"{"type":"integer","enum":[1,1.5]}"#,
        Err("outputSchema: enum member 1 is not an integer"),
    );
    check(
        r#"{"type":"boolean","const":"true"}"#,
        Err("outputSchema: const is not a boolean"),
    );
    check(
        r#"{"type":"string","enum":["a","b"],"const":"c"}"#,
        Err("outputSchema: const must be one of the enum members"),
    );
}

#[test]
fn annotations_and_literals_must_be_lossless() {
    check(
        r#"{"type":"integer","const":1e400}"#,
        Err("outputSchema.const: not lossless JSON: 1e+400 is outside the range of a double"),
    );
    check(
        r#"{"type":"array","items":{"type":"number","enum":[1,9007199254740993]}}"#,
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
}

#[test]
fn reports_a_nodes_own_keywords_before_its_children() {
    check(
        r#"{"type":"object","properties":{"a":{"minimum":1},"b":{"pattern":"x"}},"format":"x"}"#,
        Err(r#"outputSchema: unsupported keyword "format""#),
    );
    check(
        r#"{"type":"object","properties":{"a":{"type":"array","items":{"minimum":1}},"b":{"pattern":"x"}}}"#,
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
    let valid = (0..depth).fold(
        parse(r#"{"type":"string","const":"x"}"#).unwrap(),
        |inner, _| wrap(inner),
    );
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
