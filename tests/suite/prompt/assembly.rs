//! Prompt assembly per presentation mode, against golden files, and its determinism.
//! Regenerate the goldens with `UPDATE_GOLDEN=1 cargo test --test prompt_assembly` and review the diff.

#![allow(clippy::unwrap_used)]

use dsh_tools::ToolRuntime;
use dsh_tools::code_mode::CodeMode;
use dsh_tools::prompt::{PromptError, assemble};
use dsh_tools::tool::{AgentId, BodyOutput, ToolDefinition, ToolRunContext};
use dsh_tools_protocol::{CodeLanguage, CodeRuntimeConfig, HostConfig, PresentationMode};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;

fn tool(name: &str, description: &str, parameters: Value, output: Value) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description(description)
        .parameters(parameters)
        .output(output)
        .body(|ctx: ToolRunContext| async move { Ok(BodyOutput::from(ctx.arguments().clone())) })
        .unwrap()
}

/// The same three tools, registered in the given order.
fn runtime(mode: PresentationMode, order: &[usize]) -> Arc<ToolRuntime> {
    let mut config = HostConfig::default();
    config.tools.mode = mode;
    let runtime = ToolRuntime::new(&config);
    CodeMode::install(&runtime, config.code_runtime.clone()).unwrap();
    let tools = [
        || {
            tool(
                "read",
                "Read a file.",
                json!({ "file_path": { "type": "string", "required": true }, "offset": { "type": "integer" } }),
                json!({ "type": "string" }),
            )
        },
        || {
            tool(
                "my-search",
                "Search things.",
                json!({ "query": { "type": "string", "required": true }, "mode": { "type": "string", "enum": ["fast", "deep"] } }),
                json!({ "type": "array", "items": { "type": "object", "properties": { "path": { "type": "string", "required": true } }, "additionalProperties": false } }),
            )
        },
        || {
            tool(
                "bash",
                "Run a command.",
                json!({ "command": { "type": "string", "required": true } }),
                json!({ "type": "object", "properties": { "exitCode": { "type": "integer", "required": true }, "output": { "type": "string", "required": true } }, "additionalProperties": false }),
            )
        },
    ];
    for &i in order {
        runtime.register(tools[i](), None).unwrap();
    }
    runtime
}

fn golden(name: &str, actual: &Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/prompt")
        .join(format!("{name}.json"));
    let text = serde_json::to_string_pretty(actual).unwrap() + "\n";
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        expected == text,
        "{} differs from the assembly:\n{text}",
        path.display()
    );
}

fn assembled(runtime: &ToolRuntime, agent: Option<&AgentId>, order: &[&str]) -> Value {
    let order: Vec<String> = order.iter().map(|s| s.to_string()).collect();
    serde_json::to_value(assemble(runtime, agent, &order, &CodeRuntimeConfig::default()).unwrap())
        .unwrap()
}

#[test]
fn each_mode_assembles_as_its_golden_file() {
    for (mode, name) in [
        (PresentationMode::Native, "native"),
        (PresentationMode::Code, "code"),
        (PresentationMode::Both, "both"),
    ] {
        golden(name, &assembled(&runtime(mode, &[0, 1, 2]), None, &[]));
    }
}

#[test]
fn the_same_tool_set_assembles_byte_identically_whatever_the_registration_order() {
    for mode in [
        PresentationMode::Native,
        PresentationMode::Code,
        PresentationMode::Both,
    ] {
        let first =
            serde_json::to_string(&assembled(&runtime(mode, &[0, 1, 2]), None, &[])).unwrap();
        let second =
            serde_json::to_string(&assembled(&runtime(mode, &[2, 0, 1]), None, &[])).unwrap();
        assert_eq!(first, second, "{mode:?}");
    }
}

#[test]
fn tool_order_orders_native_tools_and_rejects_what_the_mode_does_not_contribute() {
    let native = runtime(PresentationMode::Native, &[0, 1, 2]);
    let names = |v: &Value| {
        v["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(&assembled(&native, None, &["read", "bash"])),
        ["read", "bash", "my-search"]
    );
    let rejected = assemble(
        &native,
        None,
        &["run_code".into()],
        &CodeRuntimeConfig::default(),
    )
    .unwrap_err();
    assert_eq!(
        rejected,
        PromptError::OrderNotContributed("run_code".into(), "native")
    );
    let code = runtime(PresentationMode::Code, &[0, 1, 2]);
    let rejected =
        assemble(&code, None, &["read".into()], &CodeRuntimeConfig::default()).unwrap_err();
    assert_eq!(
        rejected,
        PromptError::OrderNotContributed("read".into(), "code")
    );
    assert_eq!(names(&assembled(&code, None, &["run_code"])), ["run_code"]);
    let both = runtime(PresentationMode::Both, &[0, 1, 2]);
    assert_eq!(
        names(&assembled(&both, None, &["run_code", "read"])),
        ["run_code", "read", "bash", "my-search"]
    );
    native.registry().reserve("later", None).unwrap();
    assert_eq!(
        names(&assembled(&native, None, &["later", "bash"])),
        ["bash", "my-search", "read"]
    );
}

#[test]
fn a_code_mode_agent_beside_a_native_one_gets_its_own_run_code_and_sdk() {
    let runtime = runtime(PresentationMode::Native, &[0, 1, 2]);
    let coder: AgentId = Arc::from("coder");
    runtime.registry().open_agent(coder.clone(), None).unwrap();
    runtime
        .registry()
        .present_as(Some(coder.clone()), PresentationMode::Code)
        .unwrap();
    let restriction = dsh_tools::registry::Restriction::Deny(["bash".into()].into_iter().collect());
    runtime
        .registry()
        .restrict(Some(coder.clone()), restriction)
        .unwrap();
    let agent = assembled(&runtime, Some(&coder), &[]);
    golden("agent-code", &agent);
    let sdk = agent["sections"][1]["text"].as_str().unwrap();
    assert!(
        sdk.contains("\"my-search\"") && sdk.contains("read:") && !sdk.contains("bash"),
        "{sdk}"
    );
    let global = assembled(&runtime, None, &[]);
    assert_eq!(global["sections"], json!([]));
    assert_eq!(global["tools"].as_array().unwrap().len(), 3);
    assert_eq!(
        runtime.registry().visible(Some(&coder)).len(),
        2,
        "the catalog is unchanged by presentation"
    );
}

#[test]
fn an_agent_whose_language_has_no_loaded_runtime_rejects_assembly_loudly() {
    let runtime = runtime(PresentationMode::Native, &[0, 1, 2]);
    let coder = AgentId::from("py-coder");
    runtime.registry().open_agent(coder.clone(), None).unwrap();
    runtime
        .registry()
        .present_as_in(
            Some(coder.clone()),
            PresentationMode::Code,
            Some(CodeLanguage::Python),
        )
        .unwrap();
    let error = assemble(&runtime, Some(&coder), &[], &CodeRuntimeConfig::default()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "Code Mode language \"python\" has no runtime loaded in this host (codeRuntime.language / codeRuntime.languages)"
    );
    assert_eq!(error.code(), "NO_CODE_RUNTIME");
    let both = CodeRuntimeConfig {
        languages: vec![CodeLanguage::Typescript, CodeLanguage::Python],
        ..CodeRuntimeConfig::default()
    };
    let assembly = assemble(&runtime, Some(&coder), &[], &both).unwrap();
    let assembly = serde_json::to_value(assembly).unwrap();
    golden("agent-python", &assembly);
    let sdk = assembly["sections"][1]["text"].as_str().unwrap();
    assert!(
        sdk.contains("```py\n") && sdk.contains("async def read(self, args: ReadArgs)"),
        "{sdk}"
    );
    // The default scope keeps speaking TypeScript in the same host.
    let typescript = assemble(&runtime, None, &[], &both).unwrap();
    assert!(
        typescript.sections.is_empty(),
        "the default scope is native"
    );
}
