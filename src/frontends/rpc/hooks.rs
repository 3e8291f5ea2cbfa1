//! Client policy over the wire: `hooks/subscribe` listeners that ask the client
//! (`hooks/preExecute`, `hooks/guard`, `hooks/postExecute`, `hooks/codeDispatchLog`) and
//! the `client/approve` approver. Every failure to answer properly fails the call closed,
//! except in the dispatch-log stage, where it keeps the logged content.

use super::convert;
use super::params;
use crate::pipeline::hooks::{
    Approval, ApprovalOutcome, ApprovalRequest, Approver, DispatchLog, DispatchLogHook, Guard,
    PostDecision, PostExecuteHook, PreDecision, PreExecuteHook,
};
use crate::tool::{
    ContentBlock, HarnessCode, Signal, ToolError, ToolExecution, ToolExecutionResult,
};
use crate::transport::{Peer, PeerError};
use dsh_tools_protocol as wire;
use futures::future::BoxFuture;
use serde::Deserialize;
use serde::de::{DeserializeOwned, IgnoredAny};
use serde_json::value::RawValue;
use std::sync::Arc;

/// One client subscription to a hookable event.
pub struct ClientHook {
    /// `hook:<n>`, sent back with every request.
    pub subscription: String,
    /// The client.
    pub peer: Arc<Peer>,
    /// How long the client may take.
    pub timeout_ms: u64,
}

impl ClientHook {
    /// Asks the client; any failure to answer is an error naming what went wrong. A call
    /// cancelled while it waited, with no answer within the grace, is the abort itself
    /// ([`HarnessCode::Aborted`]), which the pipeline tells apart from a failing hook.
    fn ask(
        &self,
        method: &'static str,
        params: serde_json::Value,
        signal: Signal,
    ) -> BoxFuture<'static, Result<Box<RawValue>, ToolError>> {
        let (peer, timeout) = (self.peer.clone(), self.timeout_ms);
        Box::pin(async move {
            peer.request(method, &params, signal.aborted(), Some(timeout))
                .await
                .map_err(|e| match e {
                    PeerError::Cancelled => {
                        ToolError::harness(HarnessCode::Aborted, "tool call aborted")
                    }
                    other => ToolError::new(other.to_string()),
                })
        })
    }

    fn params(&self, execution: &ToolExecution) -> serde_json::Value {
        serde_json::json!({ "subscription": self.subscription, "execution": convert::execution_view(execution) })
    }
}

impl PreExecuteHook for ClientHook {
    fn name(&self) -> &str {
        &self.subscription
    }

    fn decide(
        &self,
        execution: &Arc<ToolExecution>,
    ) -> BoxFuture<'static, Result<PreDecision, ToolError>> {
        let answer = self.ask(
            "hooks/preExecute",
            self.params(execution),
            execution.signal.clone(),
        );
        Box::pin(async move {
            let raw = answer.await?;
            let decision = decode::<wire::PreToolDecision>(&raw)?;
            if decision == wire::PreToolDecision::Allow {
                // serde ignores extra keys next to a unit variant's tag; the schema does not.
                decode::<BareAllow>(&raw)?;
            }
            Ok(convert::pre_decision(decision))
        })
    }
}

impl Guard for ClientHook {
    fn name(&self) -> &str {
        &self.subscription
    }

    fn check(
        &self,
        execution: &Arc<ToolExecution>,
    ) -> BoxFuture<'static, Result<Option<String>, ToolError>> {
        let answer = self.ask(
            "hooks/guard",
            self.params(execution),
            execution.signal.clone(),
        );
        Box::pin(async move {
            let raw = answer.await?;
            decode::<wire::GuardDecision>(&raw).map(|decision| decision.deny)
        })
    }
}

impl PostExecuteHook for ClientHook {
    fn name(&self) -> &str {
        &self.subscription
    }

    fn decide(
        &self,
        execution: &Arc<ToolExecution>,
        result: &ToolExecutionResult,
    ) -> BoxFuture<'static, Result<PostDecision, ToolError>> {
        let mut params = self.params(execution);
        params["result"] = serde_json::to_value(convert::result(result)).unwrap_or_default();
        let answer = self.ask("hooks/postExecute", params, execution.signal.clone());
        Box::pin(async move {
            let raw = answer.await?;
            let mut decision = decode::<wire::PostToolDecision>(&raw)?;
            if let wire::PostToolDecision::Accept {
                value: value @ None,
                ..
            } = &mut decision
                && decode::<ValuePresence>(&raw)?.value.is_some()
            {
                // `"value": null` replaces the value with null; only an absent key keeps it.
                *value = Some(serde_json::Value::Null);
            }
            Ok(convert::post_decision(decision))
        })
    }
}

impl DispatchLogHook for ClientHook {
    fn name(&self) -> &str {
        &self.subscription
    }

    fn shape(
        &self,
        outer: &Arc<ToolExecution>,
        log: &DispatchLog,
    ) -> BoxFuture<'static, Result<Option<Vec<ContentBlock>>, ToolError>> {
        let params = wire::CodeDispatchLogParams {
            subscription: self.subscription.clone(),
            dispatch: convert::dispatch_notification(log.clone()),
        };
        let params = serde_json::to_value(params).unwrap_or_default();
        // The outer call's signal: sub-calls' own signals fire when the run settles, which
        // is exactly when the last logs are still being shaped.
        let answer = self.ask("hooks/codeDispatchLog", params, outer.signal.clone());
        Box::pin(async move {
            let raw = answer.await?;
            decode::<wire::CodeDispatchLogResult>(&raw).map(|answer| answer.content)
        })
    }
}

/// Parses a client's answer; the message speaks of an answer, not of request params.
fn decode<T: DeserializeOwned>(raw: &RawValue) -> Result<T, ToolError> {
    params::from_str::<T>(raw.get()).map_err(|e| {
        let detail = e.message();
        let detail = detail.strip_prefix("invalid params: ").unwrap_or(detail);
        ToolError::new(format!("invalid answer: {detail}"))
    })
}

/// `{ "kind": "allow" }` and nothing else.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BareAllow {
    #[serde(rename = "kind")]
    _kind: IgnoredAny,
}

/// Whether an accept decision has a `value` key at all (serde reads `null` as absent).
#[derive(Deserialize)]
struct ValuePresence {
    #[serde(default, deserialize_with = "present")]
    value: Option<()>,
}

fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<()>, D::Error> {
    IgnoredAny::deserialize(deserializer).map(|_| Some(()))
}

/// Services `ask` through `client/approve`; anything but an answer that allows denies.
pub struct ClientApprover(pub Arc<Peer>);

impl Approver for ClientApprover {
    fn approve(
        &self,
        execution: &Arc<ToolExecution>,
        request: ApprovalRequest,
    ) -> BoxFuture<'static, Approval> {
        let peer = self.0.clone();
        let params = wire::ApproveParams {
            execution: convert::execution_view(execution),
            reason: request.reason,
            suggested_rule: request.suggested_rule,
            decision: request.decision,
        };
        let signal = execution.signal.clone();
        Box::pin(async move {
            let Ok(raw) = peer
                .request("client/approve", &params, signal.aborted(), None)
                .await
            else {
                return ApprovalOutcome::Cancelled.into();
            };
            params::from_str::<wire::ApproveResult>(raw.get()).map_or(
                ApprovalOutcome::Cancelled.into(),
                |answer| Approval {
                    outcome: answer.outcome,
                    agent_only: answer.agent_only,
                    rule: answer.rule,
                    unavailable: None,
                },
            )
        })
    }
}
