//! Extension points of the pipeline: pre-execute gate, guards, approval, around-dispatch
//! wrappers, post-execute decisions and result observers.

use crate::tool::{
    AgentId, BodyOutput, ContentBlock, ContextMessage, Signal, ToolError, ToolExecution,
    ToolExecutionResult,
};
use futures::future::BoxFuture;
use serde_json::Value;
use std::sync::Arc;

pub use dsh_tools_protocol::ApprovalOutcome;

/// The pre-execute gate's decision (no argument rewrite, by design).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PreDecision {
    /// Continue.
    Allow,
    /// Refuse; the reason is what the model reads.
    Deny(String),
    /// Ask the approver (degrades to deny without one).
    Ask(Option<String>),
    /// Refuse, with the record of how it was decided (it rides on the result's `meta`).
    Refuse {
        /// What the model reads.
        reason: String,
        /// The result's `meta`.
        meta: Value,
    },
}

/// A post-execute decision.
#[derive(Clone, Debug, PartialEq)]
pub enum PostDecision {
    /// Keep the result, optionally replacing content or value (never both).
    Accept {
        /// Replacement content (value and meta kept).
        content: Option<Vec<ContentBlock>>,
        /// Replacement value (revalidated, re-rendered).
        value: Option<Value>,
        /// `structuredContent` for the result (a success's). Without it, replacing the
        /// content or the value drops the server's, which described the old content.
        structured_content: Option<Value>,
        /// Contexts appended after tool-deferred ones.
        additional_contexts: Vec<ContextMessage>,
    },
    /// Turn the result into a valueless failure.
    Block {
        /// Text (the failure message) or content blocks.
        feedback: BlockFeedback,
        /// The only contexts the blocked result keeps.
        additional_contexts: Vec<ContextMessage>,
    },
}

impl PostDecision {
    /// Accept unchanged.
    pub fn accept() -> Self {
        PostDecision::Accept {
            content: None,
            value: None,
            structured_content: None,
            additional_contexts: Vec::new(),
        }
    }
}

/// What a block shows the model.
#[derive(Clone, Debug, PartialEq)]
pub enum BlockFeedback {
    /// A message (content becomes `Error: <text>`).
    Text(String),
    /// Content blocks, shown verbatim (the message is derived from them, see
    /// [`feedback_message`]).
    Blocks(Vec<ContentBlock>),
}

/// The failure message of block feedback given as content: its text blocks joined with
/// `\n`, each other block as `[<type> content]`, so a caller reading only `error.message`
/// still learns why; only feedback with no text at all gets the generic message.
pub fn feedback_message(blocks: &[ContentBlock]) -> String {
    let parts: Vec<String> = blocks
        .iter()
        .map(|block| match block {
            ContentBlock::Text(text) => text.text.clone(),
            other => format!("[{} content]", other.type_name()),
        })
        .collect();
    let message = parts.join("\n");
    if message.is_empty() {
        "tool result blocked by post-execute policy".to_owned()
    } else {
        message
    }
}

/// A `tools/pre-execute` listener. An `Err` fails the call closed.
pub trait PreExecuteHook: Send + Sync + 'static {
    /// Name used in fail-closed messages.
    fn name(&self) -> &str;
    /// Decides one call.
    fn decide(
        &self,
        execution: &Arc<ToolExecution>,
    ) -> BoxFuture<'static, Result<PreDecision, ToolError>>;
}

/// A monotonic guard after the gate: `Some(reason)` denies finally. An `Err` fails closed.
pub trait Guard: Send + Sync + 'static {
    /// Name used in fail-closed messages.
    fn name(&self) -> &str;
    /// Checks one call.
    fn check(
        &self,
        execution: &Arc<ToolExecution>,
    ) -> BoxFuture<'static, Result<Option<String>, ToolError>>;
}

/// What an approver is asked with.
#[derive(Clone, Debug, Default)]
pub struct ApprovalRequest {
    /// Why approval is asked (the first `ask`'s reason).
    pub reason: Option<String>,
    /// The rule a "don't ask again" answer would add.
    pub suggested_rule: Option<String>,
    /// How the permission rules decided the call, when a grant book is installed.
    pub decision: Option<dsh_tools_protocol::PermissionDecision>,
}

/// The user's answer and, for an answer with a scope, what it covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Approval {
    /// Run it (once, for the session, always), or not.
    pub outcome: ApprovalOutcome,
    /// A session grant covers only the asking agent.
    pub agent_only: bool,
    /// The rule the client chose in place of the suggested one.
    pub rule: Option<String>,
    /// Why no one could be asked (the call is then refused saying so).
    pub unavailable: Option<String>,
}

impl From<ApprovalOutcome> for Approval {
    fn from(outcome: ApprovalOutcome) -> Self {
        Approval {
            outcome,
            agent_only: false,
            rule: None,
            unavailable: None,
        }
    }
}

/// Services `ask` decisions.
pub trait Approver: Send + Sync + 'static {
    /// Asks the user about one call.
    fn approve(
        &self,
        execution: &Arc<ToolExecution>,
        request: ApprovalRequest,
    ) -> BoxFuture<'static, Approval>;
}

/// The answers with a scope a user gave: consulted before an `ask` reaches the approver, and
/// told of every answer that allows more than once.
pub trait GrantBook: Send + Sync + 'static {
    /// The grant that covers this call, if one does (then it is not asked again).
    fn covering(&self, execution: &ToolExecution) -> Option<String>;
    /// What the approver is told beside the reason: the suggested rule and the decision.
    fn describe(&self, execution: &ToolExecution, request: &mut ApprovalRequest);
    /// Records an `allowed-for-session` or `allowed-always` answer; an `Err` is logged
    /// (the call still runs: the user allowed it).
    fn record(
        &self,
        execution: &ToolExecution,
        request: &ApprovalRequest,
        approval: &Approval,
    ) -> Result<(), String>;
}

/// A `tools/post-execute` listener. An `Err` fails the call closed.
pub trait PostExecuteHook: Send + Sync + 'static {
    /// Name used in fail-closed messages.
    fn name(&self) -> &str;
    /// Inspects one result.
    fn decide(
        &self,
        execution: &Arc<ToolExecution>,
        result: &ToolExecutionResult,
    ) -> BoxFuture<'static, Result<PostDecision, ToolError>>;
}

/// Observes every final result (`tools/result`); observe-only and synchronous.
pub trait ResultObserver: Send + Sync + 'static {
    /// One final outcome.
    fn observe(&self, execution: &ToolExecution, result: &ToolExecutionResult);
}

/// One Code Mode sub-call's logged outcome (`tools/codeDispatch`), as the
/// `tools/code-dispatch-log` stage shapes it. Only this copy changes: the program already has
/// the canonical value.
#[derive(Clone, Debug, PartialEq)]
pub struct DispatchLog {
    /// `<parentCallId>:code:<n>`.
    pub id: String,
    /// The outer `run_code` call id.
    pub parent: String,
    /// Tool name.
    pub name: String,
    /// Arguments as submitted.
    pub arguments: Value,
    /// Final content of the sub-call (what the stage may replace).
    pub content: Vec<ContentBlock>,
    /// Failure flag.
    pub is_error: bool,
    /// Start and end, ms since the Unix epoch.
    pub time: (f64, f64),
}

/// A `tools/code-dispatch-log` listener: may replace the logged content of a sub-call. An
/// `Err` keeps the content as it was (the log is not the call: nothing fails).
pub trait DispatchLogHook: Send + Sync + 'static {
    /// Name used in the warning when it fails.
    fn name(&self) -> &str;
    /// `Some(content)` replaces the logged content; `outer` is the `run_code` call.
    fn shape(
        &self,
        outer: &Arc<ToolExecution>,
        log: &DispatchLog,
    ) -> BoxFuture<'static, Result<Option<Vec<ContentBlock>>, ToolError>>;
}

/// What a `tools/execute` wrapper sees: the call and its current (replaceable) signal.
#[derive(Clone)]
pub struct Dispatch {
    /// The call.
    pub execution: Arc<ToolExecution>,
    /// The operational signal; a wrapper may replace it (the caller's stays fused in).
    pub signal: Signal,
    /// The resolved tool's declared timeout.
    pub timeout_ms: Option<u64>,
    /// Whether the resolved tool declared itself idempotent.
    pub idempotent: bool,
}

/// The canonical dispatch outcome wrappers pass along (normalized after the chain).
pub type DispatchOutcome = Result<BodyOutput, ToolError>;

/// An around-dispatch wrapper (timeout, retry, metrics).
pub trait ExecuteWrapper: Send + Sync + 'static {
    /// Runs `next` (possibly several times, possibly with a replaced signal).
    fn wrap(
        &self,
        dispatch: Dispatch,
        next: super::dispatch::Next,
    ) -> BoxFuture<'static, DispatchOutcome>;
}

/// One registered listener with its ordering and scope.
pub(crate) struct Listener<T: ?Sized> {
    pub id: u64,
    pub order: i32,
    pub agent: Option<AgentId>,
    pub hook: Arc<T>,
}

impl<T: ?Sized> Clone for Listener<T> {
    fn clone(&self) -> Self {
        Listener {
            id: self.id,
            order: self.order,
            agent: self.agent.clone(),
            hook: self.hook.clone(),
        }
    }
}

impl<T: ?Sized> Listener<T> {
    /// Agent-scoped listeners see only that agent's calls.
    pub fn applies_to(&self, execution: &ToolExecution) -> bool {
        self.agent.is_none() || self.agent == execution.agent
    }
}

/// All listeners, copied on write so a call reads one consistent snapshot.
#[derive(Clone, Default)]
pub(crate) struct HookSet {
    pub pre: Vec<Listener<dyn PreExecuteHook>>,
    pub guards: Vec<Listener<dyn Guard>>,
    pub post: Vec<Listener<dyn PostExecuteHook>>,
    pub wrappers: Vec<Listener<dyn ExecuteWrapper>>,
    pub observers: Vec<Listener<dyn ResultObserver>>,
    pub dispatch_log: Vec<Listener<dyn DispatchLogHook>>,
    pub approver: Option<Arc<dyn Approver>>,
    pub grants: Option<Arc<dyn GrantBook>>,
}

impl HookSet {
    /// Removes listener `id` wherever it is.
    pub fn remove(&mut self, id: u64) -> bool {
        let before = self.len();
        self.pre.retain(|l| l.id != id);
        self.guards.retain(|l| l.id != id);
        self.post.retain(|l| l.id != id);
        self.wrappers.retain(|l| l.id != id);
        self.observers.retain(|l| l.id != id);
        self.dispatch_log.retain(|l| l.id != id);
        before != self.len()
    }

    /// Removes every listener scoped to one of `agents`.
    pub fn remove_agents(&mut self, agents: &[AgentId]) {
        let keep = |agent: &Option<AgentId>| agent.as_ref().is_none_or(|a| !agents.contains(a));
        self.pre.retain(|l| keep(&l.agent));
        self.guards.retain(|l| keep(&l.agent));
        self.post.retain(|l| keep(&l.agent));
        self.wrappers.retain(|l| keep(&l.agent));
        self.observers.retain(|l| keep(&l.agent));
        self.dispatch_log.retain(|l| keep(&l.agent));
    }

    fn len(&self) -> usize {
        self.pre.len()
            + self.guards.len()
            + self.post.len()
            + self.wrappers.len()
            + self.observers.len()
            + self.dispatch_log.len()
    }
}
