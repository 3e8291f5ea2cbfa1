//! Tests of the schema DSL: projection to JSON Schema, canonical forms and refusals.

use super::*;
use crate::json::{drop_deep, parse, render_compact};
use crate::schema::{PathRoot, Validator, check_supported};

/// Compiles `spec` (JSON text) and compares compact output or the error's text; every
/// successful output must also pass the enforced subset.
fn check(
    compile: fn(&Value, &str) -> Result<Value, SchemaError>,
    root: &str,
    spec: &str,
    expected: Result<&str, &str>,
) {
    let spec = parse(spec).unwrap();
    let compiled = compile(&spec, root);
    if let Ok(schema) = &compiled {
        assert_eq!(check_supported(schema, "compiled"), Ok(()));
    }
    assert_eq!(
        compiled
            .map(|schema| render_compact(&schema))
            .map_err(|e| e.to_string()),
        expected.map(str::to_owned).map_err(str::to_owned),
        "{}",
        render_compact(&spec)
    );
}

fn parameters(spec: &str, expected: Result<&str, &str>) {
    check(compile_parameters, "parameters", spec, expected);
}

fn value(spec: &str, expected: Result<&str, &str>) {
    check(compile_value, "output", spec, expected);
}

#[test]
fn compiles_parameter_records() {
    parameters(
        r#"{"path":{"type":"string","required":true,"description":"Absolute file path"},"offset":{"type":"number"},"limit":{"type":"number"}}"#,
        Ok(
            r#"{"type":"object","properties":{"path":{"type":"string","description":"Absolute file path"},"offset":{"type":"number"},"limit":{"type":"number"}},"required":["path"]}"#,
        ),
    );
    parameters("{}", Ok(r#"{"type":"object","properties":{}}"#));
    parameters(
        r#"{"b":{"type":"json","required":true},"a":{"oneOf":[{"type":"null"},{"type":"string"}],"required":true}}"#,
        Ok(
            r#"{"type":"object","properties":{"b":{},"a":{"oneOf":[{"type":"null"},{"type":"string"}]}},"required":["b","a"]}"#,
        ),
    );
}

#[test]
fn compiles_every_value_construct() {
    value(r#"{"type":"string"}"#, Ok(r#"{"type":"string"}"#));
    value(
        r#"{"description":"d","type":"string","title":"t","enum":["red","green"]}"#,
        Ok(r#"{"type":"string","title":"t","description":"d","enum":["red","green"]}"#),
    );
    value(
        r#"{"type":"string","const":"x"}"#,
        Ok(r#"{"type":"string","const":"x"}"#),
    );
    value(
        r#"{"type":"number","enum":[1.0,2.5,1e2]}"#,
        Ok(r#"{"type":"number","enum":[1,2.5,100]}"#),
    );
    value(
        r#"{"type":"integer","const":3.0}"#,
        Ok(r#"{"type":"integer","const":3}"#),
    );
    value(
        r#"{"type":"integer","enum":[1,2]}"#,
        Ok(r#"{"type":"integer","enum":[1,2]}"#),
    );
    value(
        r#"{"type":"boolean","const":true}"#,
        Ok(r#"{"type":"boolean","const":true}"#),
    );
    value(
        r#"{"type":"null","enum":[null]}"#,
        Ok(r#"{"type":"null","enum":[null]}"#),
    );
    value(r#"{"type":"array"}"#, Ok(r#"{"type":"array"}"#));
    value(
        r#"{"type":"array","items":{"type":"integer","description":"n"}}"#,
        Ok(r#"{"type":"array","items":{"type":"integer","description":"n"}}"#),
    );
    value(
        r#"{"type":"object","additionalProperties":false}"#,
        Ok(r#"{"type":"object","properties":{},"additionalProperties":false}"#),
    );
    value(
        r#"{"additionalProperties":true,"type":"object","properties":{"z":{"type":"string","required":true},"a":{"type":"boolean"}},"title":"o"}"#,
        Ok(
            r#"{"type":"object","title":"o","properties":{"z":{"type":"string"},"a":{"type":"boolean"}},"required":["z"],"additionalProperties":true}"#,
        ),
    );
    value(r#"{"type":"json"}"#, Ok("{}"));
    value(
        r#"{"type":"json","description":"anything"}"#,
        Ok(r#"{"description":"anything"}"#),
    );
    value(
        r#"{"oneOf":[{"type":"string"},{"type":"array","items":{"oneOf":[{"type":"null"},{"type":"integer"}]}}],"description":"either"}"#,
        Ok(
            r#"{"description":"either","oneOf":[{"type":"string"},{"type":"array","items":{"oneOf":[{"type":"null"},{"type":"integer"}]}}]}"#,
        ),
    );
    parameters(
        r#"{"servers":{"type":"array","required":true,"items":{"type":"object","additionalProperties":false,"properties":{"host":{"type":"string","required":true},"port":{"type":"integer"}}}}}"#,
        Ok(
            r#"{"type":"object","properties":{"servers":{"type":"array","items":{"type":"object","properties":{"host":{"type":"string"},"port":{"type":"integer"}},"required":["host"],"additionalProperties":false}}},"required":["servers"]}"#,
        ),
    );
}

/// A property literally named `__proto__` is schema data like any other name.
#[test]
fn a_property_named_proto_is_an_ordinary_property() {
    parameters(
        r#"{"__proto__":{"type":"string","required":true},"constructor":{"type":"json"}}"#,
        Ok(
            r#"{"type":"object","properties":{"__proto__":{"type":"string"},"constructor":{}},"required":["__proto__"]}"#,
        ),
    );
}

/// `default` and `examples` are annotations on every node: copied into the schema (canonical
/// numbers, key order kept), never applied and never checked against the node.
#[test]
fn copies_default_and_examples_on_every_node() {
    parameters(
        r#"{"limit":{"type":"number","default":25,"examples":[10,1.50]}}"#,
        Ok(
            r#"{"type":"object","properties":{"limit":{"type":"number","default":25,"examples":[10,1.5]}}}"#,
        ),
    );
    value(
        r#"{"type":"string","default":{"z":1,"a":[null]},"examples":"not an array"}"#,
        Ok(r#"{"type":"string","default":{"z":1,"a":[null]},"examples":"not an array"}"#),
    );
    value(
        r#"{"type":"array","default":[],"items":{"type":"json","default":7}}"#,
        Ok(r#"{"type":"array","default":[],"items":{"default":7}}"#),
    );
    value(
        r#"{"type":"object","additionalProperties":false,"default":{},"examples":[{}]}"#,
        Ok(
            r#"{"type":"object","default":{},"examples":[{}],"properties":{},"additionalProperties":false}"#,
        ),
    );
    value(
        r#"{"oneOf":[{"type":"null"},{"type":"string"}],"default":null,"examples":[null,"x"]}"#,
        Ok(r#"{"default":null,"examples":[null,"x"],"oneOf":[{"type":"null"},{"type":"string"}]}"#),
    );
    value(
        r#"{"type":"string","enum":["a","b"],"const":"b"}"#,
        Ok(r#"{"type":"string","enum":["a","b"],"const":"b"}"#),
    );
}

#[test]
fn rejects_everything_else_with_its_path() {
    parameters(
        "[]",
        Err("parameters: expected a record of parameter schemas"),
    );
    parameters(
        r#"{"x":"string"}"#,
        Err("parameters.x: expected a schema object"),
    );
    parameters(
        r#"{"a":{"type":"string","required":"yes"}}"#,
        Err("parameters.a: required must be true when present"),
    );
    parameters(
        r#"{"a":{"type":"string","required":false}}"#,
        Err("parameters.a: required must be true when present"),
    );
    parameters(
        r#"{"config":{"type":"object","additionalProperties":false,"properties":{"host":{"type":"string","minLength":1}}}}"#,
        Err(r#"parameters.config.properties.host: unknown key "minLength""#),
    );
    parameters(
        r#"{"a":{"type":"string"},"b":{"type":"strin"},"c":{"type":"nope"}}"#,
        Err(r#"parameters.b: unknown type "strin""#),
    );
    value("true", Err("output: expected a schema object"));
    value("{}", Err(r#"output: missing "type" or "oneOf""#));
    value(
        r#"{"type":"string","oneOf":[{"type":"null"}]}"#,
        Err(r#"output: "type" and "oneOf" cannot be combined"#),
    );
    value(r#"{"type":"text"}"#, Err(r#"output: unknown type "text""#));
    value(
        r#"{"type":["string","null"]}"#,
        Err("output: type must be a string"),
    );
    value(
        r#"{"type":"string","required":true}"#,
        Err("output: required is only allowed on a property"),
    );
    value(
        r#"{"type":"array","items":{"type":"string","required":true}}"#,
        Err("output.items: required is only allowed on a property"),
    );
    value(
        r#"{"oneOf":[{"type":"string","required":false},{"type":"null"}]}"#,
        Err("output.oneOf[0]: required is only allowed on a property"),
    );
    value(
        r#"{"type":"array","enum":[[]]}"#,
        Err(r#"output: unknown key "enum""#),
    );
    value(
        r#"{"type":"string","items":{"type":"string"}}"#,
        Err(r#"output: unknown key "items""#),
    );
    value(
        r#"{"type":"json","properties":{}}"#,
        Err(r#"output: unknown key "properties""#),
    );
    value(
        r#"{"type":"object","additionalProperties":false,"required":["a"]}"#,
        Err("output: mark each required property with required: true instead of a required array"),
    );
    value(
        r#"{"oneOf":[{"type":"null"},{"type":"string"}],"deprecated":true}"#,
        Err(r#"output: unknown key "deprecated""#),
    );
    value(
        r#"{"type":"string","title":1}"#,
        Err("output: title must be a string"),
    );
    value(
        r#"{"oneOf":[{"type":"null"},{"type":"string"}],"description":null}"#,
        Err("output: description must be a string"),
    );
    value(
        r#"{"type":"string","enum":[]}"#,
        Err("output: enum must be a non-empty array"),
    );
    value(
        r#"{"type":"string","enum":"red"}"#,
        Err("output: enum must be a non-empty array"),
    );
    value(
        r#"{"type":"string","enum":["a","b","c",3]}"#,
        Err("output: enum member 3 is not a string"),
    );
    value(
        r#"{"type":"number","enum":[1,"2"]}"#,
        Err("output: enum member 1 is not a number"),
    );
    value(
        r#"{"type":"integer","enum":[1,1.5]}"#,
        Err("output: enum member 1 is not an integer"),
    );
    value(
        r#"{"type":"boolean","enum":[0]}"#,
        Err("output: enum member 0 is not a boolean"),
    );
    value(
        r#"{"type":"null","enum":[false]}"#,
        Err("output: enum member 0 is not null"),
    );
    value(
        r#"{"type":"number","const":"1"}"#,
        Err("output: const is not a number"),
    );
    value(
        r#"{"type":"string","enum":["a"],"const":"b"}"#,
        Err("output: const must be one of the enum members"),
    );
    value(
        r#"{"type":"string","enum":["a"],"const":1}"#,
        Err("output: const is not a string"),
    );
    value(
        r#"{"type":"string","default":-0}"#,
        Err(
            "output.default: not lossless JSON: -0 is negative zero, which JSON.stringify writes as 0",
        ),
    );
    value(
        r#"{"type":"integer","enum":[1,9007199254740993]}"#,
        Err(
            "output.enum[1]: not lossless JSON: 9007199254740993 does not survive a round trip as a double",
        ),
    );
    value(
        r#"{"type":"number","const":-0.0}"#,
        Err(
            "output.const: not lossless JSON: -0.0 is negative zero, which JSON.stringify writes as 0",
        ),
    );
    value(
        r#"{"type":"object"}"#,
        Err("output: object needs additionalProperties: true or false"),
    );
    value(
        r#"{"type":"object","additionalProperties":"no"}"#,
        Err("output: object needs additionalProperties: true or false"),
    );
    value(
        r#"{"type":"object","additionalProperties":true,"properties":[]}"#,
        Err("output: properties must be a record of property schemas"),
    );
    value(
        r#"{"type":"array","items":[{"type":"string"}]}"#,
        Err("output.items: expected a schema object"),
    );
    for branches in ["[]", r#"[{"type":"string"}]"#, r#"{"type":"string"}"#] {
        value(
            &format!(r#"{{"oneOf":{branches}}}"#),
            Err("output: oneOf must be an array of at least two schemas"),
        );
    }
    value(
        r#"{"oneOf":[{"type":"string"},{"type":"object","properties":{"a":{"type":"nil"}},"additionalProperties":true}]}"#,
        Err(r#"output.oneOf[1].properties.a: unknown type "nil""#),
    );
}

/// Nests `depth` levels of `wrap` around `leaf` without recursion.
fn nest(depth: usize, leaf: Value, wrap: impl Fn(Value) -> Value) -> Value {
    (0..depth).fold(leaf, |inner, _| wrap(inner))
}

fn object(members: Vec<(&str, Value)>) -> Value {
    Value::Object(
        members
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
    )
}

#[test]
fn compiles_deep_specs_without_recursion() {
    let depth = 10_000;
    let leaf = object(vec![("type", Value::from("string"))]);
    let spec = nest(depth, leaf, |inner| {
        object(vec![
            ("type", Value::from("object")),
            ("additionalProperties", Value::Bool(false)),
            (
                "properties",
                object(vec![(
                    "k",
                    object(vec![(
                        "oneOf",
                        Value::Array(vec![inner, object(vec![("type", Value::from("null"))])]),
                    )]),
                )]),
            ),
        ])
    });
    let compiled = compile_value(&spec, "output").unwrap();
    assert_eq!(check_supported(&compiled, "compiled"), Ok(()));
    let validator = Validator::new(&compiled, "compiled").unwrap();
    let valid = nest(depth, Value::from("x"), |inner| object(vec![("k", inner)]));
    let invalid = nest(depth, Value::from(1), |inner| object(vec![("k", inner)]));
    assert_eq!(
        (
            validator.validate(&valid, PathRoot::Value),
            validator.is_valid(&invalid)
        ),
        (Vec::new(), false)
    );
    let mut levels = 0;
    let mut cursor = &compiled;
    while let Some(inner) = cursor.pointer("/properties/k/oneOf/0") {
        levels += 1;
        cursor = inner;
    }
    assert_eq!(
        (levels, render_compact(cursor)),
        (depth, r#"{"type":"string"}"#.to_owned())
    );
    let broken = nest(
        depth,
        object(vec![("type", Value::from("strng"))]),
        |inner| object(vec![("type", Value::from("array")), ("items", inner)]),
    );
    let error = compile_value(&broken, "output").unwrap_err();
    assert_eq!(
        (
            error.path.len(),
            error.path.ends_with(".items.items"),
            error.message
        ),
        (
            "output".len() + depth * ".items".len(),
            true,
            r#"unknown type "strng""#.to_owned()
        )
    );
    drop_deep(compiled);
    drop_deep(spec);
    drop_deep(valid);
    drop_deep(invalid);
    drop_deep(broken);
}
