//! Client policy over the wire: `hooks/subscribe` listeners that ask the client
//! (`hooks/preExecute`, `hooks/guard`, `hooks/postExecute`) and the `client/approve`
//! approver. Every failure to answer properly fails the call closed.

use super::convert;
use super::params;
use crate::pipeline::hooks::{
    ApprovalOutcome, Approver, Guard, PostDecision, PostExecuteHook, PreDecision, PreExecuteHook,
};
use crate::tool::{Signal, ToolError, ToolExecution, ToolExecutionResult};
use crate::transport::Peer;
use dsh_tools_protocol as wire;
use futures::future::BoxFuture;
use serde::de::DeserializeOwned;
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
    /// Asks the client and parses its answer; any failure is an error naming the subscription.
    fn ask<T: DeserializeOwned + Send + 'static>(
        &self,
        method: &'static str,
        params: serde_json::Value,
        signal: Signal,
    ) -> BoxFuture<'static, Result<T, ToolError>> {
        let (peer, timeout) = (self.peer.clone(), self.timeout_ms);
        Box::pin(async move {
            let raw = peer
                .request(method, &params, &signal, Some(timeout))
                .await
                .map_err(|e| ToolError::new(e.to_string()))?;
            params::from_str::<T>(raw.get())
                .map_err(|e| ToolError::new(format!("invalid answer: {}", e.message())))
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
        let answer = self.ask::<wire::PreToolDecision>(
            "hooks/preExecute",
            self.params(execution),
            execution.signal.clone(),
        );
        Box::pin(async move { answer.await.map(convert::pre_decision) })
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
        let answer = self.ask::<wire::GuardDecision>(
            "hooks/guard",
            self.params(execution),
            execution.signal.clone(),
        );
        Box::pin(async move { answer.await.map(|decision| decision.deny) })
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
        let answer = self.ask::<wire::PostToolDecision>(
            "hooks/postExecute",
            params,
            execution.signal.clone(),
        );
        Box::pin(async move { answer.await.map(convert::post_decision) })
    }
}

/// Services `ask` through `client/approve`; anything but `allowed-once` denies.
pub struct ClientApprover(pub Arc<Peer>);

impl Approver for ClientApprover {
    fn approve(
        &self,
        execution: &Arc<ToolExecution>,
        reason: Option<String>,
    ) -> BoxFuture<'static, ApprovalOutcome> {
        let peer = self.0.clone();
        let params = wire::ApproveParams {
            execution: convert::execution_view(execution),
            reason,
        };
        let signal = execution.signal.clone();
        Box::pin(async move {
            let Ok(raw) = peer.request("client/approve", &params, &signal, None).await else {
                return ApprovalOutcome::Cancelled;
            };
            params::from_str::<wire::ApproveResult>(raw.get())
                .map_or(ApprovalOutcome::Cancelled, |answer| answer.outcome)
        })
    }
}
