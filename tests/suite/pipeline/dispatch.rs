//! Dispatch and result normalization: `tools/execute` wrappers (order, signal-only
//! replacement, re-fusing the caller's signal, wrapper-authored results), body failures and
//! panics, output validation with `value`-rooted paths, and default rendering.

#![allow(clippy::unwrap_used)]

use crate::support::runtime as runtime_support;

use dsh_tools::pipeline::Next;
use dsh_tools::pipeline::hooks::{
    Dispatch, DispatchOutcome, ExecuteWrapper, PostDecision, PreDecision,
};
use dsh_tools::tool::{
    BodyOutput, ContentBlock, HarnessCode, Outcome, Render, Renderer, Signal, ToolDefinition,
    ToolError, ToolExecution, ToolExecutionResult, ToolRunContext,
};
use futures::future::BoxFuture;
use runtime_support::*;
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// `t`: journals `body:<arguments>` and returns `"done"`.
fn journaled_tool(journal: &Journal) -> ToolDefinition {
    let journal = journal.clone();
    ToolDefinition::builder("t")
        .output(json!({ "type": "string" }))
        .body(move |ctx: ToolRunContext| {
            journal.push(format!("body:{}", compact(ctx.arguments())));
            async { Ok(BodyOutput::from(json!("done"))) }
        })
        .unwrap()
}

#[tokio::test]
async fn wrappers_nest_by_order_around_the_body() {
    let runtime = runtime();
    let journal = Journal::new();
    runtime.register(journaled_tool(&journal), None).unwrap();
    runtime.add_wrapper(2, None, Around::new("inner", &journal));
    runtime.add_wrapper(1, None, Around::new("outer", &journal));
    runtime.add_wrapper(2, None, Around::new("innermost", &journal));
    let result = runtime.execute(call("t", json!({}))).await;
    assert_eq!(result, text_success("done"));
    assert_eq!(
        journal.events(),
        [
            "outer:before",
            "inner:before",
            "innermost:before",
            "body:{}",
            "innermost:after",
            "inner:after",
            "outer:after"
        ]
    );
}

/// A wrapper that tries to change the call itself (name and arguments).
struct RewritesTheCall;

impl ExecuteWrapper for RewritesTheCall {
    fn wrap(&self, dispatch: Dispatch, next: Next) -> BoxFuture<'static, DispatchOutcome> {
        let original = &dispatch.execution;
        let forged = ToolExecution {
            token: original.token,
            call_id: "forged".into(),
            name: "other".into(),
            arguments: Arc::new(json!({ "forged": true })),
            agent: Some("intruder".into()),
            parent: None,
            signal: original.signal.clone(),
        };
        next.run(Dispatch {
            execution: Arc::new(forged),
            ..dispatch
        })
    }
}

#[tokio::test]
async fn a_wrapper_cannot_replace_anything_but_the_signal() {
    let runtime = runtime();
    let seen = Arc::new(parking_lot::Mutex::new(None));
    let record = seen.clone();
    let tool = any_output("t")
        .body(move |ctx: ToolRunContext| {
            let execution = &ctx.execution;
            *record.lock() = Some(json!({
                "callId": &*execution.call_id,
                "name": &*execution.name,
                "arguments": Value::clone(&execution.arguments),
                "agent": execution.agent.as_deref(),
            }));
            async { Ok(BodyOutput::from(json!(null))) }
        })
        .unwrap();
    runtime.register(tool, None).unwrap();
    runtime.add_wrapper(0, None, Arc::new(RewritesTheCall));
    let result = runtime.execute(call("t", json!({ "real": 1 }))).await;
    assert_eq!(result, success(json!(null), "null"));
    assert_eq!(
        seen.lock().clone(),
        Some(json!({ "callId": "call-t", "name": "t", "arguments": { "real": 1 }, "agent": null }))
    );
}

/// A wrapper that installs a brand-new signal (dropping the caller's) and exposes its token.
struct ReplacesTheSignal {
    token: CancellationToken,
}

impl ExecuteWrapper for ReplacesTheSignal {
    fn wrap(&self, dispatch: Dispatch, next: Next) -> BoxFuture<'static, DispatchOutcome> {
        next.run(Dispatch {
            signal: Signal::new(self.token.clone()),
            ..dispatch
        })
    }
}

/// A wrapper that adds its own token to whatever signal it received.
struct ExtendsTheSignal {
    token: CancellationToken,
}

impl ExecuteWrapper for ExtendsTheSignal {
    fn wrap(&self, dispatch: Dispatch, next: Next) -> BoxFuture<'static, DispatchOutcome> {
        let signal = dispatch.signal.replaced_by(self.token.clone());
        next.run(Dispatch { signal, ..dispatch })
    }
}

/// `wait`: reports that it started, waits for its signal, then succeeds with `"stopped"`.
fn waits_for_its_signal(started: mpsc::UnboundedSender<()>) -> ToolDefinition {
    ToolDefinition::builder("wait")
        .output(json!({ "type": "string" }))
        .body(move |ctx: ToolRunContext| {
            let started = started.clone();
            async move {
                started.send(()).unwrap();
                ctx.signal.aborted().await;
                Ok(BodyOutput::from(json!("stopped")))
            }
        })
        .unwrap()
}

#[tokio::test]
async fn the_callers_signal_reaches_the_body_whatever_signal_a_wrapper_installed() {
    let runtime = runtime();
    let (started, mut body_started) = mpsc::unbounded_channel();
    runtime
        .register(waits_for_its_signal(started), None)
        .unwrap();
    let replacement = CancellationToken::new();
    runtime.add_wrapper(
        0,
        None,
        Arc::new(ReplacesTheSignal {
            token: replacement.clone(),
        }),
    );
    let caller = CancellationToken::new();
    let input = call("wait", json!({})).with_signal(Signal::new(caller.clone()));
    let running = tokio::spawn({
        let runtime = runtime.clone();
        async move { runtime.execute(input).await }
    });
    body_started.recv().await.unwrap();
    caller.cancel();
    let result = settles(running).await.unwrap();
    assert_eq!(result, harness(HarnessCode::Aborted, "tool call aborted"));
    assert!(!replacement.is_cancelled());
}

#[tokio::test]
async fn a_wrappers_own_signal_reaches_the_body_through_nested_replacements() {
    for outer_replaces in [true, false] {
        let runtime = runtime();
        let (started, mut body_started) = mpsc::unbounded_channel();
        runtime
            .register(waits_for_its_signal(started), None)
            .unwrap();
        let outer = CancellationToken::new();
        let inner = CancellationToken::new();
        let outer_wrapper: Arc<dyn ExecuteWrapper> = if outer_replaces {
            Arc::new(ReplacesTheSignal {
                token: outer.clone(),
            })
        } else {
            Arc::new(ExtendsTheSignal {
                token: outer.clone(),
            })
        };
        runtime.add_wrapper(0, None, outer_wrapper);
        runtime.add_wrapper(
            1,
            None,
            Arc::new(ExtendsTheSignal {
                token: inner.clone(),
            }),
        );
        let running = tokio::spawn({
            let runtime = runtime.clone();
            async move { runtime.execute(call("wait", json!({}))).await }
        });
        body_started.recv().await.unwrap();
        // The outer wrapper's token fires: the inner wrapper extended, not dropped, it.
        outer.cancel();
        let result = settles(running).await.unwrap();
        // The caller did not cancel, so the body's own outcome stands.
        assert_eq!(result, text_success("stopped"), "{outer_replaces}");
    }
}

/// A wrapper that never runs the body and answers `outcome` itself.
struct Answers(DispatchOutcome);

impl ExecuteWrapper for Answers {
    fn wrap(&self, _: Dispatch, _: Next) -> BoxFuture<'static, DispatchOutcome> {
        let outcome = self.0.clone();
        Box::pin(async move { outcome })
    }
}

#[tokio::test]
async fn a_wrapper_authored_outcome_is_normalized_through_the_output_declaration() {
    let cases: Vec<(DispatchOutcome, ToolExecutionResult)> = vec![
        (
            Ok(BodyOutput::from(json!("cached"))),
            text_success("cached"),
        ),
        (
            Ok(BodyOutput::from(json!(5))),
            harness(
                HarnessCode::InvalidToolOutput,
                "tool \"t\" returned invalid output: \"value\" must be a string",
            ),
        ),
        (
            Err(ToolError::new("wrapper gave up")),
            failure("wrapper gave up"),
        ),
    ];
    for (outcome, expected) in cases {
        let runtime = runtime();
        let journal = Journal::new();
        runtime.register(journaled_tool(&journal), None).unwrap();
        runtime.add_wrapper(0, None, Arc::new(Answers(outcome.clone())));
        runtime.add_post_execute(0, None, Post::fixed("q", &journal, PostDecision::accept()));
        let result = runtime.execute(call("t", json!({}))).await;
        assert_eq!(result, expected, "{outcome:?}");
        assert_eq!(journal.events(), ["post:q"], "{outcome:?}");
    }
}

#[tokio::test]
async fn a_wrapper_authored_value_is_snapshotted_canonically() {
    let cases = [
        (r#"{"n": 1.0, "m": [1e2]}"#, Ok(r#"{"n":1,"m":[100]}"#)),
        (
            r#"{"n": 1e400}"#,
            Err(
                "tool \"t\" returned invalid output: \"value.n\" is not lossless JSON: 1e+400 is outside the range of a double",
            ),
        ),
    ];
    for (value, expected) in cases {
        let runtime = runtime();
        runtime.register(constant("t", json!(null)), None).unwrap();
        runtime.add_wrapper(0, None, Arc::new(Answers(Ok(BodyOutput::from(raw(value))))));
        let result = runtime.execute(call("t", json!({}))).await;
        match expected {
            Ok(canonical) => {
                assert_eq!(result.value().map(compact).as_deref(), Some(canonical));
                assert!(!result.is_error());
            }
            Err(message) => {
                assert_eq!(result, harness(HarnessCode::InvalidToolOutput, message));
            }
        }
    }
}

/// A retrying wrapper: runs the rest of the chain until it succeeds, at most three times.
struct Retry;

impl ExecuteWrapper for Retry {
    fn wrap(&self, dispatch: Dispatch, next: Next) -> BoxFuture<'static, DispatchOutcome> {
        Box::pin(async move {
            let mut outcome = next.clone().run(dispatch.clone()).await;
            for _ in 0..2 {
                if outcome.is_ok() {
                    break;
                }
                outcome = next.clone().run(dispatch.clone()).await;
            }
            outcome
        })
    }
}

#[tokio::test]
async fn a_wrapper_may_run_the_body_again() {
    let runtime = runtime();
    let attempts = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = attempts.clone();
    let tool = ToolDefinition::builder("flaky")
        .output(json!({ "type": "integer" }))
        .body(move |_: ToolRunContext| {
            let attempt = count.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            async move {
                if attempt < 3 {
                    Err(ToolError::new(format!("attempt {attempt} failed")))
                } else {
                    Ok(BodyOutput::from(json!(attempt)))
                }
            }
        })
        .unwrap();
    runtime.register(tool, None).unwrap();
    runtime.add_wrapper(0, None, Arc::new(Retry));
    let result = runtime.execute(call("flaky", json!({}))).await;
    assert_eq!(result, success(json!(3), "3"));
}

#[tokio::test]
async fn body_failures_and_panics_become_error_results_that_post_execute_sees() {
    let cases: Vec<(ToolDefinition, ToolExecutionResult)> = vec![
        (
            any_output("t")
                .body(|_: ToolRunContext| async { Err(ToolError::new("disk full")) })
                .unwrap(),
            failure("disk full"),
        ),
        (
            any_output("t")
                .body(|_: ToolRunContext| async {
                    if true {
                        panic!("boom");
                    }
                    Ok(BodyOutput::from(json!(1)))
                })
                .unwrap(),
            failure("tool \"t\" panicked: boom"),
        ),
        (
            any_output("t")
                .body(|_: ToolRunContext| async {
                    Err(ToolError::harness(HarnessCode::CodeRunFailed, "run failed"))
                })
                .unwrap(),
            harness(HarnessCode::CodeRunFailed, "run failed"),
        ),
    ];
    for (tool, expected) in cases {
        let runtime = runtime();
        let journal = Journal::new();
        runtime.register(tool, None).unwrap();
        let seen = journal.clone();
        runtime.add_post_execute(
            0,
            None,
            Post::new("q", &journal, move |_, result| {
                seen.push(result.text());
                Ok(PostDecision::accept())
            }),
        );
        let result = runtime.execute(call("t", json!({}))).await;
        assert_eq!(result, expected);
        let error_text = format!("Error: {}", expected.error().unwrap().message);
        assert_eq!(result.text(), error_text);
        assert_eq!(journal.events(), ["post:q".to_string(), error_text]);
    }
}

#[tokio::test]
async fn output_violations_are_invalid_tool_output_with_value_rooted_paths() {
    let check = |schema: Value, value: Value, detail: &str| {
        let message = format!("tool \"out\" returned invalid output: {detail}");
        async move {
            let runtime = runtime();
            let tool = ToolDefinition::builder("out")
                .output(schema)
                .body(move |_: ToolRunContext| {
                    let value = value.clone();
                    async move { Ok(BodyOutput::from(value)) }
                })
                .unwrap();
            runtime.register(tool, None).unwrap();
            let result = runtime.execute(call("out", json!({}))).await;
            assert_eq!(result, harness(HarnessCode::InvalidToolOutput, &message));
            assert_eq!(result.text(), format!("Error: {message}"));
        }
    };
    check(
        json!({ "type": "string" }),
        json!(1),
        "\"value\" must be a string",
    )
    .await;
    let listing = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "name": { "type": "string", "required": true },
            "items": { "type": "array", "items": { "type": "string" } },
            "kind": { "type": "string", "enum": ["file", "dir"] }
        }
    });
    check(
        listing.clone(),
        json!({ "items": ["a", 2, "c", false] }),
        "missing required property \"value.name\"; \"value.items[1]\" must be a string; \"value.items[3]\" must be a string",
    )
    .await;
    check(
        listing.clone(),
        json!({ "name": "n", "kind": "link", "size": 3 }),
        "\"value.kind\" must be one of [\"file\",\"dir\"]; \"value.size\" is not a declared property (additionalProperties: false)",
    )
    .await;
    check(
        json!({ "type": "array", "items": { "type": "integer" } }),
        json!([1, 2.5]),
        "\"value[1]\" must be an integer",
    )
    .await;
    check(
        json!({ "oneOf": [{ "type": "number" }, { "type": "integer" }] }),
        json!(3),
        "\"value\" must match exactly one oneOf branch (matched 2)",
    )
    .await;
    check(
        json!({ "type": "null" }),
        json!({}),
        "\"value\" must be null",
    )
    .await;
}

#[tokio::test]
async fn a_raw_output_json_schema_is_enforced_like_a_dsl_one() {
    let runtime = runtime();
    let tool = ToolDefinition::builder("raw_out")
        .output_json_schema(json!({
            "type": "object",
            "properties": { "n": { "type": "integer" } },
            "required": ["n"]
        }))
        .body(|_: ToolRunContext| async { Ok(BodyOutput::from(json!({ "m": 1 }))) })
        .unwrap();
    runtime.register(tool, None).unwrap();
    let result = runtime.execute(call("raw_out", json!({}))).await;
    assert_eq!(
        result,
        harness(
            HarnessCode::InvalidToolOutput,
            "tool \"raw_out\" returned invalid output: missing required property \"value.n\""
        )
    );
}

#[tokio::test]
async fn values_render_raw_when_strings_and_as_capped_pretty_json_otherwise() {
    let deep = json!([[[[[[["x", { "k": [1] }]]]]]]]);
    let cases = [
        (json!("line one\nline \"two\""), "line one\nline \"two\""),
        (json!(""), ""),
        (json!(42), "42"),
        (raw("1.50"), "1.5"),
        (json!(true), "true"),
        (json!(null), "null"),
        (json!([]), "[]"),
        (json!({}), "{}"),
        (
            json!({ "b": 1, "a": [1, "two", { "c": null }] }),
            "{\n  \"b\": 1,\n  \"a\": [\n    1,\n    \"two\",\n    {\n      \"c\": null\n    }\n  ]\n}",
        ),
        (
            deep,
            "[\n  [\n    [\n      [\n        [\n          [[\"x\",{\"k\":[1]}]]\n        ]\n      ]\n    ]\n  ]\n]",
        ),
    ];
    for (value, text) in cases {
        let runtime = runtime();
        runtime
            .register(constant("v", value.clone()), None)
            .unwrap();
        let result = runtime.execute(call("v", json!({}))).await;
        assert_eq!(result.content, vec![ContentBlock::text(text)], "{value}");
        assert!(matches!(result.outcome, Outcome::Success(_)));
    }
}

#[tokio::test]
async fn body_content_and_metadata_are_kept_beside_the_canonical_value() {
    let runtime = runtime();
    let tool = any_output("rich")
        .body(|_: ToolRunContext| async {
            Ok(BodyOutput {
                value: json!({ "lines": 3 }),
                content: Some(vec![ContentBlock::text("three lines")]),
                meta: Some(json!({ "path": "/a" })),
                structured_content: None,
            })
        })
        .unwrap();
    runtime.register(tool, None).unwrap();
    let result = runtime.execute(call("rich", json!({}))).await;
    assert_eq!(
        result,
        ToolExecutionResult {
            outcome: Outcome::Success(Arc::new(json!({ "lines": 3 }))),
            content: vec![ContentBlock::text("three lines")],
            meta: Some(json!({ "path": "/a" })),
            additional_contexts: Vec::new(),
            structured_content: None,
        }
    );
}

/// A renderer that frames the value, or fails for `null`.
struct Framed;

impl Renderer for Framed {
    fn render(
        &self,
        _: &ToolExecution,
        _: &str,
        value: &Value,
    ) -> BoxFuture<'static, Result<Vec<ContentBlock>, ToolError>> {
        let answer = if value.is_null() {
            Err(ToolError::new("nothing to render"))
        } else {
            Ok(vec![ContentBlock::text(format!("<{}>", compact(value)))])
        };
        Box::pin(async move { answer })
    }
}

#[tokio::test]
async fn a_custom_renderer_owns_content_and_its_failure_is_a_result() {
    for (value, expected) in [
        (json!([1]), success(json!([1]), "<[1]>")),
        (json!(null), failure("nothing to render")),
    ] {
        let runtime = runtime();
        let tool = any_output("r")
            .render(Render::Custom(Arc::new(Framed)))
            .body(move |_: ToolRunContext| {
                let value = value.clone();
                async move { Ok(BodyOutput::from(value)) }
            })
            .unwrap();
        runtime.register(tool, None).unwrap();
        assert_eq!(runtime.execute(call("r", json!({}))).await, expected);
    }
}

#[tokio::test]
async fn denied_calls_never_reach_wrappers() {
    let runtime = runtime();
    let journal = Journal::new();
    runtime.register(journaled_tool(&journal), None).unwrap();
    runtime.add_wrapper(0, None, Around::new("w", &journal));
    runtime.add_pre_execute(
        0,
        None,
        Pre::fixed("p", &journal, PreDecision::Deny("no".into())),
    );
    let result = runtime.execute(call("t", json!({}))).await;
    assert_eq!(result, failure("no"));
    assert_eq!(journal.events(), ["pre:p"]);
}

/// A wrapper that panics instead of dispatching.
struct PanickingWrapper;

impl ExecuteWrapper for PanickingWrapper {
    fn wrap(&self, _: Dispatch, _: Next) -> BoxFuture<'static, DispatchOutcome> {
        Box::pin(async { panic!("metrics exploded") })
    }
}

#[tokio::test]
async fn a_panicking_wrapper_is_a_normalized_failure_that_post_execute_sees() {
    let runtime = runtime();
    let journal = Journal::new();
    runtime.register(journaled_tool(&journal), None).unwrap();
    runtime.add_wrapper(0, None, Arc::new(PanickingWrapper));
    runtime.add_post_execute(0, None, Post::fixed("q", &journal, PostDecision::accept()));
    let result = runtime.execute(call("t", json!({}))).await;
    assert_eq!(
        result,
        failure("tools/execute wrapper panicked: metrics exploded")
    );
    assert_eq!(journal.events(), ["post:q"]);
}
