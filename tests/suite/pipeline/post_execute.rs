//! After dispatch: `tools/post-execute` decisions (accept/replace/block), context ordering,
//! the definition-owned `finalizeContent` boundary, and `tools/result` observers.

#![allow(clippy::unwrap_used)]

use crate::support::runtime as runtime_support;

use dsh_tools::pipeline::hooks::{BlockFeedback, PostDecision, PreDecision, ResultObserver};
use dsh_tools::tool::{
    BodyOutput, ContentBlock, ContextMessage, FinalizeContent, HarnessCode, Outcome, Signal,
    ToolDefinition, ToolError, ToolExecution, ToolExecutionResult, ToolRunContext,
};
use runtime_support::*;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio_util::sync::CancellationToken;

/// `t` (output: any JSON): defers `deferred` contexts, then answers `outcome`.
fn tool_with(
    deferred: Vec<ContextMessage>,
    outcome: Result<BodyOutput, ToolError>,
) -> ToolDefinition {
    any_output("t")
        .parameters(json!({ "n": { "type": "number" } }))
        .body(move |ctx: ToolRunContext| {
            for context in &deferred {
                ctx.defer_context(context.clone());
            }
            let outcome = outcome.clone();
            async move { outcome }
        })
        .unwrap()
}

fn rich_output() -> BodyOutput {
    BodyOutput {
        value: json!({ "a": 1 }),
        content: Some(vec![ContentBlock::text("one a")]),
        meta: Some(json!({ "m": true })),
        structured_content: None,
    }
}

fn accept_replacing(
    content: Option<Vec<ContentBlock>>,
    value: Option<Value>,
    contexts: Vec<ContextMessage>,
) -> PostDecision {
    PostDecision::Accept {
        content,
        value,
        additional_contexts: contexts,
        structured_content: None,
    }
}

/// Runs `t` (from `tool_with`) through post-execute listeners answering `decisions` in order.
async fn run_post(
    deferred: Vec<ContextMessage>,
    outcome: Result<BodyOutput, ToolError>,
    decisions: Vec<PostDecision>,
) -> (ToolExecutionResult, Vec<String>) {
    let runtime = runtime();
    let journal = Journal::new();
    runtime
        .register(tool_with(deferred, outcome), None)
        .unwrap();
    for (index, decision) in decisions.into_iter().enumerate() {
        let post = Post::fixed(&format!("q{index}"), &journal, decision);
        runtime.add_post_execute(0, None, post);
    }
    let result = runtime.execute(call("t", json!({}))).await;
    (result, journal.events())
}

fn with_contexts(
    mut result: ToolExecutionResult,
    contexts: &[ContextMessage],
) -> ToolExecutionResult {
    result.additional_contexts = contexts.to_vec();
    result
}

#[tokio::test]
async fn accept_keeps_or_replaces_exactly_one_of_content_and_value() {
    let rich = || ToolExecutionResult {
        outcome: Outcome::Success(Arc::new(json!({ "a": 1 }))),
        content: vec![ContentBlock::text("one a")],
        meta: Some(json!({ "m": true })),
        additional_contexts: Vec::new(),
        structured_content: None,
    };
    let cases: Vec<(PostDecision, ToolExecutionResult)> = vec![
        (PostDecision::accept(), rich()),
        (
            accept_replacing(Some(vec![ContentBlock::text("redacted")]), None, vec![]),
            ToolExecutionResult {
                content: vec![ContentBlock::text("redacted")],
                ..rich()
            },
        ),
        (
            accept_replacing(None, Some(json!({ "b": [2.0] })), vec![]),
            // Revalidated, canonical, re-rendered; the body's metadata described the old value.
            success(json!({ "b": [2] }), "{\n  \"b\": [\n    2\n  ]\n}"),
        ),
        (
            accept_replacing(None, Some(raw("1e400")), vec![]),
            harness(
                HarnessCode::InvalidToolOutput,
                "tool \"t\" returned invalid output: \"value\" is not lossless JSON: 1e+400 is outside the range of a double",
            ),
        ),
        (
            accept_replacing(
                Some(vec![ContentBlock::text("x")]),
                Some(json!(1)),
                vec![context("dropped")],
            ),
            failure("tools/post-execute accept decision cannot replace both value and content"),
        ),
    ];
    for (decision, expected) in cases {
        let (result, journal) = run_post(vec![], Ok(rich_output()), vec![decision.clone()]).await;
        assert_eq!(result, expected, "{decision:?}");
        assert_eq!(journal, ["q0"].map(|q| format!("post:{q}")), "{decision:?}");
    }
}

#[tokio::test]
async fn a_replaced_value_is_validated_against_the_output_declaration() {
    let runtime = runtime();
    let journal = Journal::new();
    runtime.register(echo("e"), None).unwrap();
    let replace = accept_replacing(None, Some(json!(5)), vec![]);
    runtime.add_post_execute(0, None, Post::fixed("q", &journal, replace));
    let result = runtime.execute(call("e", json!({ "text": "hi" }))).await;
    assert_eq!(
        result,
        harness(
            HarnessCode::InvalidToolOutput,
            "tool \"e\" returned invalid output: \"value\" must be a string"
        )
    );
}

#[tokio::test]
async fn a_failed_result_may_get_new_content_but_never_a_value() {
    let failed = Err(ToolError::new("disk full"));
    let (result, _) = run_post(
        vec![],
        failed.clone(),
        vec![accept_replacing(None, Some(json!("fine")), vec![])],
    )
    .await;
    assert_eq!(
        result,
        failure("tools/post-execute cannot replace the value of a failed result")
    );
    let (result, _) = run_post(
        vec![],
        failed,
        vec![accept_replacing(
            Some(vec![ContentBlock::text("try again later")]),
            None,
            vec![],
        )],
    )
    .await;
    assert_eq!(
        result,
        ToolExecutionResult {
            content: vec![ContentBlock::text("try again later")],
            ..failure("disk full")
        }
    );
}

#[tokio::test]
async fn block_turns_the_result_into_a_valueless_failure_with_only_its_own_contexts() {
    let blocks = vec![ContentBlock::text("blocked: secrets")];
    let cases = [
        (
            BlockFeedback::Text("contains secrets".into()),
            with_contexts(failure("contains secrets"), &[context("b1")]),
        ),
        (
            BlockFeedback::Blocks(blocks.clone()),
            with_contexts(
                ToolExecutionResult {
                    content: blocks.clone(),
                    ..failure("blocked: secrets")
                },
                &[context("b1")],
            ),
        ),
        (
            BlockFeedback::Blocks(Vec::new()),
            with_contexts(
                ToolExecutionResult {
                    content: Vec::new(),
                    ..failure("tool result blocked by post-execute policy")
                },
                &[context("b1")],
            ),
        ),
    ];
    for (feedback, expected) in cases {
        let block = PostDecision::Block {
            feedback,
            additional_contexts: vec![context("b1")],
        };
        let (result, journal) = run_post(
            vec![context("deferred")],
            Ok(rich_output()),
            vec![
                accept_replacing(None, None, vec![context("a1")]),
                block,
                PostDecision::accept(),
            ],
        )
        .await;
        assert_eq!(result, expected);
        assert_eq!(journal, ["post:q0", "post:q1"]);
    }
}

#[tokio::test]
async fn tool_deferred_contexts_come_before_decision_contexts_and_survive_failures() {
    let deferred = vec![context("c1"), context("c2")];
    let decisions = || {
        vec![
            accept_replacing(None, None, vec![context("d1")]),
            accept_replacing(
                Some(vec![ContentBlock::text("short")]),
                None,
                vec![context("d2"), context("d3")],
            ),
        ]
    };
    let all = [
        context("c1"),
        context("c2"),
        context("d1"),
        context("d2"),
        context("d3"),
    ];
    let (result, _) = run_post(
        deferred.clone(),
        Ok(BodyOutput::from(json!(1))),
        decisions(),
    )
    .await;
    assert_eq!(
        result,
        with_contexts(
            ToolExecutionResult {
                content: vec![ContentBlock::text("short")],
                ..success(json!(1), "1")
            },
            &all
        )
    );
    let (result, _) = run_post(deferred.clone(), Err(ToolError::new("boom")), decisions()).await;
    assert_eq!(
        result,
        with_contexts(
            ToolExecutionResult {
                content: vec![ContentBlock::text("short")],
                ..failure("boom")
            },
            &all
        )
    );
    let (result, _) = run_post(deferred.clone(), Err(ToolError::new("boom")), vec![]).await;
    assert_eq!(result, with_contexts(failure("boom"), &deferred));
    let (result, _) = run_post(deferred.clone(), Ok(BodyOutput::from(raw("1e400"))), vec![]).await;
    assert_eq!(
        result,
        with_contexts(
            harness(
                HarnessCode::InvalidToolOutput,
                "tool \"t\" returned invalid output: \"value\" is not lossless JSON: 1e+400 is outside the range of a double"
            ),
            &deferred
        )
    );
}

#[tokio::test]
async fn a_failing_post_execute_hook_fails_closed_keeping_the_contexts_gathered_so_far() {
    let runtime = runtime();
    let journal = Journal::new();
    runtime
        .register(
            tool_with(vec![context("c1")], Ok(BodyOutput::from(json!(1)))),
            None,
        )
        .unwrap();
    runtime.add_post_execute(
        0,
        None,
        Post::fixed(
            "q0",
            &journal,
            accept_replacing(None, None, vec![context("d1")]),
        ),
    );
    runtime.add_post_execute(
        1,
        None,
        Post::new("audit", &journal, |_, _| {
            Err(ToolError::new("audit is down"))
        }),
    );
    runtime.add_post_execute(2, None, Post::fixed("q2", &journal, PostDecision::accept()));
    let result = runtime.execute(call("t", json!({}))).await;
    assert_eq!(
        result,
        with_contexts(
            failure("tools/post-execute hook \"audit\" failed: audit is down"),
            &[context("c1"), context("d1")]
        )
    );
    assert_eq!(journal.events(), ["post:q0", "post:audit"]);
}

#[tokio::test]
async fn each_post_execute_listener_sees_the_previous_ones_result() {
    let runtime = runtime();
    let journal = Journal::new();
    runtime.register(echo("e"), None).unwrap();
    runtime.add_post_execute(
        0,
        None,
        Post::fixed(
            "up",
            &journal,
            accept_replacing(None, Some(json!("HI")), vec![]),
        ),
    );
    let seen = journal.clone();
    runtime.add_post_execute(
        1,
        None,
        Post::new("look", &journal, move |_, result| {
            seen.push(format!("saw {}", compact(result.value().unwrap())));
            Ok(PostDecision::accept())
        }),
    );
    let result = runtime.execute(call("e", json!({ "text": "hi" }))).await;
    assert_eq!(result, text_success("HI"));
    assert_eq!(journal.events(), ["post:up", "post:look", "saw \"HI\""]);
}

/// A finalizer that counts its calls and prefixes the content it receives.
fn counting_finalizer(calls: &Arc<AtomicUsize>) -> FinalizeContent {
    let calls = calls.clone();
    Arc::new(
        move |execution: &ToolExecution, result: &ToolExecutionResult| {
            calls.fetch_add(1, Ordering::SeqCst);
            Some(vec![ContentBlock::text(format!(
                "[{}] {}",
                execution.name,
                result.text()
            ))])
        },
    )
}

#[tokio::test]
async fn finalize_content_runs_exactly_once_for_every_result_and_replaces_only_content() {
    enum Case {
        Success,
        BodyFailure,
        InvalidArgs,
        LossyArgs,
        PreDeny,
        GuardDeny,
        PreAborted,
        PostFailure,
        InvalidOutput,
        Blocked,
    }
    let cases = [
        (
            Case::Success,
            with_contexts(success(json!(7), "[f] 7"), &[context("c1")]),
        ),
        (
            Case::BodyFailure,
            with_contexts(
                ToolExecutionResult {
                    content: vec![ContentBlock::text("[f] Error: broke")],
                    ..failure("broke")
                },
                &[context("c1")],
            ),
        ),
        (
            Case::InvalidArgs,
            ToolExecutionResult {
                content: vec![ContentBlock::text(
                    "[f] Error: invalid arguments: \"n\" must be a number",
                )],
                ..harness(
                    HarnessCode::InvalidArgs,
                    "invalid arguments: \"n\" must be a number",
                )
            },
        ),
        (
            Case::LossyArgs,
            ToolExecutionResult {
                content: vec![ContentBlock::text(
                    "[f] Error: invalid arguments: \"n\" is not lossless JSON: -0 is negative zero, which JSON.stringify writes as 0",
                )],
                ..harness(
                    HarnessCode::InvalidArgs,
                    "invalid arguments: \"n\" is not lossless JSON: -0 is negative zero, which JSON.stringify writes as 0",
                )
            },
        ),
        (
            Case::PreDeny,
            ToolExecutionResult {
                content: vec![ContentBlock::text("[f] Error: no")],
                ..failure("no")
            },
        ),
        (
            Case::GuardDeny,
            ToolExecutionResult {
                content: vec![ContentBlock::text("[f] Error: guarded")],
                ..failure("guarded")
            },
        ),
        (
            Case::PreAborted,
            ToolExecutionResult {
                content: vec![ContentBlock::text(
                    "[f] Error: tool call aborted before dispatch",
                )],
                ..harness(
                    HarnessCode::AbortedBeforeDispatch,
                    "tool call aborted before dispatch",
                )
            },
        ),
        (
            Case::PostFailure,
            with_contexts(
                ToolExecutionResult {
                    content: vec![ContentBlock::text(
                        "[f] Error: tools/post-execute hook \"q\" failed: down",
                    )],
                    ..failure("tools/post-execute hook \"q\" failed: down")
                },
                &[context("c1")],
            ),
        ),
        (
            Case::InvalidOutput,
            with_contexts(
                ToolExecutionResult {
                    content: vec![ContentBlock::text(
                        "[f] Error: tool \"f\" returned invalid output: \"value\" must be a number",
                    )],
                    ..harness(
                        HarnessCode::InvalidToolOutput,
                        "tool \"f\" returned invalid output: \"value\" must be a number",
                    )
                },
                &[context("c1")],
            ),
        ),
        (
            Case::Blocked,
            ToolExecutionResult {
                content: vec![ContentBlock::text("[f] Error: not for you")],
                ..failure("not for you")
            },
        ),
    ];
    for (case, expected) in cases {
        let runtime = runtime();
        let journal = Journal::new();
        let calls = Arc::new(AtomicUsize::new(0));
        let (value, arguments) = match case {
            Case::InvalidOutput => (json!("seven"), json!({})),
            Case::InvalidArgs => (json!(7), json!({ "n": "x" })),
            Case::LossyArgs => (json!(7), raw(r#"{"n": -0}"#)),
            _ => (json!(7), json!({})),
        };
        let fails = matches!(case, Case::BodyFailure);
        let tool = ToolDefinition::builder("f")
            .parameters(json!({ "n": { "type": "number" } }))
            .output(json!({ "type": "number" }))
            .finalize_content(counting_finalizer(&calls))
            .body(move |ctx: ToolRunContext| {
                ctx.defer_context(context("c1"));
                let value = value.clone();
                async move {
                    if fails {
                        Err(ToolError::new("broke"))
                    } else {
                        Ok(BodyOutput::from(value))
                    }
                }
            })
            .unwrap();
        runtime.register(tool, None).unwrap();
        match case {
            Case::PreDeny => {
                runtime.add_pre_execute(
                    0,
                    None,
                    Pre::fixed("p", &journal, PreDecision::Deny("no".into())),
                );
            }
            Case::GuardDeny => {
                runtime.add_guard(
                    0,
                    None,
                    GuardHook::new("g", &journal, |_| Ok(Some("guarded".into()))),
                );
            }
            Case::PostFailure => {
                runtime.add_post_execute(
                    0,
                    None,
                    Post::new("q", &journal, |_, _| Err(ToolError::new("down"))),
                );
            }
            Case::Blocked => {
                let block = PostDecision::Block {
                    feedback: BlockFeedback::Text("not for you".into()),
                    additional_contexts: vec![],
                };
                runtime.add_post_execute(0, None, Post::fixed("q", &journal, block));
            }
            _ => {}
        }
        let observed = observe(&runtime);
        let mut input = call("f", arguments);
        if matches!(case, Case::PreAborted) {
            let token = CancellationToken::new();
            token.cancel();
            input = input.with_signal(Signal::new(token));
        }
        let result = runtime.execute(input).await;
        assert_eq!(result, expected);
        assert_eq!(calls.load(Ordering::SeqCst), 1, "{:?}", expected.text());
        assert_eq!(observed.results(), vec![expected]);
    }
}

#[tokio::test]
async fn finalize_content_returning_nothing_keeps_the_content() {
    let runtime = runtime();
    let tool = ToolDefinition::builder("f")
        .output(json!({ "type": "string" }))
        .finalize_content(Arc::new(|_: &ToolExecution, _: &ToolExecutionResult| None))
        .body(|_: ToolRunContext| async { Ok(BodyOutput::from(json!("kept"))) })
        .unwrap();
    runtime.register(tool, None).unwrap();
    assert_eq!(
        runtime.execute(call("f", json!({}))).await,
        text_success("kept")
    );
}

#[tokio::test]
async fn a_panicking_finalizer_turns_the_result_into_a_failure_that_keeps_its_contexts() {
    let runtime = runtime();
    let tool = ToolDefinition::builder("f")
        .output(json!({ "type": "string" }))
        .finalize_content(Arc::new(
            |_: &ToolExecution, _: &ToolExecutionResult| -> Option<Vec<ContentBlock>> {
                panic!("not total after all")
            },
        ))
        .body(|ctx: ToolRunContext| {
            ctx.defer_context(context("c1"));
            async { Ok(BodyOutput::from(json!("ok"))) }
        })
        .unwrap();
    runtime.register(tool, None).unwrap();
    let observed = observe(&runtime);
    let expected = with_contexts(
        harness(
            HarnessCode::PipelineFailed,
            "finalizeContent of tool \"f\" panicked: not total after all",
        ),
        &[context("c1")],
    );
    assert_eq!(runtime.execute(call("f", json!({}))).await, expected);
    assert_eq!(observed.results(), vec![expected]);
}

/// An observer that panics on every result.
struct PanickingObserver;

impl ResultObserver for PanickingObserver {
    fn observe(&self, _: &ToolExecution, _: &ToolExecutionResult) {
        panic!("observer exploded")
    }
}

#[tokio::test]
async fn observers_see_each_execution_once_with_the_final_result() {
    let runtime = runtime();
    runtime.registry().open_agent(Arc::from("a"), None).unwrap();
    runtime.register(echo("e"), None).unwrap();
    runtime.add_post_execute(
        0,
        None,
        Post::fixed(
            "q",
            &Journal::new(),
            accept_replacing(Some(vec![ContentBlock::text("edited")]), None, vec![]),
        ),
    );
    let everyone = Observed::default();
    let only_a = Observed::default();
    runtime.add_observer(None, Arc::new(PanickingObserver));
    runtime.add_observer(None, Arc::new(everyone.clone()));
    runtime.add_observer(Some(Arc::from("a")), Arc::new(only_a.clone()));
    let edited = ToolExecutionResult {
        content: vec![ContentBlock::text("edited")],
        ..text_success("x")
    };
    assert_eq!(
        runtime.execute(call("e", json!({ "text": "x" }))).await,
        edited
    );
    assert_eq!(
        runtime
            .execute(agent_call("a", "e", json!({ "text": "x" })))
            .await,
        edited
    );
    let unknown = harness(HarnessCode::UnknownTool, "unknown tool \"zz\"");
    assert_eq!(runtime.execute(call("zz", json!({}))).await, unknown);
    assert_eq!(
        everyone.all(),
        vec![
            ("e".into(), json!({ "text": "x" }), edited.clone()),
            ("e".into(), json!({ "text": "x" }), edited.clone()),
            ("zz".into(), json!({}), unknown),
        ]
    );
    assert_eq!(
        only_a.all(),
        vec![("e".into(), json!({ "text": "x" }), edited)]
    );
}

/// An MCP server's `structuredContent` describes the content: it survives an unchanged
/// accept, a new value or new content drops it, a decision may set its own (canonical, on a
/// success only), and a body's lossy one fails the call as a lossy value does.
#[tokio::test]
async fn structured_content_is_kept_dropped_or_replaced_by_post_execute() {
    let with_structured = |structured: Value| {
        Ok(BodyOutput {
            structured_content: Some(structured),
            ..rich_output()
        })
    };
    let server = json!({ "sky": "clear" });
    let set_own = |content, value, structured: Value| PostDecision::Accept {
        content,
        value,
        structured_content: Some(structured),
        additional_contexts: Vec::new(),
    };
    let cases = [
        (PostDecision::accept(), Some(server.clone())),
        (
            accept_replacing(None, Some(json!({ "b": 2 })), vec![]),
            None,
        ),
        (
            accept_replacing(Some(vec![ContentBlock::text("x")]), None, vec![]),
            None,
        ),
        (
            set_own(None, Some(json!({ "b": 2 })), json!({ "b": 2.0 })),
            Some(json!({ "b": 2 })),
        ),
        (
            set_own(None, None, json!({ "own": true })),
            Some(json!({ "own": true })),
        ),
    ];
    for (decision, expected) in cases {
        let (result, _) = run_post(
            vec![],
            with_structured(server.clone()),
            vec![decision.clone()],
        )
        .await;
        assert!(!result.is_error(), "{decision:?}: {result:?}");
        assert_eq!(result.structured_content, expected, "{decision:?}");
    }
    let (result, _) = run_post(
        vec![],
        Err(ToolError::new("disk full")),
        vec![set_own(None, None, json!({}))],
    )
    .await;
    assert_eq!(
        result,
        failure("tools/post-execute cannot set the structuredContent of a failed result")
    );
    let (result, _) = run_post(vec![], with_structured(raw("1e400")), vec![]).await;
    assert_eq!(
        result,
        harness(
            HarnessCode::InvalidToolOutput,
            "tool \"t\" returned invalid output: \"structuredContent\" is not lossless JSON: 1e+400 is outside the range of a double",
        )
    );
}
