//! The normalized outcome of one execution and the harness error codes it can carry.

use super::{ContentBlock, ContextMessage};
use serde_json::Value;
use std::fmt;
use std::sync::Arc;

/// Codes of failures the harness itself produces (`error.info.code` on the wire).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HarnessCode {
    /// No visible tool has that name.
    UnknownTool,
    /// The arguments failed validation or were not lossless JSON.
    InvalidArgs,
    /// The body returned a value its output declaration rejects.
    InvalidToolOutput,
    /// Cancelled before the body started.
    AbortedBeforeDispatch,
    /// Cancelled after the body started.
    Aborted,
    /// An enforced deadline passed.
    ToolTimeout,
    /// A Code Mode program failed.
    CodeRunFailed,
    /// A pipeline stage (hook, wrapper, renderer) failed.
    PipelineFailed,
}

impl HarnessCode {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            HarnessCode::UnknownTool => "UNKNOWN_TOOL",
            HarnessCode::InvalidArgs => "INVALID_ARGS",
            HarnessCode::InvalidToolOutput => "INVALID_TOOL_OUTPUT",
            HarnessCode::AbortedBeforeDispatch => "ABORTED_BEFORE_DISPATCH",
            HarnessCode::Aborted => "ABORTED",
            HarnessCode::ToolTimeout => "TOOL_TIMEOUT",
            HarnessCode::CodeRunFailed => "CODE_RUN_FAILED",
            HarnessCode::PipelineFailed => "PIPELINE_FAILED",
        }
    }

    /// The error class name reported with the code.
    pub fn class_name(self) -> &'static str {
        match self {
            HarnessCode::InvalidArgs => "ToolArgsError",
            HarnessCode::CodeRunFailed => "CodeRunFailedError",
            _ => "HarnessError",
        }
    }
}

impl fmt::Display for HarnessCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failure as a tool body, hook or stage reports it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    /// What the model reads after `Error: `.
    pub message: String,
    /// Set for harness-produced failures.
    pub code: Option<HarnessCode>,
}

impl ToolError {
    /// A plain tool failure (no harness code).
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            code: None,
        }
    }

    /// Whether this is the call's cancellation itself (`ABORTED`, `ABORTED_BEFORE_DISPATCH`)
    /// rather than a failure of its own: a listener reports it when the call was cancelled
    /// while it waited and nothing else came of it.
    pub fn is_abort(&self) -> bool {
        matches!(
            self.code,
            Some(HarnessCode::Aborted | HarnessCode::AbortedBeforeDispatch)
        )
    }

    /// A harness failure.
    pub fn harness(code: HarnessCode, message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            code: Some(code),
        }
    }
}

/// Success or failure, without the presentation fields.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The canonical value, validated and frozen.
    Success(Arc<Value>),
    /// The failure.
    Failure(ToolError),
}

/// The normalized result of one execution (the seed's `ToolExecutionResult`).
#[derive(Clone, Debug, PartialEq)]
pub struct ToolExecutionResult {
    /// Success value or failure.
    pub outcome: Outcome,
    /// Model-facing content.
    pub content: Vec<ContentBlock>,
    /// Presentation metadata persisted with the result.
    pub meta: Option<Value>,
    /// Contexts the loop appends after the result, in order.
    pub additional_contexts: Vec<ContextMessage>,
    /// An MCP server's `structuredContent`, kept whenever it sent one (successes only): the
    /// value of a tool with an `outputSchema` is this object, but a tool without one has a
    /// text value, and this is the only place the server's object survives. It describes
    /// the content, so a post-execute rewrite of the content or value drops it (unless the
    /// rewrite sets its own); spill keeps it, as it keeps the value.
    pub structured_content: Option<Value>,
}

impl ToolExecutionResult {
    /// A failure whose content is exactly `Error: <message>`.
    pub fn failure(error: ToolError) -> Self {
        let content = vec![ContentBlock::text(format!("Error: {}", error.message))];
        ToolExecutionResult {
            outcome: Outcome::Failure(error),
            content,
            meta: None,
            additional_contexts: Vec::new(),
            structured_content: None,
        }
    }

    /// A harness failure.
    pub fn harness(code: HarnessCode, message: impl Into<String>) -> Self {
        Self::failure(ToolError::harness(code, message))
    }

    /// Whether this is a failure.
    pub fn is_error(&self) -> bool {
        matches!(self.outcome, Outcome::Failure(_))
    }

    /// The canonical value of a success.
    pub fn value(&self) -> Option<&Value> {
        match &self.outcome {
            Outcome::Success(value) => Some(value),
            Outcome::Failure(_) => None,
        }
    }

    /// The failure, if any.
    pub fn error(&self) -> Option<&ToolError> {
        match &self.outcome {
            Outcome::Success(_) => None,
            Outcome::Failure(error) => Some(error),
        }
    }

    /// The harness code of a failure.
    pub fn code(&self) -> Option<HarnessCode> {
        self.error().and_then(|e| e.code)
    }

    /// The concatenated text of all text blocks (what a text-only model reads).
    pub fn text(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            if let ContentBlock::Text(t) = block {
                out.push_str(&t.text);
            }
        }
        out
    }
}
