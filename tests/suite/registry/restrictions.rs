//! Agent restrictions and reservations: snapshot semantics (deny admits later unnamed
//! globals, allow excludes later names), masks intersecting down a scope chain, scope-local
//! tools merging afterwards, rejected filters, and `isAdmitted` independent of registration.

#![allow(clippy::unwrap_used)]

use crate::support::runtime as runtime_support;

use dsh_tools::registry::{Registry, RegistryError, Restriction};
use dsh_tools::tool::{AgentId, HarnessCode};
use runtime_support::*;
use serde_json::json;
use std::sync::Arc;

fn agent(name: &str) -> Option<AgentId> {
    Some(Arc::from(name))
}

fn allow(names: &[&str]) -> Restriction {
    Restriction::Allow(names.iter().map(|n| Arc::from(*n)).collect())
}

fn deny(names: &[&str]) -> Restriction {
    Restriction::Deny(names.iter().map(|n| Arc::from(*n)).collect())
}

fn names(registry: &Registry, scope: &str) -> Vec<String> {
    registry
        .visible(agent(scope).as_ref())
        .iter()
        .map(|t| t.definition.name.to_string())
        .collect()
}

fn admitted(registry: &Registry, name: &str, scope: Option<&str>) -> bool {
    let scope = scope.map(Arc::<str>::from);
    registry.is_admitted(name, scope.as_ref())
}

#[tokio::test]
async fn a_deny_mask_admits_later_globals_and_an_allow_mask_excludes_them() {
    let runtime = runtime();
    let registry = runtime.registry();
    for scope in ["denies", "allows"] {
        registry.open_agent(Arc::from(scope), None).unwrap();
    }
    runtime.register(echo("a"), None).unwrap();
    runtime.register(echo("b"), None).unwrap();
    registry.reserve("planned", None).unwrap();
    registry.restrict(agent("denies"), deny(&["a"])).unwrap();
    registry
        .restrict(agent("allows"), allow(&["a", "planned"]))
        .unwrap();
    assert_eq!(names(registry, "denies"), ["b"]);
    assert_eq!(names(registry, "allows"), ["a"]);
    runtime.register(echo("c"), None).unwrap();
    runtime.register(echo("planned"), None).unwrap();
    assert_eq!(names(registry, "denies"), ["b", "c", "planned"]);
    // `planned` was named when the mask was taken; `c` was not.
    assert_eq!(names(registry, "allows"), ["a", "planned"]);
    let hidden = harness(HarnessCode::UnknownTool, "unknown tool \"c\"");
    let input = agent_call("allows", "c", json!({ "text": "x" }));
    assert_eq!(runtime.execute(input).await, hidden);
    assert!(registry.resolve("c", agent("allows").as_ref()).is_none());
    assert!(registry.resolve("a", agent("denies").as_ref()).is_none());
    assert!(registry.resolve("c", agent("denies").as_ref()).is_some());
}

#[tokio::test]
async fn masks_intersect_within_a_scope_and_down_its_chain() {
    let runtime = runtime();
    let registry = runtime.registry();
    for name in ["a", "b", "c", "d"] {
        runtime.register(echo(name), None).unwrap();
    }
    registry.open_agent(Arc::from("parent"), None).unwrap();
    registry
        .open_agent(Arc::from("child"), agent("parent"))
        .unwrap();
    registry
        .open_agent(Arc::from("grandchild"), agent("child"))
        .unwrap();
    registry
        .restrict(agent("parent"), allow(&["a", "b", "c"]))
        .unwrap();
    registry.restrict(agent("parent"), deny(&["c"])).unwrap();
    assert_eq!(names(registry, "parent"), ["a", "b"]);
    registry.restrict(agent("child"), deny(&["a"])).unwrap();
    assert_eq!(names(registry, "child"), ["b"]);
    // A child cannot widen what its parent masks.
    registry
        .restrict(agent("grandchild"), allow(&["b", "d"]))
        .unwrap();
    assert_eq!(names(registry, "grandchild"), ["b"]);
    let cases = [
        ("a", [true, true, false, false]),
        ("b", [true, true, true, true]),
        ("c", [true, false, false, false]),
        ("d", [true, false, false, false]),
    ];
    for (name, expected) in cases {
        let seen = [None, Some("parent"), Some("child"), Some("grandchild")]
            .map(|scope| admitted(registry, name, scope));
        assert_eq!(seen, expected, "{name}");
    }
}

#[tokio::test]
async fn scope_local_tools_merge_after_the_masks() {
    let runtime = runtime();
    let registry = runtime.registry();
    registry.open_agent(Arc::from("x"), None).unwrap();
    runtime
        .register(constant("read", json!("global")), None)
        .unwrap();
    runtime
        .register(constant("bash", json!("global")), None)
        .unwrap();
    runtime
        .register(constant("read", json!("local")), agent("x"))
        .unwrap();
    runtime
        .register(constant("notes", json!("local")), agent("x"))
        .unwrap();
    registry.restrict(agent("x"), deny(&["read"])).unwrap();
    registry.restrict(agent("x"), allow(&["read"])).unwrap();
    assert_eq!(names(registry, "x"), ["notes", "read"]);
    assert_eq!(
        runtime.execute(agent_call("x", "read", json!({}))).await,
        text_success("local")
    );
    assert!(!admitted(registry, "read", Some("x")));
}

#[tokio::test]
async fn restrict_rejects_bad_filters_without_registering_anything() {
    let runtime = runtime();
    let registry = runtime.registry();
    runtime.register(echo("global"), None).unwrap();
    registry.reserve("reserved", None).unwrap();
    registry.open_agent(Arc::from("parent"), None).unwrap();
    registry
        .open_agent(Arc::from("x"), agent("parent"))
        .unwrap();
    runtime.register(echo("mine"), agent("x")).unwrap();
    registry.reserve("my-plan", agent("x")).unwrap();
    runtime.register(echo("parents"), agent("parent")).unwrap();
    let cases: Vec<(Option<AgentId>, Restriction, &str, String)> = vec![
        (
            None,
            deny(&["global"]),
            "NEEDS_AGENT",
            "restrict needs an agent scope: the process-wide setting is the host config".into(),
        ),
        (
            agent("ghost"),
            deny(&["global"]),
            "UNKNOWN_AGENT",
            "unknown agent \"ghost\" (open it with agents/open first)".into(),
        ),
        (
            agent("x"),
            allow(&[]),
            "EMPTY_FILTER",
            "restrict needs exactly one non-empty allow or deny list".into(),
        ),
        (
            agent("x"),
            deny(&[]),
            "EMPTY_FILTER",
            "restrict needs exactly one non-empty allow or deny list".into(),
        ),
        (
            agent("x"),
            allow(&["global", "nope"]),
            "UNKNOWN_NAME",
            "restrict names unknown tool \"nope\" (register or reserve it globally or in an ancestor scope first)".into(),
        ),
        (
            agent("x"),
            deny(&["mine"]),
            "LOCAL_NAME",
            "restrict names \"mine\", which is local to agent \"x\": restrictions mask inherited tools only".into(),
        ),
        (
            agent("x"),
            allow(&["my-plan"]),
            "LOCAL_NAME",
            "restrict names \"my-plan\", which is local to agent \"x\": restrictions mask inherited tools only".into(),
        ),
        (
            agent("x"),
            allow(&["global", "run_code"]),
            "RESERVED_NAME",
            "\"run_code\" is reserved for Code Mode and cannot be registered, reserved or restricted".into(),
        ),
    ];
    for (scope, restriction, code, message) in cases {
        let error: RegistryError = registry.restrict(scope, restriction).unwrap_err();
        assert_eq!((error.code(), error.to_string()), (code, message));
    }
    assert_eq!(names(registry, "x"), ["global", "mine", "parents"]);
    // A registered and a merely reserved global name are restrictable, and so is a tool x
    // inherits from its parent's layer.
    registry
        .restrict(agent("x"), allow(&["global", "reserved", "parents"]))
        .unwrap();
}

#[tokio::test]
async fn a_reserved_name_is_restrictable_and_admission_ignores_registration() {
    let runtime = runtime();
    let registry = runtime.registry();
    registry.reserve("deferred", None).unwrap();
    for scope in ["allows", "denies", "open"] {
        registry.open_agent(Arc::from(scope), None).unwrap();
    }
    registry
        .open_agent(Arc::from("allows-child"), agent("allows"))
        .unwrap();
    // The reserved name has no schema anywhere.
    assert!(registry.visible(None).is_empty());
    assert!(registry.resolve("deferred", None).is_none());
    registry
        .restrict(agent("allows"), allow(&["deferred"]))
        .unwrap();
    registry
        .restrict(agent("denies"), deny(&["deferred"]))
        .unwrap();
    let cases = [
        ("deferred", [true, true, false, true, true]),
        ("never-registered", [true, false, true, true, false]),
    ];
    let scopes = [
        None,
        Some("allows"),
        Some("denies"),
        Some("open"),
        Some("allows-child"),
    ];
    for (name, expected) in cases {
        let seen = scopes.map(|scope| admitted(registry, name, scope));
        assert_eq!(seen, expected, "{name}");
    }
    runtime.register(echo("deferred"), None).unwrap();
    assert_eq!(names(registry, "allows"), ["deferred"]);
    assert_eq!(names(registry, "allows-child"), ["deferred"]);
    assert_eq!(names(registry, "denies"), Vec::<String>::new());
    assert_eq!(names(registry, "open"), ["deferred"]);
}
