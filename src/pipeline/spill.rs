//! The built-in spill policy. A direct call's result whose model-facing text exceeds
//! `spill.thresholdBytes` keeps its value; its content becomes a preview and a locator and
//! its `meta` gains `spill: { path, bytes }`. The same bound applies, last, in the
//! `tools/code-dispatch-log` stage to the logged copy of each Code Mode sub-call (whose
//! value the program already has). Saving runs on a blocking thread; a fault falls back to
//! the preview with a note and a warning, never a failed call.

use super::dispatch::contained;
use super::hooks::{DispatchLog, DispatchLogHook};
use super::{ListenerId, ToolRuntime};
use crate::spill::preview::{READ_MORE, compose, saved_marker, unsaved_marker};
use crate::spill::{SpillRef, SpillStore};
use crate::tool::{AgentId, ContentBlock, ToolExecution, ToolExecutionResult};
use serde_json::{Value, json};
use std::sync::Arc;

impl ToolRuntime {
    /// The spill files of this runtime.
    pub fn spill(&self) -> &Arc<SpillStore> {
        &self.spill
    }

    /// Bounds a direct call's result (sub-calls keep theirs: only the outer `run_code`
    /// result re-enters model context; their logged copy is bounded by the dispatch-log
    /// stage).
    pub(crate) async fn spill_result(
        &self,
        execution: &ToolExecution,
        result: ToolExecutionResult,
    ) -> ToolExecutionResult {
        if execution.parent.is_some() {
            return result;
        }
        self.spill_content(&execution.name, result).await
    }

    /// The built-in spill policy over one result of tool `name`, as `execute` applies it
    /// after post-execute. Public so embedders and benches can apply it to results of
    /// their own.
    pub async fn spill_content(
        &self,
        name: &str,
        mut result: ToolExecutionResult,
    ) -> ToolExecutionResult {
        let Some(threshold) = self.spill.threshold() else {
            return result;
        };
        if text_bytes(&result.content) <= threshold {
            return result;
        }
        let content = std::mem::take(&mut result.content);
        let (content, saved) = bound(&self.spill, name, content, threshold).await;
        result.content = content;
        if let Some(saved) = saved {
            result.meta = with_spill(result.meta.take(), &saved);
        }
        result
    }

    /// Adds a `tools/code-dispatch-log` listener (lower `order` first; the built-in bound
    /// runs after all of them).
    pub fn add_dispatch_log(
        &self,
        order: i32,
        agent: Option<AgentId>,
        hook: Arc<dyn DispatchLogHook>,
    ) -> ListenerId {
        self.hooks
            .add(order, agent, hook, |set| &mut set.dispatch_log)
    }

    /// Whether the dispatch-log stage could change this content: a listener applies to
    /// `outer`, or the text is over the threshold. Otherwise the log goes out as it is,
    /// without a wait.
    pub fn dispatch_log_applies(&self, outer: &ToolExecution, content: &[ContentBlock]) -> bool {
        let over = self
            .spill
            .threshold()
            .is_some_and(|threshold| text_bytes(content) > threshold);
        over || {
            let hooks = self.hooks.snapshot();
            hooks.dispatch_log.iter().any(|l| l.applies_to(outer))
        }
    }

    /// The `tools/code-dispatch-log` waterfall: listeners in order (a failing one keeps the
    /// content and is logged), then the built-in bound.
    pub async fn shape_dispatch_log(
        &self,
        outer: &Arc<ToolExecution>,
        mut log: DispatchLog,
    ) -> DispatchLog {
        let hooks = self.hooks.snapshot();
        for listener in hooks.dispatch_log.iter().filter(|l| l.applies_to(outer)) {
            match contained(async { listener.hook.shape(outer, &log).await }).await {
                Ok(Some(content)) => log.content = content,
                Ok(None) => {}
                Err(error) => tracing::warn!(
                    "tools/code-dispatch-log hook \"{}\" failed ({}); the logged content of {} is kept",
                    listener.hook.name(),
                    error.message,
                    log.id
                ),
            }
        }
        if let Some(threshold) = self.spill.threshold()
            && text_bytes(&log.content) > threshold
        {
            let content = std::mem::take(&mut log.content);
            log.content = bound(&self.spill, &log.name, content, threshold).await.0;
        }
        log
    }
}

/// Bytes of model-facing text.
fn text_bytes(content: &[ContentBlock]) -> usize {
    content
        .iter()
        .map(|block| match block {
            ContentBlock::Text(text) => text.text.len(),
            _ => 0,
        })
        .sum()
}

/// Saves the text of `content` (its text blocks, concatenated) and returns the preview
/// block followed by the non-text blocks, and the file when it was saved.
async fn bound(
    store: &Arc<SpillStore>,
    label: &str,
    content: Vec<ContentBlock>,
    threshold: usize,
) -> (Vec<ContentBlock>, Option<SpillRef>) {
    let (store, label) = (store.clone(), label.to_owned());
    let total = text_bytes(&content);
    let (answer, answered) = tokio::sync::oneshot::channel();
    let work = move || {
        let (text, others) = split(content);
        let preview = store.preview_bytes();
        let saved = store.save(&label, text.as_bytes());
        let bytes = text.len() as u64;
        let previewed = match &saved {
            Ok(saved) => compose(
                &text,
                preview,
                threshold,
                |shown| saved_marker("text", shown, bytes, saved.lines, &saved.path),
                Some(READ_MORE),
            ),
            Err(fault) => {
                tracing::warn!("spill: the result of {label} was not saved: {fault}");
                compose(
                    &text,
                    preview,
                    threshold,
                    |shown| unsaved_marker("text", shown, bytes, &fault.0),
                    None,
                )
            }
        };
        let mut blocks = vec![ContentBlock::text(previewed)];
        blocks.extend(others);
        let _ = answer.send((blocks, saved.ok()));
        // Freeing the whole text (megabytes, often allocated by another thread) happens
        // after the answer: the call does not wait for it.
        drop(text);
    };
    drop(tokio::task::spawn_blocking(work));
    match answered.await {
        Ok(bounded) => bounded,
        Err(_) => {
            tracing::warn!("spill: saving a result of {total} bytes failed");
            let note =
                format!("[... {total} bytes not shown and not saved (the spill failed) ...]");
            (vec![ContentBlock::text(note)], None)
        }
    }
}

/// The concatenated text (moved, not copied, when there is one text block) and the other
/// blocks in order.
fn split(content: Vec<ContentBlock>) -> (String, Vec<ContentBlock>) {
    let mut text = String::new();
    let mut others = Vec::new();
    for block in content {
        match block {
            ContentBlock::Text(block) if text.is_empty() => text = block.text,
            ContentBlock::Text(block) => text.push_str(&block.text),
            other => others.push(other),
        }
    }
    (text, others)
}

/// `meta` with `spill: { path, bytes }` (a meta that is not an object is kept as it is:
/// the content still names the file). A spill the tool named already (a `bash` stream's)
/// moves into `spill.more`, so every spill file of a result is found in one place.
fn with_spill(meta: Option<Value>, saved: &SpillRef) -> Option<Value> {
    let mut spill = json!({ "path": saved.path.display().to_string(), "bytes": saved.bytes });
    match meta {
        None => Some(json!({ "spill": spill })),
        Some(Value::Object(mut object)) => {
            if let Some(Value::Object(mut earlier)) = object.remove("spill") {
                let mut more = match earlier.remove("more") {
                    Some(Value::Array(more)) => more,
                    _ => Vec::new(),
                };
                more.insert(0, Value::Object(earlier));
                spill["more"] = Value::Array(more);
            }
            object.insert("spill".into(), spill);
            Some(Value::Object(object))
        }
        Some(other) => Some(other),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_spill_the_tool_named_moves_into_more_beside_the_pipelines() {
        let saved = SpillRef {
            path: "/s/result.txt".into(),
            bytes: 9,
            lines: 1,
        };
        let tool = json!({ "exitCode": 0, "spill": {
            "path": "/s/out", "bytes": 5, "stream": "stdout",
            "more": [{ "path": "/s/err", "bytes": 3, "stream": "stderr" }] } });
        assert_eq!(
            with_spill(Some(tool), &saved),
            Some(json!({ "exitCode": 0, "spill": {
                "path": "/s/result.txt", "bytes": 9,
                "more": [
                    { "path": "/s/out", "bytes": 5, "stream": "stdout" },
                    { "path": "/s/err", "bytes": 3, "stream": "stderr" }
                ] } }))
        );
        assert_eq!(
            with_spill(None, &saved),
            Some(json!({ "spill": { "path": "/s/result.txt", "bytes": 9 } }))
        );
    }
}
