//! The argument snapshot and validation stage: lossless canonical snapshots, `INVALID_ARGS`
//! through the normal result path (never reaching policy or the body), raw-schema tools,
//! and unknown tools.

#![allow(clippy::unwrap_used)]

use crate::support::runtime as runtime_support;

use dsh_tools::tool::{BodyOutput, HarnessCode, ToolDefinition, ToolRunContext};
use runtime_support::*;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A tool journaling its body and the arguments it received.
fn recording_tool(name: &str, parameters: Value, journal: &Journal) -> ToolDefinition {
    let journal = journal.clone();
    ToolDefinition::builder(name)
        .parameters(parameters)
        .output(json!({ "type": "json" }))
        .body(move |ctx: ToolRunContext| {
            journal.push(format!("body:{}", compact(ctx.arguments())));
            async move { Ok(BodyOutput::from(json!("ok"))) }
        })
        .unwrap()
}

#[tokio::test]
async fn every_stage_sees_the_same_canonical_snapshot_of_the_arguments() {
    let runtime = runtime();
    let journal = Journal::new();
    let parameters = json!({ "n": { "type": "number" }, "m": { "type": "json" } });
    runtime
        .register(recording_tool("t", parameters, &journal), None)
        .unwrap();
    let seen = journal.clone();
    runtime.add_pre_execute(
        0,
        None,
        Pre::new("p", &journal, move |execution| {
            seen.push(format!("pre-args:{}", compact(&execution.arguments)));
            Ok(dsh_tools::pipeline::hooks::PreDecision::Allow)
        }),
    );
    let observed = observe(&runtime);
    let arguments = raw(r#"{"n": 1.0, "m": [1e2, 100.000, {"x": 1.50, "y": -2E-3}, 1E21]}"#);
    let result = runtime.execute(call("t", arguments)).await;
    assert_eq!(result, success(json!("ok"), "ok"));
    let canonical = r#"{"n":1,"m":[100,100,{"x":1.5,"y":-0.002},1e+21]}"#;
    assert_eq!(
        journal.events(),
        vec![
            "pre:p".to_string(),
            format!("pre-args:{canonical}"),
            format!("body:{canonical}"),
        ]
    );
    let observations = observed.all();
    assert_eq!(observations.len(), 1);
    assert_eq!(compact(&observations[0].1), canonical);
}

#[tokio::test]
async fn lossy_arguments_are_invalid_args_that_never_reach_policy_or_the_body() {
    let check = |arguments: &str, message: &str| {
        let arguments = raw(arguments);
        let message = message.to_string();
        async move {
            let runtime = runtime();
            let journal = Journal::new();
            let parameters = json!({ "n": { "type": "json" }, "list": { "type": "json" } });
            runtime
                .register(recording_tool("t", parameters, &journal), None)
                .unwrap();
            journal_every_stage(&runtime, &journal);
            let observed = observe(&runtime);
            let result = runtime.execute(call("t", arguments)).await;
            let expected = harness(HarnessCode::InvalidArgs, &message);
            assert_eq!(result, expected);
            assert_eq!(result.text(), format!("Error: {message}"));
            assert_eq!(journal.events(), Vec::<String>::new(), "{message}");
            assert_eq!(observed.results(), vec![expected]);
        }
    };
    check(
        r#"{"n": 9007199254740993}"#,
        "invalid arguments: \"n\" is not lossless JSON: 9007199254740993 does not survive a round trip as a double",
    )
    .await;
    check(
        r#"{"list": [1, {"x": 1e400}]}"#,
        "invalid arguments: \"list[1].x\" is not lossless JSON: 1e+400 is outside the range of a double",
    )
    .await;
    check(
        r#"{"n": -0}"#,
        "invalid arguments: \"n\" is not lossless JSON: -0 is negative zero, which JSON.stringify writes as 0",
    )
    .await;
    check(
        r#"1e-400"#,
        "invalid arguments: \"arguments\" is not lossless JSON: 1e-400 does not survive a round trip as a double",
    )
    .await;
    check(
        r#"[0.10000000000000000001]"#,
        "invalid arguments: \"arguments[0]\" is not lossless JSON: 0.10000000000000000001 does not survive a round trip as a double",
    )
    .await;
}

#[tokio::test]
async fn a_raw_schema_tool_still_refuses_lossy_arguments() {
    let runtime = runtime();
    let journal = Journal::new();
    let tool = any_output("raw")
        .input_schema(json!({ "type": "object" }))
        .body(|_: ToolRunContext| async { Ok(BodyOutput::from(json!(1))) })
        .unwrap();
    runtime.register(tool, None).unwrap();
    journal_every_stage(&runtime, &journal);
    let result = runtime.execute(call("raw", raw(r#"{"n": 1e400}"#))).await;
    assert_eq!(
        result,
        harness(
            HarnessCode::InvalidArgs,
            "invalid arguments: \"n\" is not lossless JSON: 1e+400 is outside the range of a double"
        )
    );
    assert_eq!(journal.events(), Vec::<String>::new());
}

#[tokio::test]
async fn schema_violations_are_invalid_args_in_schema_order_and_skip_every_stage() {
    let parameters = json!({
        "path": { "type": "string", "required": true },
        "mode": { "type": "string", "enum": ["read", "write"] },
        "version": { "type": "integer", "const": 2 },
        "config": {
            "type": "object",
            "additionalProperties": false,
            "properties": { "host": { "type": "string", "required": true } }
        },
        "tags": { "type": "array", "items": { "type": "string" } },
        "shape": { "oneOf": [{ "type": "string" }, { "type": "number" }] }
    });
    let check = |arguments: Value, message: &'static str| {
        let parameters = parameters.clone();
        async move {
            let runtime = runtime();
            let journal = Journal::new();
            runtime
                .register(recording_tool("t", parameters, &journal), None)
                .unwrap();
            journal_every_stage(&runtime, &journal);
            let observed = observe(&runtime);
            let result = runtime.execute(call("t", arguments)).await;
            let expected = harness(HarnessCode::InvalidArgs, message);
            assert_eq!(result, expected);
            assert_eq!(journal.events(), Vec::<String>::new(), "{message}");
            assert_eq!(observed.results(), vec![expected]);
        }
    };
    check(
        json!({}),
        "invalid arguments: missing required property \"path\"",
    )
    .await;
    check(
        json!({ "path": 1 }),
        "invalid arguments: \"path\" must be a string",
    )
    .await;
    check(
        json!({ "path": "p", "mode": "append" }),
        "invalid arguments: \"mode\" must be one of [\"read\",\"write\"]",
    )
    .await;
    check(
        json!({ "path": "p", "version": 3 }),
        "invalid arguments: \"version\" must equal 2",
    )
    .await;
    check(
        json!({ "path": "p", "config": { "host": "h", "port": 1 } }),
        "invalid arguments: \"config.port\" is not a declared property (additionalProperties: false)",
    )
    .await;
    check(
        json!({ "path": "p", "tags": ["a", 2, "c", null] }),
        "invalid arguments: \"tags[1]\" must be a string; \"tags[3]\" must be a string",
    )
    .await;
    check(
        json!({ "path": "p", "shape": true }),
        "invalid arguments: \"shape\" must match exactly one oneOf branch (matched 0)",
    )
    .await;
    check(
        json!({ "mode": 1, "config": {} }),
        "invalid arguments: missing required property \"path\"; \"mode\" must be a string; missing required property \"config.host\"",
    )
    .await;
    check(
        json!([1]),
        "invalid arguments: \"arguments\" must be an object",
    )
    .await;
}

#[tokio::test]
async fn the_implicit_parameter_root_is_open() {
    let runtime = runtime();
    let journal = Journal::new();
    let parameters = json!({ "a": { "type": "string" } });
    runtime
        .register(recording_tool("t", parameters, &journal), None)
        .unwrap();
    let result = runtime
        .execute(call("t", json!({ "a": "x", "extra": [1] })))
        .await;
    assert_eq!(result, success(json!("ok"), "ok"));
    assert_eq!(journal.events(), vec![r#"body:{"a":"x","extra":[1]}"#]);
}

#[tokio::test]
async fn a_raw_input_schema_leaves_argument_validation_to_the_tool() {
    let runtime = runtime();
    let bodies = Arc::new(AtomicUsize::new(0));
    let counter = bodies.clone();
    let tool = any_output("raw")
        .input_schema(json!({
            "type": "object",
            "properties": { "n": { "type": "string" } },
            "required": ["n"],
            "additionalProperties": false
        }))
        .body(move |ctx: ToolRunContext| {
            counter.fetch_add(1, Ordering::SeqCst);
            let arguments = Value::clone(ctx.arguments());
            async move { Ok(BodyOutput::from(arguments)) }
        })
        .unwrap();
    runtime.register(tool, None).unwrap();
    let result = runtime
        .execute(call("raw", json!({ "n": 5, "other": true })))
        .await;
    assert_eq!(
        result,
        success(
            json!({ "n": 5, "other": true }),
            "{\n  \"n\": 5,\n  \"other\": true\n}"
        )
    );
    assert_eq!(bodies.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_unknown_tool_is_a_result_that_reaches_no_stage() {
    let runtime = runtime();
    let journal = Journal::new();
    journal_every_stage(&runtime, &journal);
    let observed = observe(&runtime);
    let result = runtime.execute(call("nope", json!({}))).await;
    let expected = harness(HarnessCode::UnknownTool, "unknown tool \"nope\"");
    assert_eq!(result, expected);
    assert_eq!(result.text(), "Error: unknown tool \"nope\"");
    assert_eq!(journal.events(), Vec::<String>::new());
    assert_eq!(observed.results(), vec![expected]);
}
