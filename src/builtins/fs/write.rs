//! `write`: creates or overwrites a file (and its missing parent directories) inside the root.

use super::ledger::Ledger;
use super::root::FsRoot;
use super::{existing_state, replace_file, written_state};
use crate::builtins::cards::{location, parse, success_meta};
use crate::builtins::typed::{self, TextRenderer};
use crate::cards::{DiffCallView, DiffResultView, FileDiff, ToolCallView, ToolResultView};
use crate::tool::{
    AgentId, Concurrency, DefinitionError, Render, ToolDefinition, ToolError, ToolRunContext,
};
use crate::tool::{CardMeta, DurableResult, ToolCards};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::json;
use std::sync::Arc;

#[derive(Deserialize)]
struct WriteArgs {
    file_path: String,
    content: String,
}

/// The canonical value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WriteOutput {
    /// Root-relative path.
    pub path: String,
    /// UTF-8 bytes written.
    pub bytes: u64,
    /// Whether the file did not exist before.
    pub created: bool,
}

/// The `write` definition; an existing file must have been read first (see `ledger`).
pub fn definition(
    root: Arc<FsRoot>,
    ledger: Arc<Ledger>,
) -> Result<ToolDefinition, DefinitionError> {
    let read_first = match ledger.enabled() {
        true => " An existing file must have been read with `read` first, and not changed since.",
        false => "",
    };
    let description = format!(
        "Write a file inside the workspace root {root}, replacing it if it exists and creating \
         missing parent directories.{read_first} Paths are relative to the root, or absolute \
         inside it.",
        root = root.path().display()
    );
    ToolDefinition::builder("write")
        .description(description)
        .parameters(json!({
            "file_path": { "type": "string", "required": true, "description": "The file to write (relative to the root, or absolute inside it)." },
            "content": { "type": "string", "required": true, "description": "The complete new content." }
        }))
        .output(json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "path": { "type": "string", "required": true },
                "bytes": { "type": "integer", "required": true },
                "created": { "type": "boolean", "required": true }
            }
        }))
        .render(Render::Custom(Arc::new(TextRenderer(render))))
        .concurrency(Concurrency::Exclusive)
        .cards(Arc::new(WriteCards))
        .card_meta(card_meta())
        .body(move |ctx: ToolRunContext| {
            let (root, ledger) = (root.clone(), ledger.clone());
            async move {
                let args: WriteArgs = typed::arguments(ctx.arguments())?;
                let scope = ctx.execution.agent.clone();
                let output = typed::blocking(move || write(&root, &ledger, &scope, &args)).await?;
                typed::output(&output)
            }
        })
}

fn write(
    root: &FsRoot,
    ledger: &Ledger,
    scope: &Option<AgentId>,
    args: &WriteArgs,
) -> Result<WriteOutput, ToolError> {
    let requested = &args.file_path;
    let confined = root.resolve_for_writing(requested)?;
    let content = args.content.as_bytes();
    if ledger.enabled()
        && let Some(current) = existing_state(root, &confined.path, requested)?
    {
        root.check_writable(&confined.path, requested)?;
        ledger.check(scope, &confined.path, current)?;
    }
    let created = replace_file(root, &confined.path, requested, content, true)?;
    ledger.record(
        scope,
        &confined.path,
        written_state(root, &confined.path, content),
    );
    Ok(WriteOutput {
        path: confined.display,
        bytes: args.content.len() as u64,
        created,
    })
}

fn render(output: &WriteOutput) -> String {
    let verb = if output.created {
        "Created"
    } else {
        "Overwrote"
    };
    format!("{verb} {} ({} bytes)", output.path, output.bytes)
}

/// `write`'s metadata.
#[derive(Serialize, Deserialize)]
struct WriteMeta {
    created: bool,
}

/// `write` persists whether it created the file.
fn card_meta() -> CardMeta {
    Arc::new(|_arguments, value| {
        let created = value.get("created")?.as_bool()?;
        serde_json::to_value(WriteMeta { created }).ok()
    })
}

#[derive(Deserialize)]
struct WriteCall {
    file_path: String,
    content: String,
}

/// `write`: the whole new file as a diff (no before-image is kept).
struct WriteCards;

impl WriteCards {
    fn diffs(call: WriteCall) -> Vec<FileDiff> {
        vec![FileDiff {
            path: call.file_path,
            old_text: None,
            new_text: call.content,
        }]
    }
}

impl ToolCards for WriteCards {
    fn call_card(&self, arguments: &Value) -> Option<Value> {
        let call: WriteCall = parse(arguments)?;
        ToolCallView::Diff(DiffCallView {
            title: format!("Write {}", call.file_path),
            locations: location(&call.file_path, None),
            diffs: Self::diffs(call),
        })
        .to_json()
    }

    fn result_card(&self, arguments: &Value, result: &DurableResult) -> Option<Value> {
        let meta: WriteMeta = success_meta(result)?;
        let call: WriteCall = parse(arguments)?;
        let verb = if meta.created { "Created" } else { "Wrote" };
        ToolResultView::Diff(DiffResultView {
            title: Some(format!("{verb} {}", call.file_path)),
            diffs: Self::diffs(call),
        })
        .to_json()
    }
}
