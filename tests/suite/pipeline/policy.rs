//! Policy before dispatch: the pre-execute waterfall (deny stops, strictest wins), approval
//! of `ask`, monotonic guards after approval, fail-closed hooks, and agent-scoped listeners.

#![allow(clippy::unwrap_used)]

use crate::support::runtime as runtime_support;

use dsh_tools::pipeline::hooks::{
    ApprovalOutcome, Guard, PostDecision, PreDecision, PreExecuteHook,
};
use dsh_tools::tool::{BodyOutput, ToolDefinition, ToolError, ToolRunContext};
use futures::future::BoxFuture;
use runtime_support::*;
use serde_json::json;
use std::sync::Arc;

/// `t`: journals `body` and returns `"done"`.
fn journaled_tool(journal: &Journal) -> ToolDefinition {
    let journal = journal.clone();
    ToolDefinition::builder("t")
        .output(json!({ "type": "string" }))
        .body(move |_: ToolRunContext| {
            journal.push("body");
            async { Ok(BodyOutput::from(json!("done"))) }
        })
        .unwrap()
}

fn deny(reason: &str) -> PreDecision {
    PreDecision::Deny(reason.into())
}

fn ask(reason: Option<&str>) -> PreDecision {
    PreDecision::Ask(reason.map(Into::into))
}

/// Runs `t` with pre-execute listeners answering `decisions` in order, an optional approver,
/// and one guard; returns the result and the journal.
async fn run_waterfall(
    decisions: &[PreDecision],
    approver: Option<ApprovalOutcome>,
) -> (dsh_tools::ToolExecutionResult, Vec<String>) {
    let runtime = runtime();
    let journal = Journal::new();
    runtime.register(journaled_tool(&journal), None).unwrap();
    for (index, decision) in decisions.iter().enumerate() {
        let name = format!("h{index}");
        runtime.add_pre_execute(0, None, Pre::fixed(&name, &journal, decision.clone()));
    }
    runtime.add_guard(0, None, GuardHook::new("g", &journal, |_| Ok(None)));
    runtime.add_post_execute(0, None, Post::fixed("q", &journal, PostDecision::accept()));
    if let Some(outcome) = approver {
        runtime.set_approver(Some(Arc::new(FixedApprover {
            journal: journal.clone(),
            outcome,
        })));
    }
    let result = runtime.execute(call("t", json!({}))).await;
    (result, journal.events())
}

#[tokio::test]
async fn the_pre_execute_waterfall_stops_at_deny_and_the_strictest_decision_wins() {
    let allowed = || text_success("done");
    let cases: Vec<(Vec<PreDecision>, dsh_tools::ToolExecutionResult, Vec<&str>)> = vec![
        (vec![], allowed(), vec!["guard:g", "body", "post:q"]),
        (
            vec![PreDecision::Allow, PreDecision::Allow],
            allowed(),
            vec!["pre:h0", "pre:h1", "guard:g", "body", "post:q"],
        ),
        (
            vec![deny("no"), PreDecision::Allow],
            failure("no"),
            vec!["pre:h0"],
        ),
        (
            vec![PreDecision::Allow, ask(Some("r1")), deny("later deny")],
            failure("later deny"),
            vec!["pre:h0", "pre:h1", "pre:h2"],
        ),
        (
            vec![ask(Some("first")), PreDecision::Allow],
            failure("first"),
            vec!["pre:h0", "pre:h1"],
        ),
        (
            vec![ask(None), ask(Some("r2")), ask(Some("r3"))],
            failure("r2"),
            vec!["pre:h0", "pre:h1", "pre:h2"],
        ),
        (
            vec![ask(None)],
            failure("tool \"t\" requires approval, but no approver is connected"),
            vec!["pre:h0"],
        ),
    ];
    for (decisions, expected, events) in cases {
        let (result, journal) = run_waterfall(&decisions, None).await;
        assert_eq!(result, expected, "{decisions:?}");
        assert_eq!(journal, events, "{decisions:?}");
    }
}

#[tokio::test]
async fn an_ask_is_serviced_by_the_approver_before_the_guards() {
    let cases = [
        (
            ApprovalOutcome::AllowedOnce,
            text_success("done"),
            vec!["pre:h0", "approve:why", "guard:g", "body", "post:q"],
        ),
        (
            ApprovalOutcome::Rejected,
            failure("the user rejected tool \"t\""),
            vec!["pre:h0", "approve:why"],
        ),
        (
            ApprovalOutcome::Cancelled,
            failure("approval for tool \"t\" was cancelled"),
            vec!["pre:h0", "approve:why"],
        ),
    ];
    for (outcome, expected, events) in cases {
        let (result, journal) = run_waterfall(&[ask(Some("why"))], Some(outcome)).await;
        assert_eq!(result, expected, "{outcome:?}");
        assert_eq!(result.text(), expected.text(), "{outcome:?}");
        assert_eq!(journal, events, "{outcome:?}");
    }
    let (result, journal) = run_waterfall(&[ask(None)], Some(ApprovalOutcome::AllowedOnce)).await;
    assert_eq!(result, text_success("done"));
    assert_eq!(
        journal,
        ["pre:h0", "approve:-", "guard:g", "body", "post:q"]
    );
    let (_, journal) = run_waterfall(&[PreDecision::Allow], Some(ApprovalOutcome::Rejected)).await;
    assert_eq!(journal, ["pre:h0", "guard:g", "body", "post:q"]);
    let (result, journal) = run_waterfall(
        &[ask(Some("a")), deny("d")],
        Some(ApprovalOutcome::AllowedOnce),
    )
    .await;
    assert_eq!(result, failure("d"));
    assert_eq!(journal, ["pre:h0", "pre:h1"]);
}

#[tokio::test]
async fn listeners_run_by_order_then_registration() {
    let runtime = runtime();
    let journal = Journal::new();
    runtime.register(journaled_tool(&journal), None).unwrap();
    runtime.add_pre_execute(5, None, Pre::fixed("five-a", &journal, PreDecision::Allow));
    runtime.add_pre_execute(-1, None, Pre::fixed("minus", &journal, PreDecision::Allow));
    runtime.add_pre_execute(5, None, Pre::fixed("five-b", &journal, PreDecision::Allow));
    runtime.add_guard(3, None, GuardHook::new("g3", &journal, |_| Ok(None)));
    runtime.add_guard(1, None, GuardHook::new("g1", &journal, |_| Ok(None)));
    runtime.add_post_execute(2, None, Post::fixed("q2", &journal, PostDecision::accept()));
    runtime.add_post_execute(1, None, Post::fixed("q1", &journal, PostDecision::accept()));
    let result = runtime.execute(call("t", json!({}))).await;
    assert_eq!(result, text_success("done"));
    assert_eq!(
        journal.events(),
        [
            "pre:minus",
            "pre:five-a",
            "pre:five-b",
            "guard:g1",
            "guard:g3",
            "body",
            "post:q1",
            "post:q2"
        ]
    );
}

#[tokio::test]
async fn a_guard_denial_is_final_and_later_guards_do_not_run() {
    let runtime = runtime();
    let journal = Journal::new();
    runtime.register(journaled_tool(&journal), None).unwrap();
    runtime.add_guard(0, None, GuardHook::new("pass", &journal, |_| Ok(None)));
    runtime.add_guard(
        1,
        None,
        GuardHook::new("owner", &journal, |e| {
            Ok(Some(format!("{} is off limits", e.name)))
        }),
    );
    runtime.add_guard(2, None, GuardHook::new("late", &journal, |_| Ok(None)));
    // A listener registered later in the waterfall still cannot overturn the guard.
    runtime.add_pre_execute(100, None, Pre::fixed("allow", &journal, PreDecision::Allow));
    runtime.set_approver(Some(Arc::new(FixedApprover {
        journal: journal.clone(),
        outcome: ApprovalOutcome::AllowedOnce,
    })));
    let observed = observe(&runtime);
    let result = runtime.execute(call("t", json!({}))).await;
    assert_eq!(result, failure("t is off limits"));
    assert_eq!(result.text(), "Error: t is off limits");
    assert_eq!(journal.events(), ["pre:allow", "guard:pass", "guard:owner"]);
    assert_eq!(observed.results(), vec![failure("t is off limits")]);
}

/// A pre-execute listener whose decision future panics.
struct PanickingPre;

impl PreExecuteHook for PanickingPre {
    fn name(&self) -> &str {
        "audit"
    }

    fn decide(
        &self,
        _: &Arc<dsh_tools::tool::ToolExecution>,
    ) -> BoxFuture<'static, Result<PreDecision, ToolError>> {
        Box::pin(async { panic!("audit exploded") })
    }
}

/// A guard whose check future panics.
struct PanickingGuard;

impl Guard for PanickingGuard {
    fn name(&self) -> &str {
        "owner"
    }

    fn check(
        &self,
        _: &Arc<dsh_tools::tool::ToolExecution>,
    ) -> BoxFuture<'static, Result<Option<String>, ToolError>> {
        Box::pin(async { panic!("owner exploded") })
    }
}

#[tokio::test]
async fn a_failing_hook_fails_the_call_closed_and_names_the_hook() {
    enum Failing {
        PreErr,
        PrePanic,
        GuardErr,
        GuardPanic,
    }
    let cases = [
        (
            Failing::PreErr,
            "tools/pre-execute hook \"audit\" failed: audit is down",
        ),
        (
            Failing::PrePanic,
            "tools/pre-execute hook \"audit\" failed: panicked: audit exploded",
        ),
        (
            Failing::GuardErr,
            "tools/guard \"owner\" failed: owner is down",
        ),
        (
            Failing::GuardPanic,
            "tools/guard \"owner\" failed: panicked: owner exploded",
        ),
    ];
    for (failing, message) in cases {
        let runtime = runtime();
        let journal = Journal::new();
        runtime.register(journaled_tool(&journal), None).unwrap();
        match failing {
            Failing::PreErr => {
                let hook = Pre::new("audit", &journal, |_| Err(ToolError::new("audit is down")));
                runtime.add_pre_execute(0, None, hook);
            }
            Failing::PrePanic => {
                runtime.add_pre_execute(0, None, Arc::new(PanickingPre));
            }
            Failing::GuardErr => {
                let guard =
                    GuardHook::new("owner", &journal, |_| Err(ToolError::new("owner is down")));
                runtime.add_guard(0, None, guard);
            }
            Failing::GuardPanic => {
                runtime.add_guard(0, None, Arc::new(PanickingGuard));
            }
        }
        runtime.add_pre_execute(1, None, Pre::fixed("after", &journal, PreDecision::Allow));
        runtime.add_guard(1, None, GuardHook::new("after", &journal, |_| Ok(None)));
        runtime.add_post_execute(0, None, Post::fixed("q", &journal, PostDecision::accept()));
        let observed = observe(&runtime);
        let result = runtime.execute(call("t", json!({}))).await;
        assert_eq!(result, failure(message));
        assert_eq!(result.text(), format!("Error: {message}"));
        assert!(
            !journal
                .events()
                .iter()
                .any(|e| ["body", "post:q", "guard:after"].contains(&e.as_str())),
            "{message}: {:?}",
            journal.events()
        );
        assert_eq!(observed.results(), vec![failure(message)]);
    }
}

#[tokio::test]
async fn agent_scoped_listeners_see_only_that_agents_calls() {
    let runtime = runtime();
    let journal = Journal::new();
    runtime.registry().open_agent(Arc::from("a"), None).unwrap();
    runtime.registry().open_agent(Arc::from("b"), None).unwrap();
    runtime.register(journaled_tool(&journal), None).unwrap();
    let a = Some(Arc::<str>::from("a"));
    runtime.add_pre_execute(
        0,
        a.clone(),
        Pre::fixed("a-only", &journal, PreDecision::Allow),
    );
    runtime.add_guard(
        0,
        a.clone(),
        GuardHook::new("a-guard", &journal, |_| Ok(Some("agent a may not".into()))),
    );
    runtime.add_pre_execute(
        1,
        None,
        Pre::fixed("everyone", &journal, PreDecision::Allow),
    );
    let in_b = runtime.execute(agent_call("b", "t", json!({}))).await;
    assert_eq!(in_b, text_success("done"));
    assert_eq!(journal.take(), ["pre:everyone", "body"]);
    let global = runtime.execute(call("t", json!({}))).await;
    assert_eq!(global, text_success("done"));
    assert_eq!(journal.take(), ["pre:everyone", "body"]);
    let in_a = runtime.execute(agent_call("a", "t", json!({}))).await;
    assert_eq!(in_a, failure("agent a may not"));
    assert_eq!(
        journal.take(),
        ["pre:a-only", "pre:everyone", "guard:a-guard"]
    );
}

#[tokio::test]
async fn removed_listeners_no_longer_run() {
    let runtime = runtime();
    let journal = Journal::new();
    runtime.register(journaled_tool(&journal), None).unwrap();
    let id = runtime.add_pre_execute(0, None, Pre::fixed("gone", &journal, deny("no")));
    assert!(runtime.remove_listener(id));
    assert!(!runtime.remove_listener(id));
    let result = runtime.execute(call("t", json!({}))).await;
    assert_eq!(result, text_success("done"));
    assert_eq!(journal.events(), ["body"]);
}
