//! One execution, stage by stage, in the seed README's order:
//! snapshot → validate → pre-execute → approval → guards → wrappers → body → output validation
//! and rendering → post-execute → finalizeContent → observers (`tools/result`).

use super::ToolRuntime;
use super::dispatch::{Next, contained, panic_message};
use super::hooks::{
    ApprovalOutcome, ApprovalRequest, Dispatch, DispatchOutcome, HookSet, PreDecision,
};
use super::sequencer::Turns;
use crate::json;
use crate::registry::RegisteredTool;
use crate::schema::PathRoot;
use crate::tool::{
    BodyOutput, ContentBlock, ContextMessage, ExecutionToken, HarnessCode, InputSchema, Outcome,
    Progress, Render, ToolDefinition, ToolError, ToolExecution, ToolExecutionInput,
    ToolExecutionResult,
};
use dsh_tools_protocol::PresentationMode;
use futures::FutureExt;
use parking_lot::Mutex;
use serde_json::Value;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

impl ToolRuntime {
    /// Runs one call through the complete pipeline and returns its final result.
    pub async fn execute(&self, input: ToolExecutionInput) -> ToolExecutionResult {
        self.execute_in_turn(input, Turns::default()).await
    }

    /// Like [`execute`](Self::execute), taking policy and result turns from a scheduler so
    /// overlapping calls keep model order for everything but dispatch.
    pub(crate) async fn execute_in_turn(
        &self,
        input: ToolExecutionInput,
        mut turns: Turns,
    ) -> ToolExecutionResult {
        let ToolExecutionInput {
            call_id,
            name,
            mut arguments,
            signal,
            agent,
            parent,
        } = input;
        let lossy = json::canonicalize(&mut arguments, "")
            .err()
            .map(rooted_like_violations);
        let execution = Arc::new(ToolExecution {
            token: ExecutionToken::fresh(),
            call_id,
            name,
            arguments: Arc::new(arguments),
            agent,
            parent,
            signal,
        });
        let hooks = self.hooks.snapshot();
        // A sub-call resolves only bindings (the role says which tools are).
        let tool = self
            .registry
            .resolve(&execution.name, execution.agent.as_ref())
            .filter(|tool| execution.parent.is_none() || tool.definition.role.is_binding());
        let stages = self.stages(&execution, tool.as_ref(), lossy, &hooks, &mut turns);
        let result = match AssertUnwindSafe(stages).catch_unwind().await {
            Ok(result) => result,
            Err(panic) => ToolExecutionResult::harness(
                HarnessCode::PipelineFailed,
                format!("pipeline stage panicked: {}", panic_message(&panic)),
            ),
        };
        // The built-in spill policy: after every post-execute listener, before finalizeContent.
        let mut result = self.spill_result(&execution, result).await;
        if let Some(finalize) = tool
            .as_ref()
            .and_then(|t| t.definition.finalize_content.clone())
        {
            match std::panic::catch_unwind(AssertUnwindSafe(|| finalize(&execution, &result))) {
                Ok(Some(content)) => result.content = content,
                Ok(None) => {}
                Err(panic) => {
                    // Content that says "Error" on a success would lie: the call fails, and
                    // the contexts already promised to the loop are kept.
                    let message = format!(
                        "finalizeContent of tool \"{}\" panicked: {}",
                        execution.name,
                        panic_message(&panic)
                    );
                    let failed = ToolExecutionResult::harness(HarnessCode::PipelineFailed, message);
                    result = keep_contexts(result, failed);
                }
            }
        }
        turns.results().await;
        for observer in hooks.observers.iter().filter(|l| l.applies_to(&execution)) {
            // Observe-only: a panicking observer cannot change or lose the result.
            let observe = || observer.hook.observe(&execution, &result);
            if let Err(panic) = std::panic::catch_unwind(AssertUnwindSafe(observe)) {
                tracing::warn!("tools/result observer panicked: {}", panic_message(&panic));
            }
        }
        result
    }

    async fn stages(
        &self,
        execution: &Arc<ToolExecution>,
        tool: Option<&Arc<RegisteredTool>>,
        lossy: Option<json::LossyJson>,
        hooks: &HookSet,
        turns: &mut Turns,
    ) -> ToolExecutionResult {
        if execution.signal.is_aborted() {
            return aborted_before_dispatch();
        }
        if let Some(lossy) = lossy {
            return ToolExecutionResult::harness(
                HarnessCode::InvalidArgs,
                format!("invalid arguments: {lossy}"),
            );
        }
        let Some(tool) = tool else {
            return unknown_tool(&execution.name);
        };
        if execution.parent.is_none()
            && !tool.definition.role.is_code_entry()
            && self.registry.mode(execution.agent.as_ref()) == PresentationMode::Code
        {
            let entry = self.registry.code_entry(execution.agent.as_ref());
            return only_the_entry_is_direct(&execution.name, entry.as_deref());
        }
        let definition = &tool.definition;
        if let Some(invalid) = invalid_arguments(definition, &execution.arguments) {
            return invalid;
        }
        turns.policy().await;
        if let Some(denied) = self.policy(execution, hooks).await {
            return denied;
        }
        turns.policy_done();
        if execution.signal.is_aborted() {
            return aborted_before_dispatch();
        }
        let deferred = Arc::new(Mutex::new(Vec::new()));
        let outcome = self.dispatch(execution, tool, hooks, &deferred).await;
        let mut result = self
            .normalize(execution, &tool.registration, definition, outcome)
            .await;
        if execution.signal.is_aborted() && !result.is_error() {
            result = ToolExecutionResult::harness(HarnessCode::Aborted, "tool call aborted");
        }
        let mut contexts = std::mem::take(&mut *deferred.lock());
        contexts.append(&mut result.additional_contexts);
        result.additional_contexts = contexts;
        turns.results().await;
        self.post_execute(execution, tool, result, hooks).await
    }

    /// The pre-execute waterfall (strictest decision wins; deny stops it), approval of an
    /// `ask`, then the guards. `Some` is the denial.
    ///
    /// Cancellation is quiescent: a listener already asked is waited for, and what it then
    /// says decides. A denial (or a failure of its own) stays; anything that would let the
    /// call go on becomes `ABORTED_BEFORE_DISPATCH`, and no later stage is started.
    async fn policy(
        &self,
        execution: &Arc<ToolExecution>,
        hooks: &HookSet,
    ) -> Option<ToolExecutionResult> {
        let aborted = || execution.signal.is_aborted();
        let mut ask: Option<Option<String>> = None;
        for listener in hooks.pre.iter().filter(|l| l.applies_to(execution)) {
            if aborted() {
                return Some(aborted_before_dispatch());
            }
            match contained(async { listener.hook.decide(execution).await }).await {
                Ok(PreDecision::Deny(reason)) => return Some(denied(reason)),
                Ok(PreDecision::Refuse { reason, meta }) => {
                    let mut result = denied(reason);
                    result.meta = Some(meta);
                    return Some(result);
                }
                Ok(PreDecision::Allow) => {}
                Ok(PreDecision::Ask(reason)) => {
                    if ask.as_ref().is_none_or(Option::is_none) {
                        ask = Some(reason);
                    }
                }
                Err(error) if error.is_abort() => return Some(aborted_before_dispatch()),
                Err(error) => {
                    let hook = listener.hook.name();
                    return Some(denied(format!(
                        "tools/pre-execute hook \"{hook}\" failed: {}",
                        error.message
                    )));
                }
            }
        }
        if aborted() {
            return Some(aborted_before_dispatch());
        }
        if let Some(reason) = ask
            && let Some(refused) = self.approve(execution, hooks, reason).await
        {
            return Some(refused);
        }
        for listener in hooks.guards.iter().filter(|l| l.applies_to(execution)) {
            if aborted() {
                return Some(aborted_before_dispatch());
            }
            match contained(async { listener.hook.check(execution).await }).await {
                Ok(None) => {}
                Ok(Some(reason)) => return Some(denied(reason)),
                Err(error) if error.is_abort() => return Some(aborted_before_dispatch()),
                Err(error) => {
                    let guard = listener.hook.name();
                    return Some(denied(format!(
                        "tools/guard \"{guard}\" failed: {}",
                        error.message
                    )));
                }
            }
        }
        None
    }

    /// An `ask`: answered by a grant the user gave, else put to the approver (refused
    /// without one); `Some` is the refusal.
    async fn approve(
        &self,
        execution: &Arc<ToolExecution>,
        hooks: &HookSet,
        reason: Option<String>,
    ) -> Option<ToolExecutionResult> {
        let name = &execution.name;
        if let Some(grants) = &hooks.grants
            && grants.covering(execution).is_some()
        {
            return None;
        }
        let Some(approver) = hooks.approver.clone() else {
            return Some(denied(reason.unwrap_or_else(|| {
                format!("tool \"{name}\" requires approval, but no approver is connected")
            })));
        };
        let mut request = ApprovalRequest {
            reason,
            ..ApprovalRequest::default()
        };
        if let Some(grants) = &hooks.grants {
            grants.describe(execution, &mut request);
        }
        let approval = approver.approve(execution, request.clone()).await;
        if let Some(why) = &approval.unavailable {
            let reason = request
                .reason
                .unwrap_or_else(|| format!("tool \"{name}\" requires approval"));
            return Some(denied(format!(
                "{reason}, but no one could be asked: {why}"
            )));
        }
        match approval.outcome {
            ApprovalOutcome::Rejected => Some(denied(format!("the user rejected tool \"{name}\""))),
            _ if execution.signal.is_aborted() => Some(aborted_before_dispatch()),
            ApprovalOutcome::AllowedOnce => None,
            ApprovalOutcome::AllowedForSession | ApprovalOutcome::AllowedAlways => {
                if let Some(grants) = &hooks.grants
                    && let Err(error) = grants.record(execution, &request, &approval)
                {
                    tracing::warn!("tool \"{name}\": the user's grant was not kept: {error}");
                }
                None
            }
            ApprovalOutcome::Cancelled => Some(denied(format!(
                "approval for tool \"{name}\" was cancelled"
            ))),
        }
    }

    /// Wrappers, then the body.
    async fn dispatch(
        &self,
        execution: &Arc<ToolExecution>,
        tool: &RegisteredTool,
        hooks: &HookSet,
        deferred: &Arc<Mutex<Vec<ContextMessage>>>,
    ) -> DispatchOutcome {
        let definition = &tool.definition;
        let wrappers: Arc<[_]> = hooks
            .wrappers
            .iter()
            .filter(|l| l.applies_to(execution))
            .cloned()
            .collect();
        let dispatch = Dispatch {
            execution: execution.clone(),
            signal: execution.signal.clone(),
            timeout_ms: definition.timeout_ms,
            idempotent: definition.idempotent,
        };
        let next = Next::new(
            wrappers,
            definition.body.clone(),
            dispatch.clone(),
            tool.registration.clone(),
            Progress::new(execution, self.progress.get()),
            deferred.clone(),
        );
        next.run(dispatch).await
    }

    /// Turns a dispatch outcome into a result: snapshot and validate the value, then render.
    async fn normalize(
        &self,
        execution: &ToolExecution,
        registration: &str,
        definition: &ToolDefinition,
        outcome: DispatchOutcome,
    ) -> ToolExecutionResult {
        match outcome {
            Err(error) => ToolExecutionResult::failure(error),
            Ok(BodyOutput {
                value,
                content,
                meta,
                structured_content,
            }) => {
                let result =
                    canonical_result(execution, registration, definition, value, content, meta)
                        .await;
                with_structured_content(&execution.name, result, structured_content)
            }
        }
    }
}

/// `INVALID_ARGS` for a DSL tool whose arguments fail validation.
fn invalid_arguments(
    definition: &ToolDefinition,
    arguments: &Value,
) -> Option<ToolExecutionResult> {
    let InputSchema::Validated { validator, .. } = &definition.input else {
        return None;
    };
    let violations = validator.validate(arguments, PathRoot::Arguments);
    if violations.is_empty() {
        return None;
    }
    let joined: Vec<String> = violations.iter().map(ToString::to_string).collect();
    Some(ToolExecutionResult::harness(
        HarnessCode::InvalidArgs,
        format!("invalid arguments: {}", joined.join("; ")),
    ))
}

/// Argument paths read like validation violations: bare property paths (`config.host`), and
/// `arguments` for the root itself or before a leading index (`arguments[0]`).
fn rooted_like_violations(mut lossy: json::LossyJson) -> json::LossyJson {
    if lossy.path.is_empty() || lossy.path.starts_with('[') {
        lossy.path.insert_str(0, "arguments");
    }
    lossy
}

/// Snapshots, validates and renders a canonical value.
pub(super) async fn canonical_result(
    execution: &ToolExecution,
    registration: &str,
    definition: &ToolDefinition,
    mut value: Value,
    content: Option<Vec<ContentBlock>>,
    meta: Option<Value>,
) -> ToolExecutionResult {
    let name = &execution.name;
    if let Err(lossy) = json::canonicalize(&mut value, "value") {
        return invalid_output(name, &lossy.to_string());
    }
    let violations = definition
        .output
        .validator
        .validate(&value, PathRoot::Value);
    if !violations.is_empty() {
        let joined: Vec<String> = violations.iter().map(ToString::to_string).collect();
        return invalid_output(name, &joined.join("; "));
    }
    let content = match content {
        Some(content) => content,
        None => match &definition.output.render {
            Render::Default => vec![ContentBlock::text(render_default(&value))],
            Render::Custom(renderer) => {
                match renderer.render(execution, registration, &value).await {
                    Ok(content) => content,
                    Err(error) => return ToolExecutionResult::failure(error),
                }
            }
        },
    };
    // Direct calls only: nested Code Mode dispatches never compute presentation metadata.
    let meta = match (&definition.card_meta, execution.parent) {
        (Some(derive), None) => {
            std::panic::catch_unwind(AssertUnwindSafe(|| derive(&execution.arguments, &value)))
                .ok()
                .flatten()
                .or(meta)
        }
        _ => meta,
    };
    ToolExecutionResult {
        outcome: Outcome::Success(Arc::new(value)),
        content,
        meta,
        additional_contexts: Vec::new(),
        structured_content: None,
    }
}

/// A success carrying `structured` (canonical, as its value is) as its `structuredContent`;
/// a failure stays as it is.
pub(super) fn with_structured_content(
    name: &str,
    mut result: ToolExecutionResult,
    structured: Option<Value>,
) -> ToolExecutionResult {
    let Some(mut structured) = structured else {
        return result;
    };
    if result.is_error() {
        return result;
    }
    if let Err(lossy) = json::canonicalize(&mut structured, "structuredContent") {
        return keep_contexts(result, invalid_output(name, &lossy.to_string()));
    }
    result.structured_content = Some(structured);
    result
}

/// Strings raw, any other JSON pretty (indentation capped at ten characters).
pub fn render_default(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => json::render_pretty(other),
    }
}

fn invalid_output(name: &str, detail: &str) -> ToolExecutionResult {
    ToolExecutionResult::harness(
        HarnessCode::InvalidToolOutput,
        format!("tool \"{name}\" returned invalid output: {detail}"),
    )
}

fn unknown_tool(name: &str) -> ToolExecutionResult {
    ToolExecutionResult::harness(HarnessCode::UnknownTool, format!("unknown tool \"{name}\""))
}

/// A direct call under a `code` presentation of a tool that is not the Code Mode entry.
fn only_the_entry_is_direct(name: &str, entry: Option<&RegisteredTool>) -> ToolExecutionResult {
    let Some(entry) = entry else {
        return unknown_tool(name);
    };
    let entry = &entry.definition.name;
    ToolExecutionResult::harness(
        HarnessCode::UnknownTool,
        format!(
            "unknown tool \"{name}\": only `{entry}` is callable directly — call `{name}` from inside a `{entry}` program instead"
        ),
    )
}

fn aborted_before_dispatch() -> ToolExecutionResult {
    ToolExecutionResult::harness(
        HarnessCode::AbortedBeforeDispatch,
        "tool call aborted before dispatch",
    )
}

fn denied(reason: String) -> ToolExecutionResult {
    ToolExecutionResult::failure(ToolError::new(reason))
}

/// `next` with the contexts `previous` had gathered (tool-deferred contexts survive failures).
pub(super) fn keep_contexts(
    previous: ToolExecutionResult,
    mut next: ToolExecutionResult,
) -> ToolExecutionResult {
    let mut contexts = previous.additional_contexts;
    contexts.append(&mut next.additional_contexts);
    next.additional_contexts = contexts;
    next
}
