//! The post-execute waterfall: each listener's decision over the dispatched result (accept,
//! replacing content, value or `structuredContent`; or block), in order, failing closed.

use super::ToolRuntime;
use super::dispatch::contained;
use super::execute::{canonical_result, keep_contexts, with_structured_content};
use super::hooks::{BlockFeedback, HookSet, PostDecision, feedback_message};
use crate::registry::RegisteredTool;
use crate::tool::{HarnessCode, ToolError, ToolExecution, ToolExecutionResult};
use std::sync::Arc;

impl ToolRuntime {
    /// The post-execute waterfall over a dispatched result.
    pub(super) async fn post_execute(
        &self,
        execution: &Arc<ToolExecution>,
        tool: &RegisteredTool,
        mut result: ToolExecutionResult,
        hooks: &HookSet,
    ) -> ToolExecutionResult {
        let definition = &tool.definition;
        for listener in hooks.post.iter().filter(|l| l.applies_to(execution)) {
            let decision =
                match contained(async { listener.hook.decide(execution, &result).await }).await {
                    Ok(decision) => decision,
                    // The call was cancelled while the hook was asked and nothing came of it:
                    // after dispatch that replaces only a success (a failure stays).
                    Err(error) if error.is_abort() => return aborted_unless_failed(result),
                    Err(error) => {
                        let hook = listener.hook.name();
                        let message = format!(
                            "tools/post-execute hook \"{hook}\" failed: {}",
                            error.message
                        );
                        return keep_contexts(
                            result,
                            ToolExecutionResult::failure(ToolError::new(message)),
                        );
                    }
                };
            match decision {
                PostDecision::Accept {
                    content: Some(_),
                    value: Some(_),
                    ..
                } => {
                    let message =
                        "tools/post-execute accept decision cannot replace both value and content";
                    return keep_contexts(
                        result,
                        ToolExecutionResult::failure(ToolError::new(message)),
                    );
                }
                PostDecision::Accept { value: Some(_), .. } if result.is_error() => {
                    let message = "tools/post-execute cannot replace the value of a failed result";
                    return keep_contexts(
                        result,
                        ToolExecutionResult::failure(ToolError::new(message)),
                    );
                }
                PostDecision::Accept {
                    structured_content: Some(_),
                    ..
                } if result.is_error() => {
                    let message =
                        "tools/post-execute cannot set the structuredContent of a failed result";
                    return keep_contexts(
                        result,
                        ToolExecutionResult::failure(ToolError::new(message)),
                    );
                }
                PostDecision::Accept {
                    content,
                    value,
                    structured_content,
                    mut additional_contexts,
                } => {
                    // A new value starts a new result, without the server's structuredContent.
                    if let Some(value) = value {
                        let replaced = canonical_result(
                            execution,
                            &tool.registration,
                            definition,
                            value,
                            None,
                            None,
                        )
                        .await;
                        result = keep_contexts(result, replaced);
                    }
                    if let Some(content) = content {
                        // The server's structuredContent described the content it replaces.
                        result.content = content;
                        result.structured_content = None;
                    }
                    if structured_content.is_some() {
                        result =
                            with_structured_content(&execution.name, result, structured_content);
                    }
                    result.additional_contexts.append(&mut additional_contexts);
                }
                PostDecision::Block {
                    feedback,
                    additional_contexts,
                } => {
                    let mut blocked = match feedback {
                        BlockFeedback::Text(text) => {
                            ToolExecutionResult::failure(ToolError::new(text))
                        }
                        BlockFeedback::Blocks(blocks) => {
                            let message = feedback_message(&blocks);
                            let mut failure = ToolExecutionResult::failure(ToolError::new(message));
                            failure.content = blocks;
                            failure
                        }
                    };
                    blocked.additional_contexts = additional_contexts;
                    return blocked;
                }
            }
        }
        // A decision that came in after the call was cancelled still applies (a block stays a
        // block), but a success it left becomes ABORTED, keeping its contexts.
        if execution.signal.is_aborted() {
            return aborted_unless_failed(result);
        }
        result
    }
}

/// `ABORTED` in place of a success (keeping its contexts); a failure stays more specific.
fn aborted_unless_failed(result: ToolExecutionResult) -> ToolExecutionResult {
    if result.is_error() {
        return result;
    }
    let aborted = ToolExecutionResult::harness(HarnessCode::Aborted, "tool call aborted");
    keep_contexts(result, aborted)
}
