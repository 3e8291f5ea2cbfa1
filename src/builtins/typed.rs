//! Glue between the JSON a built-in tool sees and the typed Rust values it works with:
//! arguments in, canonical value out, text rendering, blocking file work off the runtime.

use crate::tool::{
    BodyOutput, CardMeta, ContentBlock, HarnessCode, Renderer, ToolError, ToolExecution,
};
use futures::future::BoxFuture;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::Arc;

/// Arguments as the tool's own type (the host already validated them against the schema).
pub fn arguments<T: DeserializeOwned>(value: &Value) -> Result<T, ToolError> {
    T::deserialize(value).map_err(|e| ToolError::new(format!("invalid arguments: {e}")))
}

/// A typed result as the body's canonical value.
pub fn output(value: &impl Serialize) -> Result<BodyOutput, ToolError> {
    serde_json::to_value(value)
        .map(BodyOutput::from)
        .map_err(|e| ToolError::new(format!("cannot encode the result: {e}")))
}

/// Runs file-system work on the blocking pool so a slow disk never stalls other calls.
pub async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::new(format!("the file operation failed: {e}")))?
}

/// The failure a body reports when its signal fired mid-work.
pub fn aborted() -> ToolError {
    ToolError::harness(HarnessCode::Aborted, "tool call aborted")
}

/// Presentation metadata that is the canonical value itself (the value is execution-local;
/// the metadata is what persists and replays).
pub fn value_as_meta() -> CardMeta {
    Arc::new(|_arguments, value| Some(value.clone()))
}

/// Renders a typed canonical value into one text block for the model.
pub struct TextRenderer<T>(pub fn(&T) -> String);

impl<T: DeserializeOwned + 'static> Renderer for TextRenderer<T> {
    fn render(
        &self,
        _execution: &ToolExecution,
        _registration: &str,
        value: &Value,
    ) -> BoxFuture<'static, Result<Vec<ContentBlock>, ToolError>> {
        let render = self.0;
        rendered(value, |typed: &T| vec![ContentBlock::text(render(typed))])
    }
}

/// Renders a typed canonical value into content blocks (text and images).
pub struct BlocksRenderer<T>(pub fn(&T) -> Vec<ContentBlock>);

impl<T: DeserializeOwned + 'static> Renderer for BlocksRenderer<T> {
    fn render(
        &self,
        _execution: &ToolExecution,
        _registration: &str,
        value: &Value,
    ) -> BoxFuture<'static, Result<Vec<ContentBlock>, ToolError>> {
        rendered(value, self.0)
    }
}

/// `value` as `T`, rendered by `render`.
fn rendered<T: DeserializeOwned>(
    value: &Value,
    render: impl FnOnce(&T) -> Vec<ContentBlock>,
) -> BoxFuture<'static, Result<Vec<ContentBlock>, ToolError>> {
    let blocks = T::deserialize(value)
        .map(|typed| render(&typed))
        .map_err(|e| ToolError::new(format!("cannot render the result: {e}")));
    Box::pin(async move { blocks })
}
