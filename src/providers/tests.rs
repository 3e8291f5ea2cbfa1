//! Unit tests of the provider shapes: strict mode, Gemini's subset, names, results.

#![allow(clippy::unwrap_used)]

use super::*;
use serde_json::json;

fn shaped(format: ProviderFormat, input: Value) -> Shaped {
    let tool = ToolShape {
        name: "t",
        description: "d",
        input_schema: &input,
        output_schema: None,
        defer_loading: false,
    };
    shape(format, &[tool])
}

#[test]
fn strict_requires_every_property_and_makes_optional_ones_nullable() {
    let out = shaped(
        ProviderFormat::OpenaiResponses,
        json!({ "type": "object", "properties": {
            "a": { "type": "string" }, "b": { "type": "integer", "enum": [1, 2] }
        }, "required": ["a"] }),
    );
    assert!(out.weakened.is_empty(), "{:?}", out.weakened);
    let parameters = &out.tools[0]["parameters"];
    assert_eq!(out.tools[0]["strict"], true);
    assert_eq!(parameters["required"], json!(["a", "b"]));
    assert_eq!(parameters["additionalProperties"], false);
    assert_eq!(parameters["properties"]["a"]["type"], "string");
    assert_eq!(
        parameters["properties"]["b"]["type"],
        json!(["integer", "null"])
    );
    assert_eq!(parameters["properties"]["b"]["enum"], json!([1, 2, null]));
}

#[test]
fn an_open_map_turns_strict_off_and_says_why() {
    let out = shaped(
        ProviderFormat::OpenaiChat,
        json!({ "type": "object", "properties": { "m": { "type": "object", "additionalProperties": { "type": "string" } } } }),
    );
    assert_eq!(out.tools[0]["function"]["strict"], false);
    let changes = &out.weakened[0].changes;
    assert_eq!(changes[0].path, "/properties/m/additionalProperties");
    assert!(
        changes[0].change.starts_with("strict mode off"),
        "{changes:?}"
    );
}

#[test]
fn gemini_inlines_refs_and_reports_non_string_enums() {
    let out = shaped(
        ProviderFormat::Gemini,
        json!({ "type": "object", "$defs": { "n": { "type": "integer", "enum": [1, 2] } },
                "properties": { "x": { "$ref": "#/$defs/n" }, "y": { "type": ["string", "null"] } } }),
    );
    let declaration = &out.tools[0]["functionDeclarations"][0];
    let x = &declaration["parameters"]["properties"]["x"];
    assert_eq!(x["type"], "INTEGER");
    assert!(x.get("enum").is_none());
    assert_eq!(
        declaration["parameters"]["properties"]["y"],
        json!({ "type": "STRING", "nullable": true })
    );
    assert_eq!(out.weakened[0].changes[0].path, "/properties/x/enum");
}

#[test]
fn names_a_provider_refuses_leave_the_tool_out_with_the_reason() {
    let input = json!({ "type": "object" });
    let tool = ToolShape {
        name: "mcp__x__a.b",
        description: "",
        input_schema: &input,
        output_schema: None,
        defer_loading: false,
    };
    let out = shape(ProviderFormat::OpenaiResponses, &[tool]);
    assert!(out.tools.is_empty());
    assert!(out.weakened[0].omitted);
    let out = shape(ProviderFormat::Gemini, &[tool]);
    assert_eq!(out.tools.len(), 1, "dots are valid Gemini names");
}

#[test]
fn strict_nulls_of_optional_properties_are_dropped_before_validation() {
    let schema = json!({ "type": "object", "properties": {
        "a": { "type": "string" }, "b": { "type": ["string", "null"] },
        "c": { "type": "object", "properties": { "d": { "type": "integer" } } }
    }, "required": [] });
    let mut args = json!({ "a": null, "b": null, "c": { "d": null } });
    drop_strict_nulls(&schema, &mut args);
    assert_eq!(args, json!({ "b": null, "c": {} }));
}

#[test]
fn results_take_each_providers_block() {
    let content: Vec<dsh_tools_protocol::ContentBlock> =
        serde_json::from_value(json!([{ "type": "text", "text": "no" }])).unwrap();
    let anthropic = tool_result(ProviderFormat::Anthropic, "c1", "t", true, &content, None);
    assert_eq!(
        anthropic,
        json!({ "type": "tool_result", "tool_use_id": "c1", "content": [{ "type": "text", "text": "no" }], "is_error": true })
    );
    let gemini = tool_result(ProviderFormat::Gemini, "c1", "t", true, &content, None);
    assert_eq!(
        gemini["functionResponse"]["response"],
        json!({ "error": "no" })
    );
}
