//! Presentation: `presentAs` per agent (plain-context and second declarations refused), and
//! Code Mode's executor rule — a model-direct call of any tool but `run_code` is
//! `UNKNOWN_TOOL` with the route-back message before any policy sees it, while sub-calls
//! carrying a `parent` token are exempt.

#![allow(clippy::unwrap_used)]

use crate::support::runtime as runtime_support;

use dsh_tools::ToolRuntime;
use dsh_tools::pipeline::hooks::{ApprovalOutcome, PreDecision};
use dsh_tools::tool::{
    AgentId, BodyOutput, HarnessCode, HostRole, Presence, ToolDefinition, ToolExecutionInput,
    ToolRole, ToolRunContext,
};
use dsh_tools_protocol::PresentationMode;
use runtime_support::*;
use serde_json::json;
use std::sync::{Arc, OnceLock, Weak};

fn agent(name: &str) -> Option<AgentId> {
    Some(Arc::from(name))
}

fn route_back(name: &str) -> String {
    format!(
        "unknown tool \"{name}\": only `run_code` is callable directly — call `{name}` from inside a `run_code` program instead"
    )
}

#[tokio::test]
async fn present_as_needs_an_agent_and_one_declaration_per_scope() {
    let runtime = runtime();
    let registry = runtime.registry();
    registry.open_agent(Arc::from("x"), None).unwrap();
    let check = |scope: Option<AgentId>, code: &str, message: &str| {
        let error = registry
            .present_as(scope, PresentationMode::Code)
            .unwrap_err();
        assert_eq!((error.code(), error.to_string().as_str()), (code, message));
    };
    check(
        None,
        "NEEDS_AGENT",
        "presentAs needs an agent scope: the process-wide setting is the host config",
    );
    check(
        agent("ghost"),
        "UNKNOWN_AGENT",
        "unknown agent \"ghost\" (open it with agents/open first)",
    );
    let first = registry
        .present_as(agent("x"), PresentationMode::Both)
        .unwrap();
    check(
        agent("x"),
        "PRESENTATION_DECLARED",
        "agent \"x\" already declared a presentation",
    );
    assert_eq!(registry.mode(agent("x").as_ref()), PresentationMode::Both);
    registry.unregister(&first).unwrap();
    registry
        .present_as(agent("x"), PresentationMode::Code)
        .unwrap();
    assert_eq!(registry.mode(agent("x").as_ref()), PresentationMode::Code);
}

#[tokio::test]
async fn a_presentation_shadows_the_config_for_that_agent_and_its_descendants() {
    for config_mode in [PresentationMode::Native, PresentationMode::Code] {
        let name = serde_json::to_value(config_mode).unwrap();
        let runtime = runtime_with(json!({ "tools": { "mode": name } }));
        let registry = runtime.registry();
        registry.open_agent(Arc::from("x"), None).unwrap();
        registry
            .open_agent(Arc::from("x-child"), agent("x"))
            .unwrap();
        registry.open_agent(Arc::from("y"), None).unwrap();
        registry
            .present_as(agent("x"), PresentationMode::Both)
            .unwrap();
        let modes = [None, agent("x"), agent("x-child"), agent("y")]
            .map(|scope| registry.mode(scope.as_ref()));
        // An agent that declares none of its own inherits its parent's, else the config's.
        assert_eq!(
            modes,
            [
                config_mode,
                PresentationMode::Both,
                PresentationMode::Both,
                config_mode
            ]
        );
    }
}

/// A runtime with `read` registered globally and every policy stage journaled.
fn guarded_runtime(config: serde_json::Value) -> (Arc<ToolRuntime>, Journal) {
    let runtime = runtime_with(config);
    let journal = Journal::new();
    runtime.register(echo("read"), None).unwrap();
    runtime.add_pre_execute(0, None, Pre::fixed("p", &journal, PreDecision::Ask(None)));
    runtime.add_guard(0, None, GuardHook::new("g", &journal, |_| Ok(None)));
    runtime.set_approver(Some(Arc::new(FixedApprover {
        journal: journal.clone(),
        outcome: ApprovalOutcome::AllowedOnce,
    })));
    (runtime, journal)
}

#[tokio::test]
async fn under_code_a_direct_call_is_unknown_before_any_policy_sees_it() {
    let (runtime, journal) = guarded_runtime(json!({}));
    let registry = runtime.registry();
    registry.open_agent(Arc::from("coder"), None).unwrap();
    registry
        .present_as(agent("coder"), PresentationMode::Code)
        .unwrap();
    let observed = observe(&runtime);
    let result = runtime
        .execute(agent_call("coder", "read", json!({ "text": "x" })))
        .await;
    let expected = harness(HarnessCode::UnknownTool, &route_back("read"));
    assert_eq!(result, expected);
    assert_eq!(result.text(), format!("Error: {}", route_back("read")));
    assert_eq!(journal.take(), Vec::<String>::new());
    assert_eq!(observed.results(), vec![expected]);
    // Invalid arguments do not change that: nothing but `run_code` is callable.
    let result = runtime
        .execute(agent_call("coder", "read", json!({ "text": 1 })))
        .await;
    assert_eq!(
        result,
        harness(HarnessCode::UnknownTool, &route_back("read"))
    );
    // A name nobody registered is plainly unknown.
    let result = runtime
        .execute(agent_call("coder", "nope", json!({})))
        .await;
    assert_eq!(
        result,
        harness(HarnessCode::UnknownTool, "unknown tool \"nope\"")
    );
    // The catalog is unchanged: the agent still reports its capabilities.
    let visible: Vec<String> = registry
        .visible(agent("coder").as_ref())
        .iter()
        .map(|t| t.definition.name.to_string())
        .collect();
    assert_eq!(visible, ["read"]);
    // Other scopes keep the config's native presentation.
    let result = runtime.execute(call("read", json!({ "text": "x" }))).await;
    assert_eq!(result, text_success("x"));
    assert_eq!(journal.take(), ["pre:p", "approve:-", "guard:g"]);
}

#[tokio::test]
async fn a_code_config_applies_to_every_scope_without_its_own_presentation() {
    let (runtime, journal) = guarded_runtime(json!({ "tools": { "mode": "code" } }));
    let registry = runtime.registry();
    for (scope, mode) in [
        ("native", PresentationMode::Native),
        ("both", PresentationMode::Both),
    ] {
        registry.open_agent(Arc::from(scope), None).unwrap();
        registry.present_as(agent(scope), mode).unwrap();
    }
    registry.open_agent(Arc::from("plain"), None).unwrap();
    for scope in [None, Some("plain")] {
        let input = call("read", json!({ "text": "x" })).with_agent(scope.map(Arc::from));
        let result = runtime.execute(input).await;
        assert_eq!(
            result,
            harness(HarnessCode::UnknownTool, &route_back("read"))
        );
    }
    assert_eq!(journal.take(), Vec::<String>::new());
    for scope in ["native", "both"] {
        let result = runtime
            .execute(agent_call(scope, "read", json!({ "text": "x" })))
            .await;
        assert_eq!(result, text_success("x"), "{scope}");
        assert_eq!(journal.take(), ["pre:p", "approve:-", "guard:g"]);
    }
}

/// A stand-in `run_code` transport whose body calls `read` as a sub-call carrying the outer
/// execution's token as `parent`, like the SDK bridge does.
fn install_fake_run_code(runtime: &Arc<ToolRuntime>) {
    let weak: Arc<OnceLock<Weak<ToolRuntime>>> = Arc::new(OnceLock::new());
    weak.set(Arc::downgrade(runtime)).unwrap();
    let role = ToolRole::Host(HostRole {
        purpose: "Code Mode",
        presence: Presence::CodePresentation,
        code_entry: true,
    });
    let definition = ToolDefinition::builder("run_code")
        .role(role)
        .output(json!({ "type": "json" }))
        .body(move |ctx: ToolRunContext| {
            let runtime = weak.get().and_then(Weak::upgrade).unwrap();
            async move {
                let execution = &ctx.execution;
                let mut sub = ToolExecutionInput::new(
                    format!("{}:code:1", execution.call_id),
                    "read",
                    json!({ "text": "from the program" }),
                )
                .with_agent(execution.agent.clone())
                .with_signal(ctx.signal.clone());
                sub.parent = Some(execution.token);
                let result = runtime.execute(sub).await;
                Ok(BodyOutput::from(json!({
                    "result": result.value().cloned(),
                    "error": result.error().map(|e| e.message.clone()),
                })))
            }
        })
        .unwrap();
    runtime.registry().install_host_tool(definition).unwrap();
}

#[tokio::test]
async fn sub_calls_with_a_parent_token_are_exempt_from_the_code_only_rule() {
    let runtime = runtime_with(json!({ "tools": { "mode": "code" } }));
    runtime.register(echo("read"), None).unwrap();
    install_fake_run_code(&runtime);
    let journal = Journal::new();
    let seen = journal.clone();
    runtime.add_pre_execute(
        0,
        None,
        Pre::new("p", &journal, move |execution| {
            seen.push(format!(
                "{} parent:{}",
                execution.name,
                execution.parent.is_some()
            ));
            Ok(PreDecision::Allow)
        }),
    );
    let result = runtime.execute(call("run_code", json!({}))).await;
    let value = json!({ "result": "from the program", "error": null });
    assert_eq!(
        result,
        success(
            value,
            "{\n  \"result\": \"from the program\",\n  \"error\": null\n}"
        )
    );
    assert_eq!(
        journal.events(),
        [
            "pre:p",
            "run_code parent:false",
            "pre:p",
            "read parent:true"
        ]
    );
}

#[tokio::test]
async fn run_code_resolves_only_under_a_code_presentation_and_is_not_in_the_catalog() {
    let runtime = runtime();
    runtime.register(echo("read"), None).unwrap();
    install_fake_run_code(&runtime);
    let registry = runtime.registry();
    registry.open_agent(Arc::from("coder"), None).unwrap();
    registry
        .present_as(agent("coder"), PresentationMode::Code)
        .unwrap();
    let native = runtime.execute(call("run_code", json!({}))).await;
    assert_eq!(
        native,
        harness(HarnessCode::UnknownTool, "unknown tool \"run_code\"")
    );
    let coded = runtime
        .execute(agent_call("coder", "run_code", json!({})))
        .await;
    assert_eq!(
        coded.value().cloned(),
        Some(json!({ "result": "from the program", "error": null }))
    );
    for scope in [None, agent("coder")] {
        let visible: Vec<String> = registry
            .visible(scope.as_ref())
            .iter()
            .map(|t| t.definition.name.to_string())
            .collect();
        assert_eq!(visible, ["read"]);
    }
}
