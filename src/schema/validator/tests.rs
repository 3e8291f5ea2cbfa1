//! Tests of the validator: violations, paths and messages for each keyword of the subset.

use super::*;
use crate::json::parse;
use crate::schema::{compile_parameters, compile_value};

/// Validates `value` against the raw `schema` and compares every message; `is_valid`
/// must agree.
fn check(schema: &str, value: &str, root: PathRoot, expected: &[&str]) {
    let validator = Validator::new(&parse(schema).unwrap(), "schema").unwrap();
    let value = parse(value).unwrap();
    let messages: Vec<String> = validator
        .validate(&value, root)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(messages, expected, "{schema} {value}");
    assert_eq!(
        validator.is_valid(&value),
        expected.is_empty(),
        "{schema} {value}"
    );
}

fn arguments(schema: &str, value: &str, expected: &[&str]) {
    check(schema, value, PathRoot::Arguments, expected);
}

fn output(schema: &str, value: &str, expected: &[&str]) {
    check(schema, value, PathRoot::Value, expected);
}

#[test]
fn reports_each_violation_kind() {
    let read_file = r#"{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"number"}},"required":["path"]}"#;
    arguments(read_file, r#"{"path":"/a"}"#, &[]);
    arguments(read_file, r#"{"path":"/a","extra":1}"#, &[]);
    arguments(read_file, "{}", &[r#"missing required property "path""#]);
    arguments(
        read_file,
        r#"{"path":1,"offset":"x"}"#,
        &[r#""path" must be a string"#, r#""offset" must be a number"#],
    );
    arguments(read_file, "[]", &[r#""arguments" must be an object"#]);
    output(
        r#"{"type":"string"}"#,
        "1",
        &[r#""value" must be a string"#],
    );
    output(
        r#"{"type":"number"}"#,
        "true",
        &[r#""value" must be a number"#],
    );
    output(
        r#"{"type":"integer"}"#,
        "2.5",
        &[r#""value" must be an integer"#],
    );
    output(r#"{"type":"integer"}"#, "2", &[]);
    output(r#"{"type":"integer"}"#, "2.0", &[]);
    output(r#"{"type":"integer"}"#, "1e21", &[]);
    output(
        r#"{"type":"boolean"}"#,
        "null",
        &[r#""value" must be a boolean"#],
    );
    output(r#"{"type":"null"}"#, "0", &[r#""value" must be null"#]);
    output(
        r#"{"type":"array"}"#,
        "{}",
        &[r#""value" must be an array"#],
    );
    output(
        r#"{"type":"object"}"#,
        "[]",
        &[r#""value" must be an object"#],
    );
    output(
        r#"{"type":"string","enum":["red","green"]}"#,
        r#""blue""#,
        &[r#""value" must be one of ["red","green"]"#],
    );
    output(r#"{"type":"number","enum":[1,2.5]}"#, "1.0", &[]);
    output(r#"{"type":"number","enum":[1,2.5]}"#, "25e-1", &[]);
    output(
        r#"{"type":"number","enum":[1,2.5]}"#,
        "3",
        &[r#""value" must be one of [1,2.5]"#],
    );
    output(r#"{"type":"number","const":1e2}"#, "100", &[]);
    output(
        r#"{"type":"string","const":"x"}"#,
        r#""y""#,
        &[r#""value" must equal "x""#],
    );
    output(
        r#"{"type":"string","enum":["x","y"],"const":"x"}"#,
        r#""y""#,
        &[r#""value" must equal "x""#],
    );
    output(
        r#"{"type":"object","properties":{"a":{}},"additionalProperties":false}"#,
        r#"{"a":1,"b":2}"#,
        &[r#""value.b" is not a declared property (additionalProperties: false)"#],
    );
    output(
        r#"{"type":"object","additionalProperties":false}"#,
        "{}",
        &[],
    );
    output(
        r#"{"type":"object","additionalProperties":false}"#,
        r#"{"x":1}"#,
        &[r#""value.x" is not a declared property (additionalProperties: false)"#],
    );
    output(
        r#"{"type":"object","additionalProperties":true}"#,
        r#"{"x":1}"#,
        &[],
    );
    output(
        r#"{"oneOf":[{"type":"string"},{"type":"integer"}]}"#,
        "1",
        &[],
    );
    output(
        r#"{"oneOf":[{"type":"string"},{"type":"integer"}]}"#,
        "1.5",
        &[r#""value" must match exactly one oneOf branch (matched 0)"#],
    );
    output(
        r#"{"oneOf":[{"type":"number"},{"type":"integer"}]}"#,
        "1",
        &[r#""value" must match exactly one oneOf branch (matched 2)"#],
    );
    output(
        r#"{"oneOf":[{},{},{}]}"#,
        "1",
        &[r#""value" must match exactly one oneOf branch (matched 3)"#],
    );
    output("{}", r#"{"anything":[1,null]}"#, &[]);
    output(
        r#"{"title":"t","description":"d","default":1}"#,
        "null",
        &[],
    );
}

#[test]
fn paths_name_nested_members() {
    let schema = r#"{"type":"object","properties":{
            "config":{"type":"object","properties":{"host":{"type":"string"}},"required":["host"]},
            "servers":{"type":"array","items":{"type":"object","properties":{"host":{"type":"string"}},"required":["host"]}}}}"#;
    arguments(
        schema,
        r#"{"config":{"host":1},"servers":[{"host":"a"},{"host":false},{}]}"#,
        &[
            r#""config.host" must be a string"#,
            r#""servers[1].host" must be a string"#,
            r#"missing required property "servers[2].host""#,
        ],
    );
    output(
        schema,
        r#"{"config":{},"servers":[{"host":"a"},7]}"#,
        &[
            r#"missing required property "value.config.host""#,
            r#""value.servers[1]" must be an object"#,
        ],
    );
    output(
        r#"{"type":"object","properties":{"items":{"type":"array","items":{"type":"integer"}}}}"#,
        r#"{"items":[1,"2",3.5]}"#,
        &[
            r#""value.items[1]" must be an integer"#,
            r#""value.items[2]" must be an integer"#,
        ],
    );
    arguments(
        r#"{"type":"object"}"#,
        "[1]",
        &[r#""arguments" must be an object"#],
    );
    arguments(
        r#"{"type":"array","items":{"type":"string"}}"#,
        "[1]",
        &[r#""arguments[0]" must be a string"#],
    );
    arguments(
        r#"{"type":"object","properties":{"a.b":{}},"required":["a.b"]}"#,
        "{}",
        &[r#"missing required property "a.b""#],
    );
}

#[test]
fn reports_in_schema_order() {
    let schema = r#"{"type":"object","properties":{
            "a":{"type":"string"},"b":{"type":"integer"},"c":{"type":"object","properties":{"d":{"type":"null"}}},
            "z":{}},"required":["a","c","z"],"additionalProperties":false}"#;
    arguments(
        schema,
        r#"{"y":1,"c":{"d":0},"b":"no","x":2}"#,
        &[
            r#"missing required property "a""#,
            r#""b" must be an integer"#,
            r#""c.d" must be null"#,
            r#"missing required property "z""#,
            r#""y" is not a declared property (additionalProperties: false)"#,
            r#""x" is not a declared property (additionalProperties: false)"#,
        ],
    );
    // Type first; a value of the wrong type is not looked into further.
    output(
        r#"{"type":"string","enum":["a"]}"#,
        "[]",
        &[r#""value" must be a string"#],
    );
    // Inside a branch, members are judged quietly: only the branch count is reported.
    output(
        r#"{"oneOf":[{"type":"object","properties":{"x":{}},"required":["x"]},{"type":"object","properties":{"y":{}},"required":["y"]}]}"#,
        r#"{"a":1}"#,
        &[r#""value" must match exactly one oneOf branch (matched 0)"#],
    );
}

#[test]
fn closed_objects_with_many_properties() {
    let names: Vec<String> = (0..20).map(|i| format!("p{i:02}")).collect();
    let properties: Vec<String> = names
        .iter()
        .rev()
        .map(|name| format!(r#""{name}":{{}}"#))
        .collect();
    let schema = format!(
        r#"{{"type":"object","properties":{{{}}},"additionalProperties":false}}"#,
        properties.join(",")
    );
    output(&schema, r#"{"p00":1,"p19":2,"p07":3}"#, &[]);
    output(
        &schema,
        r#"{"p00":1,"p20":2,"a":3}"#,
        &[
            r#""value.p20" is not a declared property (additionalProperties: false)"#,
            r#""value.a" is not a declared property (additionalProperties: false)"#,
        ],
    );
}

#[test]
fn one_of_branches_fail_quietly_and_nest() {
    let schema = r#"{"type":"object","properties":{"shape":{"oneOf":[
            {"type":"object","properties":{"kind":{"type":"string","const":"circle"},"r":{"type":"number"}},"required":["kind","r"],"additionalProperties":false},
            {"type":"object","properties":{"kind":{"type":"string","const":"square"},"side":{"oneOf":[{"type":"integer"},{"type":"string"}]}},"required":["kind","side"],"additionalProperties":false}
        ]},"after":{"type":"string"}}}"#;
    arguments(
        schema,
        r#"{"shape":{"kind":"circle","r":1.5},"after":"x"}"#,
        &[],
    );
    arguments(schema, r#"{"shape":{"kind":"square","side":"2"}}"#, &[]);
    arguments(
        schema,
        r#"{"shape":{"kind":"square","side":2.5},"after":1}"#,
        &[
            r#""shape" must match exactly one oneOf branch (matched 0)"#,
            r#""after" must be a string"#,
        ],
    );
    arguments(
        schema,
        r#"{"shape":{"kind":"circle","r":1,"extra":true},"after":"x"}"#,
        &[r#""shape" must match exactly one oneOf branch (matched 0)"#],
    );
    output(
        r#"{"oneOf":[{"oneOf":[{"type":"integer"},{"type":"number"}]},{"type":"string"}]}"#,
        "1.5",
        &[],
    );
    output(
        r#"{"oneOf":[{"oneOf":[{"type":"integer"},{"type":"number"}]},{"type":"string"}]}"#,
        "1",
        &[r#""value" must match exactly one oneOf branch (matched 0)"#],
    );
    output(
        r#"{"type":"array","items":{"oneOf":[{"type":"integer"},{"type":"string"}]}}"#,
        r#"[1,"a",null,2,false]"#,
        &[
            r#""value[2]" must match exactly one oneOf branch (matched 0)"#,
            r#""value[4]" must match exactly one oneOf branch (matched 0)"#,
        ],
    );
}

#[test]
fn validates_compiled_dsl() {
    let spec = parse(
            r#"{"color":{"type":"string","enum":["red","green"],"required":true},
                "config":{"type":"object","additionalProperties":false,"properties":{"host":{"type":"string","required":true}}},
                "n":{"type":"integer"}}"#,
        )
        .unwrap();
    let validator = Validator::new(
        &compile_parameters(&spec, "parameters").unwrap(),
        "inputSchema",
    )
    .unwrap();
    let messages = |value: &str| -> Vec<String> {
        let value = parse(value).unwrap();
        validator
            .validate(&value, PathRoot::Arguments)
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    assert_eq!(
        messages(r#"{"color":"red","config":{"host":"h"},"n":3,"other":1}"#),
        Vec::<String>::new()
    );
    assert_eq!(
        messages(r#"{"color":"blue","config":{"port":1},"n":1.5}"#),
        [
            r#""color" must be one of ["red","green"]"#,
            r#"missing required property "config.host""#,
            r#""config.port" is not a declared property (additionalProperties: false)"#,
            r#""n" must be an integer"#,
        ]
    );
    let output_schema = compile_value(&parse(r#"{"type":"string"}"#).unwrap(), "output").unwrap();
    let output = Validator::new(&output_schema, "output").unwrap();
    assert_eq!(
        output.validate(&parse("{}").unwrap(), PathRoot::Value),
        [Violation {
            path: "value".to_owned(),
            kind: ViolationKind::WrongType(vec![JsonType::String]),
        }]
    );
}

#[test]
fn rejects_unsupported_schemas() {
    let error = Validator::new(
        &parse(r##"{"type":"object","properties":{"a":{"$ref":"#"}}}"##).unwrap(),
        "outputSchema",
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        r#"outputSchema.properties.a: unsupported keyword "$ref""#
    );
}

#[test]
fn is_shareable() {
    fn shareable<T: Clone + Send + Sync + 'static>() {}
    shareable::<Validator>();
    let validator = Validator::new(&parse(r#"{"type":"string"}"#).unwrap(), "s").unwrap();
    let shared = Arc::new(validator.clone());
    let value = parse(r#""x""#).unwrap();
    assert_eq!(
        (validator.is_valid(&value), shared.is_valid(&value)),
        (true, true)
    );
}

fn object(members: Vec<(&str, Value)>) -> Value {
    Value::Object(
        members
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
    )
}

/// Nests `depth` levels of `wrap` around `leaf` without recursion.
fn nest(depth: usize, leaf: Value, wrap: impl Fn(Value) -> Value) -> Value {
    (0..depth).fold(leaf, |inner, _| wrap(inner))
}

#[test]
fn validates_deep_schemas_and_values_without_recursion() {
    let depth = 10_000;
    let schema = nest(
        depth,
        object(vec![("type", Value::from("string"))]),
        |inner| {
            object(vec![
                ("type", Value::from("object")),
                ("properties", object(vec![("k", inner)])),
                ("required", Value::Array(vec![Value::from("k")])),
                ("additionalProperties", Value::Bool(false)),
            ])
        },
    );
    let validator = Validator::new(&schema, "schema").unwrap();
    let valid = nest(depth, Value::from("leaf"), |inner| {
        object(vec![("k", inner)])
    });
    let wrong_leaf = nest(depth, Value::from(1), |inner| object(vec![("k", inner)]));
    let too_short = nest(depth - 1, object(vec![]), |inner| {
        object(vec![("k", inner)])
    });
    let bare_path = vec!["k"; depth].join(".");
    let messages = |value: &Value| -> Vec<String> {
        validator
            .validate(value, PathRoot::Arguments)
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    assert_eq!(messages(&valid), Vec::<String>::new());
    assert_eq!(
        messages(&wrong_leaf),
        [format!(r#""{bare_path}" must be a string"#)]
    );
    assert_eq!(
        messages(&too_short),
        [format!(r#"missing required property "{bare_path}""#)]
    );
    assert_eq!(
        (
            validator.is_valid(&valid),
            validator.is_valid(&wrong_leaf),
            validator.is_valid(&too_short)
        ),
        (true, false, false)
    );

    // Nested oneOf scopes, one per level, around arrays.
    let choices_schema = nest(
        depth,
        object(vec![("type", Value::from("string"))]),
        |inner| {
            object(vec![(
                "oneOf",
                Value::Array(vec![
                    object(vec![("type", Value::from("array")), ("items", inner)]),
                    object(vec![("type", Value::from("boolean"))]),
                ]),
            )])
        },
    );
    let choices = Validator::new(&choices_schema, "schema").unwrap();
    let strings = nest(depth, Value::from("x"), |inner| Value::Array(vec![inner]));
    let numbers = nest(depth, Value::from(1), |inner| Value::Array(vec![inner]));
    assert_eq!(choices.validate(&strings, PathRoot::Value), []);
    assert_eq!(
        choices
            .validate(&numbers, PathRoot::Value)
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        [r#""value" must match exactly one oneOf branch (matched 0)"#]
    );
    assert_eq!(
        (choices.is_valid(&strings), choices.is_valid(&numbers)),
        (true, false)
    );

    let values = [
        schema,
        choices_schema,
        valid,
        wrong_leaf,
        too_short,
        strings,
        numbers,
    ];
    for value in values {
        crate::json::drop_deep(value);
    }
}

#[test]
fn validates_a_long_array() {
    let validator = Validator::new(
        &parse(r#"{"type":"array","items":{"type":"integer"}}"#).unwrap(),
        "s",
    )
    .unwrap();
    let mut items: Vec<Value> = (0..100_000).map(Value::from).collect();
    items.push(Value::from("x"));
    let value = Value::Array(items);
    assert_eq!(
        validator
            .validate(&value, PathRoot::Value)
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        [r#""value[100000]" must be an integer"#]
    );
}
