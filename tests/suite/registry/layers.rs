//! Registry layers: duplicate names per layer, the reserved `run_code` name, agent shadowing,
//! unregistering each kind of registration, closing agent scopes (children and agent-scoped
//! listeners included), registration-time errors, and change notifications.

#![allow(clippy::unwrap_used)]

use crate::support::runtime as runtime_support;

use dsh_tools::pipeline::hooks::{PostDecision, PreDecision};
use dsh_tools::registry::{Registry, RegistryError, Restriction};
use dsh_tools::tool::{
    AgentId, BodyOutput, DefinitionError, HarnessCode, ToolDefinition, ToolRunContext,
};
use dsh_tools_protocol::PresentationMode;
use parking_lot::Mutex;
use runtime_support::*;
use serde_json::json;
use std::sync::Arc;

fn agent(name: &str) -> Option<AgentId> {
    Some(Arc::from(name))
}

/// A tool named `name` that returns `label`, so a test can tell registrations apart.
fn labelled(name: &str, label: &str) -> ToolDefinition {
    constant(name, json!(label))
}

fn names(registry: &Registry, scope: Option<&str>) -> Vec<String> {
    let scope = scope.map(Arc::<str>::from);
    registry
        .visible(scope.as_ref())
        .iter()
        .map(|t| t.definition.name.to_string())
        .collect()
}

fn assert_error(result: Result<impl std::fmt::Debug, RegistryError>, code: &str, message: &str) {
    let error = result.unwrap_err();
    assert_eq!((error.code(), error.to_string().as_str()), (code, message));
}

#[tokio::test]
async fn names_are_unique_per_layer_and_agents_may_reuse_global_ones() {
    let runtime = runtime();
    let registry = runtime.registry();
    registry.open_agent(Arc::from("x"), None).unwrap();
    registry.open_agent(Arc::from("y"), None).unwrap();
    let global = runtime.register(labelled("a", "global"), None).unwrap();
    assert_error(
        runtime.register(labelled("a", "again"), None),
        "DUPLICATE_TOOL",
        "tool \"a\" is already registered in this layer",
    );
    runtime.register(labelled("a", "x"), agent("x")).unwrap();
    assert_error(
        runtime.register(labelled("a", "x again"), agent("x")),
        "DUPLICATE_TOOL",
        "tool \"a\" is already registered in this layer",
    );
    runtime.register(labelled("a", "y"), agent("y")).unwrap();
    registry.unregister(&global).unwrap();
    runtime.register(labelled("a", "global 2"), None).unwrap();
    for (scope, label) in [(None, "global 2"), (Some("x"), "x"), (Some("y"), "y")] {
        let input = call("a", json!({})).with_agent(scope.map(Arc::from));
        let result = runtime.execute(input).await;
        assert_eq!(result, text_success(label), "{scope:?}");
    }
}

#[tokio::test]
async fn run_code_is_reserved_in_every_mode_and_layer() {
    let reserved =
        "\"run_code\" is reserved for Code Mode and cannot be registered, reserved or restricted";
    for mode in ["native", "code", "both"] {
        let runtime = runtime_with(json!({ "tools": { "mode": mode } }));
        let registry = runtime.registry();
        registry.open_agent(Arc::from("x"), None).unwrap();
        for scope in [None, agent("x")] {
            assert_error(
                runtime.register(labelled("run_code", "fake"), scope.clone()),
                "RESERVED_NAME",
                reserved,
            );
            assert_error(
                registry.reserve("run_code", scope.clone()),
                "RESERVED_NAME",
                reserved,
            );
        }
        for restriction in [
            Restriction::Allow([Arc::from("run_code")].into()),
            Restriction::Deny([Arc::from("run_code")].into()),
        ] {
            assert_error(
                registry.restrict(agent("x"), restriction),
                "RESERVED_NAME",
                reserved,
            );
        }
        assert_eq!(names(registry, None), Vec::<String>::new(), "{mode}");
    }
}

#[tokio::test]
async fn an_empty_name_is_refused() {
    let runtime = runtime();
    assert_error(
        runtime.register(labelled("", "x"), None),
        "INVALID_NAME",
        "tool name must be a non-empty string",
    );
    assert_error(
        runtime.registry().reserve("", None),
        "INVALID_NAME",
        "tool name must be a non-empty string",
    );
}

#[tokio::test]
async fn an_agent_tool_shadows_the_global_one_for_that_agent_and_its_children() {
    let runtime = runtime();
    let registry = runtime.registry();
    registry.open_agent(Arc::from("x"), None).unwrap();
    registry.open_agent(Arc::from("y"), None).unwrap();
    registry
        .open_agent(Arc::from("x-child"), agent("x"))
        .unwrap();
    let global = runtime.register(labelled("read", "global"), None).unwrap();
    runtime.register(labelled("bash", "global"), None).unwrap();
    let local = runtime.register(labelled("read", "x"), agent("x")).unwrap();
    runtime.register(labelled("mine", "x"), agent("x")).unwrap();
    assert_eq!(names(registry, None), ["bash", "read"]);
    assert_eq!(names(registry, Some("x")), ["bash", "mine", "read"]);
    assert_eq!(names(registry, Some("y")), ["bash", "read"]);
    // A child agent inherits its parent's registrations (the nearest layer shadows).
    assert_eq!(names(registry, Some("x-child")), ["bash", "mine", "read"]);
    let registration = |scope: Option<&str>| {
        let scope = scope.map(Arc::<str>::from);
        registry
            .resolve("read", scope.as_ref())
            .map(|t| t.registration.to_string())
    };
    assert_eq!(registration(Some("x")), Some(local.to_string()));
    assert_eq!(registration(Some("y")), Some(global.to_string()));
    assert_eq!(registration(None), Some(global.to_string()));
    assert_eq!(registration(Some("x-child")), Some(local.to_string()));
    assert_eq!(
        runtime.execute(agent_call("x", "read", json!({}))).await,
        text_success("x")
    );
    assert_eq!(
        runtime.execute(agent_call("y", "read", json!({}))).await,
        text_success("global")
    );
    assert_eq!(
        runtime.execute(call("mine", json!({}))).await,
        harness(HarnessCode::UnknownTool, "unknown tool \"mine\"")
    );
}

#[tokio::test]
async fn agent_scopes_must_be_open_and_unique() {
    let runtime = runtime();
    let registry = runtime.registry();
    assert_error(
        runtime.register(labelled("a", "a"), agent("ghost")),
        "UNKNOWN_AGENT",
        "unknown agent \"ghost\" (open it with agents/open first)",
    );
    assert_error(
        registry.reserve("a", agent("ghost")),
        "UNKNOWN_AGENT",
        "unknown agent \"ghost\" (open it with agents/open first)",
    );
    registry.open_agent(Arc::from("x"), None).unwrap();
    assert_error(
        registry.open_agent(Arc::from("x"), None),
        "AGENT_EXISTS",
        "agent \"x\" is already open",
    );
    assert_error(
        registry.open_agent(Arc::from("y"), agent("ghost")),
        "UNKNOWN_AGENT",
        "unknown agent \"ghost\" (open it with agents/open first)",
    );
    assert_error(
        runtime.close_agent("ghost"),
        "UNKNOWN_AGENT",
        "unknown agent \"ghost\" (open it with agents/open first)",
    );
    assert!(registry.has_agent("x"));
    assert!(!registry.has_agent("y"));
}

#[tokio::test]
async fn unregister_disposes_exactly_the_registration_it_names() {
    let runtime = runtime();
    let registry = runtime.registry();
    registry.open_agent(Arc::from("x"), None).unwrap();
    let tool = runtime.register(labelled("a", "a"), None).unwrap();
    runtime.register(labelled("b", "b"), None).unwrap();
    let reservation = registry.reserve("later", None).unwrap();
    let second_reservation = registry.reserve("later", None).unwrap();
    let restriction = registry
        .restrict(agent("x"), Restriction::Deny([Arc::from("a")].into()))
        .unwrap();
    let presentation = registry
        .present_as(agent("x"), PresentationMode::Both)
        .unwrap();
    assert_eq!(names(registry, Some("x")), ["b"]);
    assert_eq!(registry.mode(agent("x").as_ref()), PresentationMode::Both);

    registry.unregister(&restriction).unwrap();
    assert_eq!(names(registry, Some("x")), ["a", "b"]);
    registry.unregister(&presentation).unwrap();
    assert_eq!(registry.mode(agent("x").as_ref()), PresentationMode::Native);
    registry
        .present_as(agent("x"), PresentationMode::Code)
        .unwrap();
    // One of two reservations of the same name goes; the name stays known.
    registry.unregister(&reservation).unwrap();
    registry
        .restrict(agent("x"), Restriction::Allow([Arc::from("later")].into()))
        .unwrap();
    registry.unregister(&second_reservation).unwrap();
    assert_error(
        registry.restrict(agent("x"), Restriction::Allow([Arc::from("later")].into())),
        "UNKNOWN_NAME",
        "restrict names unknown tool \"later\" (register or reserve it globally or in an ancestor scope first)",
    );
    registry.unregister(&tool).unwrap();
    assert_eq!(names(registry, None), ["b"]);
    assert_eq!(
        runtime.execute(call("a", json!({}))).await,
        harness(HarnessCode::UnknownTool, "unknown tool \"a\"")
    );
    for id in [
        tool.to_string(),
        restriction.to_string(),
        "nope".to_string(),
    ] {
        assert_error(
            registry.unregister(&id),
            "UNKNOWN_REGISTRATION",
            &format!("unknown registration \"{id}\""),
        );
    }
}

#[tokio::test]
async fn closing_an_agent_disposes_its_scope_its_children_and_their_listeners() {
    let runtime = runtime();
    let registry = runtime.registry();
    let journal = Journal::new();
    runtime.register(labelled("t", "global"), None).unwrap();
    runtime.register(labelled("u", "global"), None).unwrap();
    registry.open_agent(Arc::from("x"), None).unwrap();
    registry
        .open_agent(Arc::from("x-child"), agent("x"))
        .unwrap();
    registry.open_agent(Arc::from("y"), None).unwrap();
    let mut ids = Vec::new();
    for scope in ["x", "x-child"] {
        ids.push(
            runtime
                .register(labelled("t", scope), agent(scope))
                .unwrap(),
        );
        ids.push(registry.reserve("r", agent(scope)).unwrap());
        let deny_u = Restriction::Deny([Arc::from("u")].into());
        ids.push(registry.restrict(agent(scope), deny_u).unwrap());
        ids.push(
            registry
                .present_as(agent(scope), PresentationMode::Both)
                .unwrap(),
        );
        let pre = Pre::fixed(&format!("pre-{scope}"), &journal, PreDecision::Allow);
        runtime.add_pre_execute(0, agent(scope), pre);
        let guard = GuardHook::new(&format!("guard-{scope}"), &journal, |_| Ok(None));
        runtime.add_guard(0, agent(scope), guard);
        runtime.add_wrapper(
            0,
            agent(scope),
            Around::new(&format!("wrap-{scope}"), &journal),
        );
        let post = Post::fixed(&format!("post-{scope}"), &journal, PostDecision::accept());
        runtime.add_post_execute(0, agent(scope), post);
    }
    let observed = Observed::default();
    runtime.add_observer(agent("x"), Arc::new(observed.clone()));
    runtime.add_pre_execute(
        0,
        agent("y"),
        Pre::fixed("pre-y", &journal, PreDecision::Allow),
    );
    runtime.add_pre_execute(
        0,
        None,
        Pre::fixed("pre-global", &journal, PreDecision::Allow),
    );

    runtime.close_agent("x").unwrap();
    assert!(!registry.has_agent("x"));
    assert!(!registry.has_agent("x-child"));
    assert!(registry.has_agent("y"));
    for id in &ids {
        assert_error(
            registry.unregister(id),
            "UNKNOWN_REGISTRATION",
            &format!("unknown registration \"{id}\""),
        );
    }
    // Reopened scopes start empty: no shadow, no mask, no presentation, no listeners.
    registry.open_agent(Arc::from("x"), None).unwrap();
    registry
        .open_agent(Arc::from("x-child"), agent("x"))
        .unwrap();
    for scope in ["x", "x-child"] {
        assert_eq!(names(registry, Some(scope)), ["t", "u"]);
        assert_eq!(
            registry.mode(agent(scope).as_ref()),
            PresentationMode::Native
        );
        let result = runtime.execute(agent_call(scope, "t", json!({}))).await;
        assert_eq!(result, text_success("global"));
        assert_eq!(journal.take(), ["pre:pre-global"], "{scope}");
    }
    assert_eq!(observed.all().len(), 0);
    let result = runtime.execute(agent_call("y", "t", json!({}))).await;
    assert_eq!(result, text_success("global"));
    assert_eq!(journal.take(), ["pre:pre-y", "pre:pre-global"]);
}

#[tokio::test]
async fn closing_a_child_leaves_its_parent_open() {
    let runtime = runtime();
    let registry = runtime.registry();
    registry.open_agent(Arc::from("x"), None).unwrap();
    registry
        .open_agent(Arc::from("x-child"), agent("x"))
        .unwrap();
    let kept = runtime.register(labelled("t", "x"), agent("x")).unwrap();
    runtime.close_agent("x-child").unwrap();
    assert!(registry.has_agent("x"));
    assert!(!registry.has_agent("x-child"));
    registry.unregister(&kept).unwrap();
}

#[tokio::test]
async fn definitions_without_a_supported_output_declaration_are_refused() {
    let body = |_: ToolRunContext| async { Ok(BodyOutput::from(json!(null))) };
    let check = |built: Result<ToolDefinition, DefinitionError>, code: &str, message: &str| {
        assert_error(built.map_err(RegistryError::from), code, message);
    };
    check(
        ToolDefinition::builder("t").body(body),
        "MISSING_OUTPUT",
        "tool definition needs an output declaration: output.schema (DSL) or output.jsonSchema (raw)",
    );
    check(
        ToolDefinition::builder("t")
            .output(json!({ "type": "strng" }))
            .body(body),
        "UNSUPPORTED_SCHEMA",
        "unsupported schema: output.schema: unknown type \"strng\"",
    );
    check(
        ToolDefinition::builder("t")
            .output_json_schema(json!({ "anyOf": [{ "type": "string" }] }))
            .body(body),
        "UNSUPPORTED_SCHEMA",
        "unsupported schema: output.jsonSchema: unsupported keyword \"anyOf\"",
    );
    check(
        ToolDefinition::builder("t")
            .parameters(json!({ "p": { "type": "object" } }))
            .output(json!({ "type": "null" }))
            .body(body),
        "UNSUPPORTED_SCHEMA",
        "unsupported schema: parameters.p: object needs additionalProperties: true or false",
    );
}

/// Records the scope of every change notification.
fn record_changes(registry: &Registry) -> Arc<Mutex<Vec<Option<String>>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    registry.on_change(Arc::new(move |scope: Option<AgentId>| {
        sink.lock().push(scope.map(|s| s.to_string()));
    }));
    seen
}

#[tokio::test]
async fn every_visible_change_notifies_once_naming_its_scope() {
    let runtime = runtime();
    let registry = runtime.registry();
    let seen = record_changes(registry);
    let x = || Some("x".to_string());
    let check = |what: &str, expected: Vec<Option<String>>| {
        let changes = std::mem::take(&mut *seen.lock());
        assert_eq!(changes, expected, "{what}");
    };
    registry.open_agent(Arc::from("x"), None).unwrap();
    check("open x", vec![x()]);
    let global = runtime.register(labelled("a", "a"), None).unwrap();
    check("register global", vec![None]);
    let local = runtime.register(labelled("a", "x"), agent("x")).unwrap();
    check("register in x", vec![x()]);
    assert!(runtime.register(labelled("a", "again"), None).is_err());
    check("refused registration", vec![]);
    let reservation = registry.reserve("later", None).unwrap();
    check("reserve", vec![]);
    let restriction = registry
        .restrict(agent("x"), Restriction::Deny([Arc::from("later")].into()))
        .unwrap();
    check("restrict x", vec![x()]);
    assert!(
        registry
            .restrict(agent("x"), Restriction::Deny([].into()))
            .is_err()
    );
    check("refused restriction", vec![]);
    let presentation = registry
        .present_as(agent("x"), PresentationMode::Code)
        .unwrap();
    check("presentAs x", vec![x()]);
    registry.unregister(&reservation).unwrap();
    check("unregister a reservation", vec![]);
    registry.unregister(&restriction).unwrap();
    check("unregister the restriction", vec![x()]);
    registry.unregister(&presentation).unwrap();
    check("unregister the presentation", vec![x()]);
    registry.unregister(&local).unwrap();
    check("unregister the local tool", vec![x()]);
    registry.unregister(&global).unwrap();
    check("unregister the global tool", vec![None]);
    runtime.configure(&dsh_tools::config::parse(json!({ "tools": { "mode": "both" } })).unwrap());
    check("config mode change", vec![None]);
    runtime.configure(&dsh_tools::config::parse(json!({ "tools": { "mode": "both" } })).unwrap());
    check("config unchanged", vec![]);
    registry
        .open_agent(Arc::from("x-child"), agent("x"))
        .unwrap();
    check("open child", vec![Some("x-child".into())]);
    runtime.close_agent("x").unwrap();
    check("close x", vec![x(), Some("x-child".into())]);
}
