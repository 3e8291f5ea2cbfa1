//! Helpers for library-level tests of `ToolRuntime`: runtimes, small tool definitions,
//! closure-backed hooks, an event journal, and expected results built whole.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use dsh_tools::ToolRuntime;
use dsh_tools::pipeline::Next;
use dsh_tools::pipeline::hooks::{
    Approval, ApprovalOutcome, ApprovalRequest, Approver, Dispatch, DispatchOutcome,
    ExecuteWrapper, Guard, PostDecision, PostExecuteHook, PreDecision, PreExecuteHook,
    ResultObserver,
};
use dsh_tools::tool::{
    BodyOutput, ContentBlock, ContextContent, ContextMessage, ContextRole, HarnessCode, Outcome,
    ToolDefinition, ToolDefinitionBuilder, ToolError, ToolExecution, ToolExecutionInput,
    ToolExecutionResult, ToolRunContext,
};
use futures::future::BoxFuture;
use parking_lot::Mutex;
use serde_json::{Value, json};
use std::sync::Arc;

/// A runtime with the default host configuration (timeouts enforced, no default deadline).
pub fn runtime() -> Arc<ToolRuntime> {
    runtime_with(json!({}))
}

/// A runtime configured by `config` (a `HostConfig` as JSON), with the host tools a host
/// has (Code Mode's entry, tool discovery) and nothing else of the host configured.
pub fn runtime_with(config: Value) -> Arc<ToolRuntime> {
    let config = dsh_tools::config::parse(config).unwrap();
    dsh_tools::host::Host::new(&config).runtime
}

/// Bounds a wait that only a broken pipeline would make endless, so a regression fails
/// instead of hanging the suite (never used to make anything happen).
pub async fn settles<T>(work: impl Future<Output = T>) -> T {
    tokio::time::timeout(std::time::Duration::from_secs(20), work)
        .await
        .expect("the work did not settle")
}

/// Parses JSON text keeping number text as written (`1.0` stays `1.0`).
pub fn raw(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

/// Compact JSON text as JavaScript writes it.
pub fn compact(value: &Value) -> String {
    dsh_tools::json::render_compact(value)
}

/// A builder whose output declaration is unconstrained JSON.
pub fn any_output(name: &str) -> ToolDefinitionBuilder {
    ToolDefinition::builder(name).output(json!({ "type": "json" }))
}

/// `echo`: `{ text: string (required) }` → the text back, as a string output.
pub fn echo(name: &str) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description("Echo the text back.")
        .parameters(json!({ "text": { "type": "string", "required": true } }))
        .output(json!({ "type": "string" }))
        .body(|ctx: ToolRunContext| async move {
            Ok(BodyOutput::from(ctx.arguments()["text"].clone()))
        })
        .unwrap()
}

/// A tool that returns `value` whatever its arguments, declaring unconstrained output.
pub fn constant(name: &str, value: Value) -> ToolDefinition {
    any_output(name)
        .body(move |_: ToolRunContext| {
            let value = value.clone();
            async move { Ok(BodyOutput::from(value)) }
        })
        .unwrap()
}

/// A call from the global scope.
pub fn call(name: &str, arguments: Value) -> ToolExecutionInput {
    ToolExecutionInput::new(format!("call-{name}"), name, arguments)
}

/// A call from `agent`.
pub fn agent_call(agent: &str, name: &str, arguments: Value) -> ToolExecutionInput {
    call(name, arguments).with_agent(Some(Arc::from(agent)))
}

/// The success a default-rendered string value produces.
pub fn text_success(text: &str) -> ToolExecutionResult {
    ToolExecutionResult {
        outcome: Outcome::Success(Arc::new(json!(text))),
        content: vec![ContentBlock::text(text)],
        meta: None,
        additional_contexts: Vec::new(),
        structured_content: None,
    }
}

/// A success with `value` rendered as `content_text`.
pub fn success(value: Value, content_text: &str) -> ToolExecutionResult {
    ToolExecutionResult {
        outcome: Outcome::Success(Arc::new(value)),
        content: vec![ContentBlock::text(content_text)],
        meta: None,
        additional_contexts: Vec::new(),
        structured_content: None,
    }
}

/// A failure without a harness code (tool failures, denials, hook failures).
pub fn failure(message: &str) -> ToolExecutionResult {
    ToolExecutionResult::failure(ToolError::new(message))
}

/// A harness failure.
pub fn harness(code: HarnessCode, message: &str) -> ToolExecutionResult {
    ToolExecutionResult::harness(code, message)
}

/// A user context message with text content.
pub fn context(text: &str) -> ContextMessage {
    ContextMessage {
        role: ContextRole::User,
        content: ContextContent::Text(text.to_string()),
        source: Some("test".into()),
        meta: None,
    }
}

/// An ordered log of what ran, shared by every hook of a test.
#[derive(Clone, Default)]
pub struct Journal(Arc<Mutex<Vec<String>>>);

impl Journal {
    pub fn new() -> Self {
        Journal::default()
    }

    pub fn push(&self, event: impl Into<String>) {
        self.0.lock().push(event.into());
    }

    pub fn events(&self) -> Vec<String> {
        self.0.lock().clone()
    }

    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock())
    }
}

type PreFn = dyn Fn(&ToolExecution) -> Result<PreDecision, ToolError> + Send + Sync;

/// A pre-execute listener that journals `pre:<name>` and answers with `decide`.
pub struct Pre {
    pub name: String,
    pub journal: Journal,
    pub decide: Box<PreFn>,
}

impl Pre {
    pub fn new(
        name: &str,
        journal: &Journal,
        decide: impl Fn(&ToolExecution) -> Result<PreDecision, ToolError> + Send + Sync + 'static,
    ) -> Arc<Self> {
        Arc::new(Pre {
            name: name.into(),
            journal: journal.clone(),
            decide: Box::new(decide),
        })
    }

    /// Always answers `decision`.
    pub fn fixed(name: &str, journal: &Journal, decision: PreDecision) -> Arc<Self> {
        Pre::new(name, journal, move |_| Ok(decision.clone()))
    }
}

impl PreExecuteHook for Pre {
    fn name(&self) -> &str {
        &self.name
    }

    fn decide(
        &self,
        execution: &Arc<ToolExecution>,
    ) -> BoxFuture<'static, Result<PreDecision, ToolError>> {
        self.journal.push(format!("pre:{}", self.name));
        let answer = (self.decide)(execution);
        Box::pin(async move { answer })
    }
}

type GuardFn = dyn Fn(&ToolExecution) -> Result<Option<String>, ToolError> + Send + Sync;

/// A guard that journals `guard:<name>`.
pub struct GuardHook {
    pub name: String,
    pub journal: Journal,
    pub check: Box<GuardFn>,
}

impl GuardHook {
    pub fn new(
        name: &str,
        journal: &Journal,
        check: impl Fn(&ToolExecution) -> Result<Option<String>, ToolError> + Send + Sync + 'static,
    ) -> Arc<Self> {
        Arc::new(GuardHook {
            name: name.into(),
            journal: journal.clone(),
            check: Box::new(check),
        })
    }
}

impl Guard for GuardHook {
    fn name(&self) -> &str {
        &self.name
    }

    fn check(
        &self,
        execution: &Arc<ToolExecution>,
    ) -> BoxFuture<'static, Result<Option<String>, ToolError>> {
        self.journal.push(format!("guard:{}", self.name));
        let answer = (self.check)(execution);
        Box::pin(async move { answer })
    }
}

type PostFn =
    dyn Fn(&ToolExecution, &ToolExecutionResult) -> Result<PostDecision, ToolError> + Send + Sync;

/// A post-execute listener that journals `post:<name>`.
pub struct Post {
    pub name: String,
    pub journal: Journal,
    pub decide: Box<PostFn>,
}

impl Post {
    pub fn new(
        name: &str,
        journal: &Journal,
        decide: impl Fn(&ToolExecution, &ToolExecutionResult) -> Result<PostDecision, ToolError>
        + Send
        + Sync
        + 'static,
    ) -> Arc<Self> {
        Arc::new(Post {
            name: name.into(),
            journal: journal.clone(),
            decide: Box::new(decide),
        })
    }

    /// Always answers `decision`.
    pub fn fixed(name: &str, journal: &Journal, decision: PostDecision) -> Arc<Self> {
        Post::new(name, journal, move |_, _| Ok(decision.clone()))
    }
}

impl PostExecuteHook for Post {
    fn name(&self) -> &str {
        &self.name
    }

    fn decide(
        &self,
        execution: &Arc<ToolExecution>,
        result: &ToolExecutionResult,
    ) -> BoxFuture<'static, Result<PostDecision, ToolError>> {
        self.journal.push(format!("post:{}", self.name));
        let answer = (self.decide)(execution, result);
        Box::pin(async move { answer })
    }
}

/// An approver that journals `approve:<reason>` and answers `outcome`.
pub struct FixedApprover {
    pub journal: Journal,
    pub outcome: ApprovalOutcome,
}

impl Approver for FixedApprover {
    fn approve(
        &self,
        _execution: &Arc<ToolExecution>,
        request: ApprovalRequest,
    ) -> BoxFuture<'static, Approval> {
        self.journal.push(format!(
            "approve:{}",
            request.reason.as_deref().unwrap_or("-")
        ));
        let outcome = self.outcome;
        Box::pin(async move { outcome.into() })
    }
}

/// One observation: the tool name, the frozen arguments and the final result.
pub type Observation = (Arc<str>, Value, ToolExecutionResult);

/// Records every observed final result.
#[derive(Clone, Default)]
pub struct Observed(pub Arc<Mutex<Vec<Observation>>>);

impl Observed {
    /// (name, arguments, result) of every observation so far.
    pub fn all(&self) -> Vec<Observation> {
        self.0.lock().clone()
    }

    /// Just the results.
    pub fn results(&self) -> Vec<ToolExecutionResult> {
        self.0.lock().iter().map(|(_, _, r)| r.clone()).collect()
    }
}

impl ResultObserver for Observed {
    fn observe(&self, execution: &ToolExecution, result: &ToolExecutionResult) {
        self.0.lock().push((
            execution.name.clone(),
            Value::clone(&execution.arguments),
            result.clone(),
        ));
    }
}

/// A wrapper that journals `<name>:before` / `<name>:after` around the rest of the chain.
pub struct Around {
    pub name: String,
    pub journal: Journal,
}

impl Around {
    pub fn new(name: &str, journal: &Journal) -> Arc<Self> {
        Arc::new(Around {
            name: name.into(),
            journal: journal.clone(),
        })
    }
}

impl ExecuteWrapper for Around {
    fn wrap(&self, dispatch: Dispatch, next: Next) -> BoxFuture<'static, DispatchOutcome> {
        let (name, journal) = (self.name.clone(), self.journal.clone());
        Box::pin(async move {
            journal.push(format!("{name}:before"));
            let outcome = next.run(dispatch).await;
            journal.push(format!("{name}:after"));
            outcome
        })
    }
}

/// Registers one listener of every kind journaling into `journal` (pre, guard, wrapper,
/// post), so a test can assert that none of them ran.
pub fn journal_every_stage(runtime: &ToolRuntime, journal: &Journal) {
    runtime.add_pre_execute(0, None, Pre::fixed("p", journal, PreDecision::Allow));
    runtime.add_guard(0, None, GuardHook::new("g", journal, |_| Ok(None)));
    runtime.add_wrapper(0, None, Around::new("wrap", journal));
    runtime.add_post_execute(0, None, Post::fixed("q", journal, PostDecision::accept()));
}

/// Adds an observer and returns what it records.
pub fn observe(runtime: &ToolRuntime) -> Observed {
    let observed = Observed::default();
    runtime.add_observer(None, Arc::new(observed.clone()));
    observed
}
