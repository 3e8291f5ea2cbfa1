//! The `tools:sdk` text of a tool set covering every schema DSL construct (plus raw output
//! schemas that degrade), in both languages side by side: `tests/golden/sdk/every_construct.ts`
//! and `.py`. Regenerate with `GOLDEN_BLESS=1 cargo test --test sdk_golden` and review the diff.

#![allow(clippy::unwrap_used)]

use dsh_tools::ToolRuntime;
use dsh_tools::code_mode::CodeMode;
use dsh_tools::codegen::{self, SdkTool};
use dsh_tools::tool::{BodyOutput, ToolDefinition, ToolRunContext};
use dsh_tools_protocol::{CodeLanguage, HostConfig, PresentationMode};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;

fn tool(name: &str, description: &str, parameters: Value, output: Value) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description(description)
        .parameters(parameters)
        .output_json_schema(output)
        .body(|ctx: ToolRunContext| async move { Ok(BodyOutput::from(ctx.arguments().clone())) })
        .unwrap()
}

/// Tools whose parameters use every DSL construct and whose outputs are raw JSON Schema,
/// supported and not.
fn every_construct() -> Arc<ToolRuntime> {
    let mut config = HostConfig::default();
    config.tools.mode = PresentationMode::Code;
    let runtime = ToolRuntime::new(&config);
    CodeMode::install(&runtime, config.code_runtime.clone()).unwrap();
    let tools = [
        tool(
            "scalars",
            "Every scalar type.\n\nWith a second paragraph.",
            json!({
                "text": { "type": "string", "description": "Some text", "required": true },
                "count": { "type": "integer", "required": true },
                "ratio": { "type": "number" },
                "flag": { "type": "boolean", "title": "Flag" },
                "nothing": { "type": "null" },
                "anything": { "type": "json", "description": "Any JSON" }
            }),
            json!({ "oneOf": [{ "type": "string" }, { "type": "null" }] }),
        ),
        tool(
            "literals",
            "Enums and consts.",
            json!({
                "mode": { "type": "string", "enum": ["fast", "deep"], "required": true },
                "level": { "type": "integer", "enum": [1, 2, 3] },
                "fixed": { "type": "string", "const": "v1" },
                "on": { "type": "boolean", "const": true }
            }),
            json!({ "oneOf": [
                { "type": "string", "enum": ["ok"] },
                { "type": "number", "enum": [0, 1.5] },
                { "type": "boolean", "const": false },
                { "type": "null" }
            ] }),
        ),
        tool(
            "collections",
            "",
            json!({
                "tags": { "type": "array", "items": { "type": "string" }, "required": true },
                "matrix": { "type": "array", "items": { "type": "array", "items": { "type": "number" } } },
                "any_list": { "type": "array" },
                "points": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": { "x": { "type": "number", "required": true }, "y": { "type": "number", "required": true } },
                        "additionalProperties": false
                    }
                },
                "config": {
                    "type": "object",
                    "description": "Nested settings.",
                    "properties": {
                        "host": { "type": "string", "required": true },
                        "retry": { "type": "object", "properties": { "times": { "type": "integer" } }, "additionalProperties": true }
                    },
                    "additionalProperties": true
                },
                "bag": { "type": "object", "additionalProperties": true },
                "sealed": { "type": "object", "additionalProperties": false }
            }),
            json!({
                "type": "object",
                "properties": { "items": { "type": "array", "items": { "oneOf": [{ "type": "string" }, { "type": "object", "properties": { "id": { "type": "integer" } }, "required": ["id"] }] } } },
                "required": ["items"]
            }),
        ),
        tool(
            "my-tool",
            "An exotic name with an exotic field.",
            json!({ "my-key": { "type": "string", "required": true }, "class": { "type": "string" } }),
            json!({ "type": "object", "properties": { "ok": { "type": "boolean" } }, "required": ["ok"], "additionalProperties": false }),
        ),
    ];
    for tool in tools {
        runtime.register(tool, None).unwrap();
    }
    runtime
}

fn golden(file: &str, text: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/sdk")
        .join(file);
    if std::env::var_os("GOLDEN_BLESS").is_some() {
        std::fs::write(&path, text).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        expected == text,
        "{} differs from the SDK:\n{text}",
        path.display()
    );
}

/// Raw schemas (as an ingested MCP server may declare them) outside the supported subset:
/// each such node degrades alone (`unknown` / `Any`).
fn degraded() -> (Value, Value) {
    (
        json!({
            "type": "object",
            "properties": {
                "either": { "anyOf": [{ "type": "string" }] },
                "tuple": { "type": "array", "items": [{ "type": "string" }] },
                "ref": { "$ref": "#/$defs/node" }
            },
            "required": ["either"]
        }),
        json!({
            "type": "object",
            "properties": {
                "map": { "type": "object", "additionalProperties": { "type": "string" } },
                "unions": { "type": ["integer", "null"] }
            },
            "additionalProperties": false
        }),
    )
}

/// The SDK of the registered tools plus the raw `degraded` tool, in `language`.
fn sdk(runtime: &ToolRuntime, language: CodeLanguage) -> String {
    let visible = runtime.registry().visible(None);
    let (input, output) = degraded();
    let mut tools: Vec<SdkTool> = visible
        .iter()
        .map(|t| SdkTool {
            name: &t.definition.name,
            description: &t.definition.description,
            input_schema: t.definition.input.json_schema(),
            output_schema: &t.definition.output.json_schema,
        })
        .collect();
    tools.push(SdkTool {
        name: "degraded",
        description: "Raw constructs outside the supported subset.",
        input_schema: &input,
        output_schema: &output,
    });
    match language {
        CodeLanguage::Typescript => codegen::typescript_sdk(&tools),
        CodeLanguage::Python => codegen::python_sdk(&tools),
    }
}

#[test]
fn every_construct_renders_in_both_languages_as_the_golden_files() {
    let runtime = every_construct();
    let typescript = sdk(&runtime, CodeLanguage::Typescript);
    let python = sdk(&runtime, CodeLanguage::Python);
    golden("every_construct.ts", &typescript);
    golden("every_construct.py", &python);
    // Byte-identical for an unchanged tool set; the registry's SDK is the same renderer.
    assert_eq!(sdk(&every_construct(), CodeLanguage::Python), python);
    assert!(
        CodeMode::sdk_in(&runtime, None, CodeLanguage::Python)
            .contains("class ScalarsArgs(TypedDict):")
    );
}

#[test]
fn the_python_sdk_block_is_valid_python() {
    let runtime = every_construct();
    let sdk = sdk(&runtime, CodeLanguage::Python);
    let block = sdk
        .split_once("```py\n")
        .and_then(|(_, rest)| rest.rsplit_once("```"))
        .map(|(block, _)| block)
        .unwrap();
    let output = std::process::Command::new("python3")
        .args([
            "-I",
            "-c",
            "import ast, sys; compile(sys.stdin.read(), 'sdk.py', 'exec', flags=ast.PyCF_ONLY_AST)",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(block.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "",
        "the SDK block does not parse:\n{block}"
    );
    assert!(output.status.success());
}
