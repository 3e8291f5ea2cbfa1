//! Cooperative cancellation and enforced timeouts: a pre-aborted entry skips every stage,
//! an abort before the body is `ABORTED_BEFORE_DISPATCH`, an abort after it replaces only a
//! success with `ABORTED`, and `pipeline.timeout` turns `timeoutMs` into `TOOL_TIMEOUT`
//! while waiting for the body to settle.

#![allow(clippy::unwrap_used)]

use crate::support::runtime as runtime_support;

use dsh_tools::pipeline::hooks::{ApprovalOutcome, PreDecision};
use dsh_tools::tool::{
    BodyOutput, HarnessCode, Signal, ToolDefinition, ToolError, ToolExecutionResult, ToolRunContext,
};
use runtime_support::*;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

fn aborted_before_dispatch() -> ToolExecutionResult {
    harness(
        HarnessCode::AbortedBeforeDispatch,
        "tool call aborted before dispatch",
    )
}

fn aborted() -> ToolExecutionResult {
    harness(HarnessCode::Aborted, "tool call aborted")
}

fn with_contexts(mut result: ToolExecutionResult, texts: &[&str]) -> ToolExecutionResult {
    result.additional_contexts = texts.iter().map(|t| context(t)).collect();
    result
}

#[tokio::test]
async fn a_pre_aborted_entry_snapshots_its_arguments_and_skips_every_stage() {
    let runtime = runtime();
    let journal = Journal::new();
    let body = journal.clone();
    let tool = ToolDefinition::builder("t")
        .parameters(json!({ "n": { "type": "number", "required": true } }))
        .output(json!({ "type": "string" }))
        .body(move |_: ToolRunContext| {
            body.push("body");
            async { Ok(BodyOutput::from(json!("ran"))) }
        })
        .unwrap();
    runtime.register(tool, None).unwrap();
    journal_every_stage(&runtime, &journal);
    runtime.add_pre_execute(1, None, Pre::fixed("ask", &journal, PreDecision::Ask(None)));
    runtime.set_approver(Some(Arc::new(FixedApprover {
        journal: journal.clone(),
        outcome: ApprovalOutcome::AllowedOnce,
    })));
    let observed = observe(&runtime);
    let token = CancellationToken::new();
    token.cancel();
    let input = call("t", raw(r#"{"n": 1.0}"#)).with_signal(Signal::new(token));
    let result = runtime.execute(input).await;
    assert_eq!(result, aborted_before_dispatch());
    assert_eq!(result.text(), "Error: tool call aborted before dispatch");
    assert_eq!(journal.events(), Vec::<String>::new());
    let observations = observed.all();
    assert_eq!(observations.len(), 1);
    assert_eq!(compact(&observations[0].1), r#"{"n":1}"#);
    assert_eq!(observations[0].2, aborted_before_dispatch());
}

#[tokio::test]
async fn an_abort_during_policy_is_aborted_before_dispatch_unless_policy_denied() {
    for deny in [false, true] {
        let runtime = runtime();
        let journal = Journal::new();
        let token = CancellationToken::new();
        let body = journal.clone();
        let tool = any_output("t")
            .body(move |_: ToolRunContext| {
                body.push("body");
                async { Ok(BodyOutput::from(json!(1))) }
            })
            .unwrap();
        runtime.register(tool, None).unwrap();
        let cancel = token.clone();
        runtime.add_pre_execute(
            0,
            None,
            Pre::new("user-hit-escape", &journal, move |_| {
                cancel.cancel();
                Ok(if deny {
                    PreDecision::Deny("no".into())
                } else {
                    PreDecision::Allow
                })
            }),
        );
        runtime.add_wrapper(0, None, Around::new("w", &journal));
        let result = runtime
            .execute(call("t", json!({})).with_signal(Signal::new(token)))
            .await;
        let expected = if deny {
            failure("no")
        } else {
            aborted_before_dispatch()
        };
        assert_eq!(result, expected);
        assert_eq!(journal.events(), ["pre:user-hit-escape"]);
    }
}

/// `slow`: defers a context, reports that it started, waits for its signal, journals that
/// it saw the abort, then answers `answer`.
fn waits_for_abort(
    timeout_ms: Option<u64>,
    started: mpsc::UnboundedSender<CancellationToken>,
    settled: Arc<AtomicBool>,
    answer: Result<&'static str, &'static str>,
) -> ToolDefinition {
    let mut builder = ToolDefinition::builder("slow").output(json!({ "type": "string" }));
    if let Some(ms) = timeout_ms {
        builder = builder.timeout_ms(json!(ms));
    }
    builder
        .body(move |ctx: ToolRunContext| {
            let (started, settled) = (started.clone(), settled.clone());
            async move {
                ctx.defer_context(context("deferred"));
                started
                    .send(ctx.execution.signal.caller_token().clone())
                    .unwrap();
                ctx.signal.aborted().await;
                settled.store(true, Ordering::SeqCst);
                answer
                    .map(|text| BodyOutput::from(json!(text)))
                    .map_err(ToolError::new)
            }
        })
        .unwrap()
}

#[tokio::test]
async fn an_abort_after_dispatch_replaces_only_a_success() {
    let cases = [
        (
            Ok("finished anyway"),
            with_contexts(aborted(), &["deferred"]),
        ),
        (
            Err("interrupted"),
            with_contexts(failure("interrupted"), &["deferred"]),
        ),
    ];
    for (answer, expected) in cases {
        let runtime = runtime();
        let (started, mut body_started) = mpsc::unbounded_channel();
        let settled = Arc::new(AtomicBool::new(false));
        runtime
            .register(
                waits_for_abort(None, started, settled.clone(), answer),
                None,
            )
            .unwrap();
        let journal = Journal::new();
        let seen = journal.clone();
        runtime.add_post_execute(
            0,
            None,
            Post::new("q", &journal, move |_, result| {
                seen.push(result.text());
                Ok(dsh_tools::pipeline::hooks::PostDecision::accept())
            }),
        );
        let caller = CancellationToken::new();
        let input = call("slow", json!({})).with_signal(Signal::new(caller.clone()));
        let running = tokio::spawn({
            let runtime = runtime.clone();
            async move { runtime.execute(input).await }
        });
        body_started.recv().await.unwrap();
        caller.cancel();
        let result = settles(running).await.unwrap();
        assert_eq!(result, expected);
        assert!(settled.load(Ordering::SeqCst));
        assert_eq!(journal.events(), ["post:q".to_string(), expected.text()]);
    }
}

#[tokio::test]
async fn a_post_execute_hook_failing_because_the_call_was_cancelled_replaces_only_a_success() {
    let broken = || {
        ToolDefinition::builder("t")
            .output(json!({ "type": "string" }))
            .body(|_: ToolRunContext| async { Err(ToolError::new("it broke")) })
            .unwrap()
    };
    let cases = [
        (constant("t", json!("done")), aborted()),
        (broken(), failure("it broke")),
    ];
    for (tool, expected) in cases {
        let runtime = runtime();
        runtime.register(tool, None).unwrap();
        let caller = CancellationToken::new();
        let cancel = caller.clone();
        let journal = Journal::new();
        runtime.add_post_execute(
            0,
            None,
            // A hook reports that the call was cancelled while it decided (as the wire hook
            // does when the client never answered) with the abort itself.
            Post::new("cancels", &journal, move |_, _| {
                cancel.cancel();
                Err(ToolError::harness(
                    HarnessCode::Aborted,
                    "tool call aborted",
                ))
            }),
        );
        let later = dsh_tools::pipeline::hooks::PostDecision::accept();
        runtime.add_post_execute(1, None, Post::fixed("later", &journal, later));
        let input = call("t", json!({})).with_signal(Signal::new(caller));
        let result = settles(runtime.execute(input)).await;
        assert_eq!(result, expected);
        assert_eq!(journal.events(), ["post:cancels"]);
    }
}

#[tokio::test]
async fn an_enforced_timeout_aborts_the_body_waits_for_it_and_reports_tool_timeout() {
    let runtime = runtime();
    let (started, _body_started) = mpsc::unbounded_channel();
    let settled = Arc::new(AtomicBool::new(false));
    runtime
        .register(
            waits_for_abort(Some(1), started, settled.clone(), Ok("late")),
            None,
        )
        .unwrap();
    let published_after_settling = Arc::new(AtomicBool::new(false));
    let (flag, witness) = (settled.clone(), published_after_settling.clone());
    runtime.add_observer(
        None,
        Arc::new(ObserveWith(move || {
            witness.store(flag.load(Ordering::SeqCst), Ordering::SeqCst)
        })),
    );
    let result = settles(runtime.execute(call("slow", json!({})))).await;
    let expected = with_contexts(
        harness(
            HarnessCode::ToolTimeout,
            "tool \"slow\" timed out after 1 ms",
        ),
        &["deferred"],
    );
    assert_eq!(result, expected);
    assert!(published_after_settling.load(Ordering::SeqCst));
}

#[tokio::test]
async fn tool_timeout_stays_when_the_caller_also_aborts_afterwards() {
    let runtime = runtime();
    let tool = ToolDefinition::builder("slow")
        .output(json!({ "type": "string" }))
        .timeout_ms(json!(1))
        .body(move |ctx: ToolRunContext| async move {
            ctx.signal.aborted().await;
            // The caller's own abort lands after the deadline fired.
            ctx.execution.signal.caller_token().cancel();
            Ok(BodyOutput::from(json!("late")))
        })
        .unwrap();
    runtime.register(tool, None).unwrap();
    let caller = CancellationToken::new();
    let input = call("slow", json!({})).with_signal(Signal::new(caller.clone()));
    let result = settles(runtime.execute(input)).await;
    assert_eq!(
        result,
        harness(
            HarnessCode::ToolTimeout,
            "tool \"slow\" timed out after 1 ms"
        )
    );
    assert!(caller.is_cancelled());
}

#[tokio::test]
async fn a_configured_default_deadline_applies_to_tools_without_their_own() {
    let runtime =
        runtime_with(json!({ "pipeline": { "timeout": { "enforce": true, "defaultMs": 1 } } }));
    let (started, _body_started) = mpsc::unbounded_channel();
    runtime
        .register(
            waits_for_abort(None, started, Arc::new(AtomicBool::new(false)), Ok("late")),
            None,
        )
        .unwrap();
    let result = settles(runtime.execute(call("slow", json!({})))).await;
    assert_eq!(
        result,
        with_contexts(
            harness(
                HarnessCode::ToolTimeout,
                "tool \"slow\" timed out after 1 ms"
            ),
            &["deferred"]
        )
    );
}

#[tokio::test]
async fn registration_rejects_a_non_positive_or_non_finite_timeout() {
    // `refused` is how the refusal shows the value (numbers by their source text).
    let check = |ms: serde_json::Value, refused: Option<&str>| {
        let built = ToolDefinition::builder("t")
            .output(json!({ "type": "null" }))
            .timeout_ms(ms.clone())
            .body(|_: ToolRunContext| async { Ok(BodyOutput::from(json!(null))) });
        match (built, refused) {
            (Ok(_), None) => {}
            (Ok(_), Some(_)) => panic!("{ms} accepted"),
            (Err(error), shown) => {
                assert_eq!(error.code(), "INVALID_TIMEOUT");
                assert_eq!(
                    Some(error.to_string()),
                    shown.map(|shown| format!(
                        "timeoutMs must be a positive, finite number of milliseconds (got {shown})"
                    )),
                    "{ms}"
                );
            }
        }
    };
    check(json!(1), None);
    check(json!(0.5), None);
    check(json!(30000), None);
    check(json!(0), Some("0"));
    check(json!(-3), Some("-3"));
    check(raw("1e400"), Some("1e+400"));
    check(json!("100"), Some("\"100\""));
    check(json!(null), Some("null"));
}

/// An observer running `f` on every result.
struct ObserveWith<F>(F);

impl<F: Fn() + Send + Sync + 'static> dsh_tools::pipeline::hooks::ResultObserver
    for ObserveWith<F>
{
    fn observe(&self, _: &dsh_tools::tool::ToolExecution, _: &ToolExecutionResult) {
        (self.0)()
    }
}
