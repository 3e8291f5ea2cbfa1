//! Scheduling: `executionMode` (parallel only for an exact `true`) and `execute_batch`
//! (results in call order, a bounded rolling pool of parallel calls, exclusive calls as
//! barriers, policy in model order). Overlap and bounds are proven with channels and
//! counters: every body blocks until the test releases it.

#![allow(clippy::unwrap_used)]

use crate::support::runtime as runtime_support;

use dsh_tools::ToolRuntime;
use dsh_tools::pipeline::hooks::{PreDecision, PreExecuteHook};
use dsh_tools::registry::Restriction;
use dsh_tools::tool::{
    BodyOutput, Classifier, Concurrency, ToolDefinition, ToolError, ToolExecution,
    ToolExecutionInput, ToolRunContext,
};
use dsh_tools_protocol::ExecutionMode;
use futures::future::BoxFuture;
use parking_lot::Mutex;
use runtime_support::*;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::{mpsc, oneshot};

/// Classifies `{"safe": true}` as parallel, records the arguments it saw, and panics on
/// `{"explode": true}`.
#[derive(Default)]
struct BySafeFlag {
    seen: Mutex<Vec<String>>,
}

impl Classifier for BySafeFlag {
    fn classify(&self, _registration: &str, arguments: &Value) -> BoxFuture<'static, bool> {
        self.seen.lock().push(compact(arguments));
        let explode = arguments["explode"] == json!(true);
        let safe = arguments["safe"] == json!(true);
        Box::pin(async move {
            assert!(!explode, "classifier exploded");
            safe
        })
    }
}

fn tool(name: &str, concurrency: Concurrency) -> ToolDefinition {
    any_output(name)
        .parameters(json!({ "n": { "type": "number" } }))
        .concurrency(concurrency)
        .body(|_: ToolRunContext| async { Ok(BodyOutput::from(json!(null))) })
        .unwrap()
}

#[tokio::test]
async fn execution_mode_is_parallel_only_for_an_exact_true_classification() {
    let runtime = runtime();
    let registry = runtime.registry();
    let classifier = Arc::new(BySafeFlag::default());
    runtime
        .register(tool("excl", Concurrency::Exclusive), None)
        .unwrap();
    runtime
        .register(tool("par", Concurrency::Parallel), None)
        .unwrap();
    runtime
        .register(
            tool("cls", Concurrency::Classified(classifier.clone())),
            None,
        )
        .unwrap();
    registry.open_agent(Arc::from("shadow"), None).unwrap();
    registry.open_agent(Arc::from("masked"), None).unwrap();
    runtime
        .register(
            tool("par", Concurrency::Exclusive),
            Some(Arc::from("shadow")),
        )
        .unwrap();
    registry
        .restrict(
            Some(Arc::from("masked")),
            Restriction::Deny([Arc::from("par")].into()),
        )
        .unwrap();
    let (parallel, exclusive) = (ExecutionMode::Parallel, ExecutionMode::Exclusive);
    let cases: Vec<(&str, Value, Option<&str>, ExecutionMode)> = vec![
        ("excl", json!({}), None, exclusive),
        ("par", json!({}), None, parallel),
        ("cls", json!({ "safe": true }), None, parallel),
        ("cls", json!({ "safe": "true" }), None, exclusive),
        ("cls", json!({ "safe": 1 }), None, exclusive),
        ("cls", json!({}), None, exclusive),
        // Invalid arguments: the classifier is not even asked.
        ("cls", json!({ "safe": true, "n": "x" }), None, exclusive),
        ("par", json!({ "n": "x" }), None, exclusive),
        // Lossy arguments are invalid too.
        ("par", raw(r#"{"n": 9007199254740993}"#), None, exclusive),
        ("cls", raw(r#"{"safe": true, "n": -0}"#), None, exclusive),
        // A throwing classifier is exclusive.
        (
            "cls",
            json!({ "safe": true, "explode": true }),
            None,
            exclusive,
        ),
        ("unknown", json!({}), None, exclusive),
        ("par", json!({}), Some("shadow"), exclusive),
        ("par", json!({}), Some("masked"), exclusive),
        ("excl", json!({}), Some("masked"), exclusive),
    ];
    for (name, arguments, agent, expected) in cases {
        let agent = agent.map(Arc::<str>::from);
        let mode = runtime
            .execution_mode(name, &arguments, agent.as_ref())
            .await;
        assert_eq!(mode, expected, "{name} {arguments} {agent:?}");
    }
    assert_eq!(
        classifier.seen.lock().clone(),
        [
            r#"{"safe":true}"#,
            r#"{"safe":"true"}"#,
            r#"{"safe":1}"#,
            "{}",
            r#"{"safe":true,"explode":true}"#
        ]
    );
}

#[tokio::test]
async fn a_classifier_sees_the_canonical_snapshot_of_the_arguments() {
    let runtime = runtime();
    let classifier = Arc::new(BySafeFlag::default());
    runtime
        .register(
            tool("cls", Concurrency::Classified(classifier.clone())),
            None,
        )
        .unwrap();
    let arguments = raw(r#"{"safe": true, "n": 1.0}"#);
    let mode = runtime.execution_mode("cls", &arguments, None).await;
    assert_eq!(mode, ExecutionMode::Parallel);
    assert_eq!(classifier.seen.lock().clone(), [r#"{"safe":true,"n":1}"#]);
}

/// Bodies that report their start with a release handle and block until released, while
/// counting how many run at once.
#[derive(Clone)]
struct Gate {
    started: mpsc::UnboundedSender<(u64, oneshot::Sender<()>)>,
    running: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
    journal: Journal,
}

impl Gate {
    fn new() -> (Gate, mpsc::UnboundedReceiver<(u64, oneshot::Sender<()>)>) {
        let (started, receiver) = mpsc::unbounded_channel();
        let gate = Gate {
            started,
            running: Arc::new(AtomicUsize::new(0)),
            most: Arc::new(AtomicUsize::new(0)),
            journal: Journal::new(),
        };
        (gate, receiver)
    }

    /// A tool whose calls carry `{"i": <n>}` and return `n`.
    fn tool(&self, name: &str, concurrency: Concurrency) -> ToolDefinition {
        let gate = self.clone();
        ToolDefinition::builder(name)
            .parameters(json!({ "i": { "type": "integer", "required": true } }))
            .output(json!({ "type": "integer" }))
            .concurrency(concurrency)
            .body(move |ctx: ToolRunContext| {
                let gate = gate.clone();
                let i = ctx.arguments()["i"].as_u64().unwrap();
                async move {
                    let now = gate.running.fetch_add(1, Ordering::SeqCst) + 1;
                    gate.most.fetch_max(now, Ordering::SeqCst);
                    gate.journal.push(format!("start{i}"));
                    let (release, released) = oneshot::channel();
                    gate.started.send((i, release)).unwrap();
                    released.await.unwrap();
                    gate.journal.push(format!("end{i}"));
                    gate.running.fetch_sub(1, Ordering::SeqCst);
                    Ok::<_, ToolError>(BodyOutput::from(json!(i)))
                }
            })
            .unwrap()
    }
}

fn numbered(name: &str, i: u64) -> ToolExecutionInput {
    ToolExecutionInput::new(format!("c{i}"), name, json!({ "i": i }))
}

fn spawn_batch(
    runtime: &Arc<ToolRuntime>,
    calls: Vec<ToolExecutionInput>,
    max_parallel: Option<usize>,
) -> tokio::task::JoinHandle<Vec<dsh_tools::ToolExecutionResult>> {
    let runtime = runtime.clone();
    tokio::spawn(async move { runtime.execute_batch(calls, max_parallel).await })
}

fn integers(results: &[dsh_tools::ToolExecutionResult]) -> Vec<Value> {
    results
        .iter()
        .map(|r| r.value().cloned().unwrap_or(Value::Null))
        .collect()
}

#[tokio::test]
async fn parallel_calls_overlap_up_to_the_bound_and_results_keep_call_order() {
    let runtime = runtime();
    let (gate, mut started) = Gate::new();
    runtime
        .register(gate.tool("p", Concurrency::Parallel), None)
        .unwrap();
    let calls = (0..5).map(|i| numbered("p", i)).collect();
    let batch = spawn_batch(&runtime, calls, Some(2));
    let (first, release_first) = settles(started.recv()).await.unwrap();
    let (second, release_second) = settles(started.recv()).await.unwrap();
    // Two bodies are running at once and neither has been released.
    assert_eq!((first, second), (0, 1));
    assert_eq!(gate.running.load(Ordering::SeqCst), 2);
    assert!(started.try_recv().is_err(), "a third call started");
    // Finishing call 1 (before call 0) frees its slot for call 2: the pool rolls.
    release_second.send(()).unwrap();
    let (third, release_third) = settles(started.recv()).await.unwrap();
    assert_eq!(third, 2);
    release_first.send(()).unwrap();
    let (fourth, release_fourth) = settles(started.recv()).await.unwrap();
    assert_eq!(fourth, 3);
    release_fourth.send(()).unwrap();
    let (fifth, release_fifth) = settles(started.recv()).await.unwrap();
    assert_eq!(fifth, 4);
    release_fifth.send(()).unwrap();
    release_third.send(()).unwrap();
    let results = settles(batch).await.unwrap();
    assert_eq!(integers(&results), [0, 1, 2, 3, 4].map(|i| json!(i)));
    assert_eq!(gate.most.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn an_exclusive_call_waits_for_the_pool_to_drain_runs_alone_and_bars_later_calls() {
    let runtime = runtime();
    let (gate, mut started) = Gate::new();
    runtime
        .register(gate.tool("p", Concurrency::Parallel), None)
        .unwrap();
    runtime
        .register(gate.tool("x", Concurrency::Exclusive), None)
        .unwrap();
    let calls = vec![
        numbered("p", 0),
        numbered("p", 1),
        numbered("x", 2),
        numbered("p", 3),
        numbered("p", 4),
    ];
    let batch = spawn_batch(&runtime, calls, Some(10));
    let (_, release0) = settles(started.recv()).await.unwrap();
    let (_, release1) = settles(started.recv()).await.unwrap();
    assert!(
        started.try_recv().is_err(),
        "the exclusive call started early"
    );
    release0.send(()).unwrap();
    release1.send(()).unwrap();
    let (exclusive, release2) = settles(started.recv()).await.unwrap();
    assert_eq!(exclusive, 2);
    assert_eq!(gate.running.load(Ordering::SeqCst), 1);
    assert!(
        started.try_recv().is_err(),
        "a call overlapped the exclusive one"
    );
    release2.send(()).unwrap();
    let (_, release3) = settles(started.recv()).await.unwrap();
    let (_, release4) = settles(started.recv()).await.unwrap();
    assert_eq!(gate.running.load(Ordering::SeqCst), 2);
    release4.send(()).unwrap();
    release3.send(()).unwrap();
    let results = settles(batch).await.unwrap();
    assert_eq!(integers(&results), [0, 1, 2, 3, 4].map(|i| json!(i)));
    let journal = gate.journal.events();
    assert_eq!(
        journal[..6],
        ["start0", "start1", "end0", "end1", "start2", "end2"]
    );
    assert_eq!(gate.most.load(Ordering::SeqCst), 2);
}

/// A pre-execute listener that reports each call it enters and holds call 0 until released.
struct HoldsTheFirst {
    entered: mpsc::UnboundedSender<u64>,
    release: Mutex<Option<oneshot::Receiver<()>>>,
}

impl PreExecuteHook for HoldsTheFirst {
    fn name(&self) -> &str {
        "holds-the-first"
    }

    fn decide(
        &self,
        execution: &Arc<ToolExecution>,
    ) -> BoxFuture<'static, Result<PreDecision, ToolError>> {
        let i = execution.arguments["i"].as_u64().unwrap();
        self.entered.send(i).unwrap();
        let hold = (i == 0).then(|| self.release.lock().take()).flatten();
        Box::pin(async move {
            if let Some(hold) = hold {
                hold.await.unwrap();
            }
            Ok(PreDecision::Allow)
        })
    }
}

#[tokio::test]
async fn policy_runs_in_model_order_even_when_the_calls_overlap() {
    let runtime = runtime();
    let barrier = Arc::new(tokio::sync::Barrier::new(3));
    let tool = ToolDefinition::builder("p")
        .parameters(json!({ "i": { "type": "integer" } }))
        .output(json!({ "type": "integer" }))
        .concurrency(Concurrency::Parallel)
        .body(move |ctx: ToolRunContext| {
            let barrier = barrier.clone();
            let i = ctx.arguments()["i"].clone();
            async move {
                // All three bodies must be running at once to get past this.
                barrier.wait().await;
                Ok(BodyOutput::from(i))
            }
        })
        .unwrap();
    runtime.register(tool, None).unwrap();
    let (entered, mut entries) = mpsc::unbounded_channel();
    let (release, hold) = oneshot::channel();
    runtime.add_pre_execute(
        0,
        None,
        Arc::new(HoldsTheFirst {
            entered,
            release: Mutex::new(Some(hold)),
        }),
    );
    let calls = (0..3).map(|i| numbered("p", i)).collect();
    let batch = spawn_batch(&runtime, calls, Some(3));
    assert_eq!(settles(entries.recv()).await, Some(0));
    assert!(
        entries.try_recv().is_err(),
        "a later call's policy ran while call 0 was still deciding"
    );
    release.send(()).unwrap();
    assert_eq!(settles(entries.recv()).await, Some(1));
    assert_eq!(settles(entries.recv()).await, Some(2));
    let results = settles(batch).await.unwrap();
    assert_eq!(integers(&results), [0, 1, 2].map(|i| json!(i)));
}

#[tokio::test]
async fn the_configured_bound_applies_when_a_batch_names_none() {
    for (config, expected_most) in [
        (json!({ "tools": { "maxParallelSubCalls": 1 } }), 1),
        (json!({ "tools": { "maxParallelSubCalls": 3 } }), 3),
    ] {
        let runtime = runtime_with(config);
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let (count, peak) = (running.clone(), most.clone());
        let tool = any_output("p")
            .concurrency(Concurrency::Parallel)
            .body(move |_: ToolRunContext| {
                let (count, peak) = (count.clone(), peak.clone());
                async move {
                    let now = count.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                    // Give every other admitted call the chance to start too.
                    for _ in 0..8 {
                        tokio::task::yield_now().await;
                    }
                    count.fetch_sub(1, Ordering::SeqCst);
                    Ok(BodyOutput::from(json!(null)))
                }
            })
            .unwrap();
        runtime.register(tool, None).unwrap();
        let calls = (0..6).map(|i| numbered("p", i)).collect();
        let results = settles(runtime.execute_batch(calls, None)).await;
        assert_eq!(results.len(), 6);
        assert_eq!(most.load(Ordering::SeqCst), expected_most);
    }
}

#[tokio::test]
async fn failures_in_a_batch_keep_their_place() {
    let runtime = runtime();
    runtime.register(echo("e"), None).unwrap();
    let calls = vec![
        ToolExecutionInput::new("a", "e", json!({ "text": "one" })),
        ToolExecutionInput::new("b", "missing", json!({})),
        ToolExecutionInput::new("c", "e", json!({ "text": 2 })),
        ToolExecutionInput::new("d", "e", json!({ "text": "four" })),
    ];
    let results = settles(runtime.execute_batch(calls, Some(4))).await;
    assert_eq!(
        results,
        vec![
            text_success("one"),
            harness(
                dsh_tools::tool::HarnessCode::UnknownTool,
                "unknown tool \"missing\""
            ),
            harness(
                dsh_tools::tool::HarnessCode::InvalidArgs,
                "invalid arguments: \"text\" must be a string"
            ),
            text_success("four"),
        ]
    );
}
