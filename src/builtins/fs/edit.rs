//! `edit`: exact-string replacement in one file; refuses a missing or ambiguous match unless
//! `replace_all` says every occurrence is meant.

use super::ledger::{Ledger, Seen};
use super::root::FsRoot;
use super::{file_error, regular_file, replace_file, written_state};
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
use std::io::Read;
use std::sync::Arc;

#[derive(Deserialize)]
struct EditArgs {
    file_path: String,
    old_string: String,
    new_string: String,
    replace_all: Option<bool>,
}

/// The canonical value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EditOutput {
    /// Root-relative path.
    pub path: String,
    /// Occurrences replaced.
    pub replacements: u64,
}

/// The `edit` definition; the file must have been read first (see `ledger`).
pub fn definition(
    root: Arc<FsRoot>,
    ledger: Arc<Ledger>,
) -> Result<ToolDefinition, DefinitionError> {
    let read_first = match ledger.enabled() {
        true => " The file must have been read with `read` first, and not changed since.",
        false => "",
    };
    let description = format!(
        "Replace an exact string in a file inside the workspace root {root}. `old_string` must \
         occur exactly once unless `replace_all` is true; include surrounding lines to make it \
         unique.{read_first} Paths are relative to the root, or absolute inside it.",
        root = root.path().display()
    );
    ToolDefinition::builder("edit")
        .description(description)
        .parameters(json!({
            "file_path": { "type": "string", "required": true, "description": "The file to edit (relative to the root, or absolute inside it)." },
            "old_string": { "type": "string", "required": true, "description": "The exact text to replace." },
            "new_string": { "type": "string", "required": true, "description": "The replacement text." },
            "replace_all": { "type": "boolean", "description": "Replace every occurrence (default false)." }
        }))
        .output(json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "path": { "type": "string", "required": true },
                "replacements": { "type": "integer", "required": true }
            }
        }))
        .render(Render::Custom(Arc::new(TextRenderer(render))))
        .concurrency(Concurrency::Exclusive)
        .cards(Arc::new(EditCards))
        .card_meta(card_meta())
        .body(move |ctx: ToolRunContext| {
            let (root, ledger) = (root.clone(), ledger.clone());
            async move {
                let args: EditArgs = typed::arguments(ctx.arguments())?;
                let scope = ctx.execution.agent.clone();
                let output = typed::blocking(move || edit(&root, &ledger, &scope, &args)).await?;
                typed::output(&output)
            }
        })
}

fn edit(
    root: &FsRoot,
    ledger: &Ledger,
    scope: &Option<AgentId>,
    args: &EditArgs,
) -> Result<EditOutput, ToolError> {
    let requested = &args.file_path;
    let (old, new) = (&args.old_string, &args.new_string);
    if old.is_empty() {
        return Err(ToolError::new(
            "old_string must not be empty (use write to create a file)",
        ));
    }
    if old == new {
        return Err(ToolError::new(
            "old_string and new_string are identical; there is nothing to change",
        ));
    }
    let confined = root.resolve_for_writing(requested)?;
    let mut bytes = Vec::new();
    let (mut file, _) = regular_file(root, &confined.path, requested)?;
    let meta = file
        .metadata()
        .map_err(|e| file_error("read", requested, &e))?;
    file.read_to_end(&mut bytes)
        .map_err(|e| file_error("read", requested, &e))?;
    if ledger.enabled() {
        root.check_writable(&confined.path, requested)?;
        ledger.check(scope, &confined.path, Seen::of(&bytes, Some(&meta)))?;
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| ToolError::new(format!("\"{requested}\" is not UTF-8 text")))?;
    let found = text.matches(old.as_str()).count();
    let replace_all = args.replace_all.unwrap_or(false);
    let edited = match found {
        0 => {
            return Err(ToolError::new(format!(
                "old_string was not found in \"{requested}\""
            )));
        }
        1 => text.replacen(old.as_str(), new, 1),
        _ if replace_all => text.replace(old.as_str(), new),
        several => {
            return Err(ToolError::new(format!(
                "old_string occurs {several} times in \"{requested}\"; include more surrounding \
                 context to make it unique, or set replace_all to replace every occurrence"
            )));
        }
    };
    replace_file(root, &confined.path, requested, edited.as_bytes(), false)?;
    let after = written_state(root, &confined.path, edited.as_bytes());
    ledger.record(scope, &confined.path, after);
    Ok(EditOutput {
        path: confined.display,
        replacements: found as u64,
    })
}

fn render(output: &EditOutput) -> String {
    let plural = if output.replacements == 1 { "" } else { "s" };
    format!(
        "Edited {} ({} replacement{plural})",
        output.path, output.replacements
    )
}

/// `edit`'s metadata.
#[derive(Serialize, Deserialize)]
struct EditMeta {
    replacements: u64,
}

/// `edit` persists how many occurrences it replaced.
fn card_meta() -> CardMeta {
    Arc::new(|_arguments, value| {
        let replacements = value.get("replacements")?.as_u64()?;
        serde_json::to_value(EditMeta { replacements }).ok()
    })
}

#[derive(Deserialize)]
struct EditCall {
    file_path: String,
    old_string: String,
    new_string: String,
}

/// `edit`: the replaced string and its replacement.
struct EditCards;

impl EditCards {
    fn diffs(call: EditCall) -> Vec<FileDiff> {
        vec![FileDiff {
            path: call.file_path,
            old_text: Some(call.old_string),
            new_text: call.new_string,
        }]
    }
}

impl ToolCards for EditCards {
    fn call_card(&self, arguments: &Value) -> Option<Value> {
        let call: EditCall = parse(arguments)?;
        ToolCallView::Diff(DiffCallView {
            title: format!("Edit {}", call.file_path),
            locations: location(&call.file_path, None),
            diffs: Self::diffs(call),
        })
        .to_json()
    }

    fn result_card(&self, arguments: &Value, result: &DurableResult) -> Option<Value> {
        let meta: EditMeta = success_meta(result)?;
        let call: EditCall = parse(arguments)?;
        let plural = if meta.replacements == 1 { "" } else { "s" };
        ToolResultView::Diff(DiffResultView {
            title: Some(format!(
                "Edited {} ({} replacement{plural})",
                call.file_path, meta.replacements
            )),
            diffs: Self::diffs(call),
        })
        .to_json()
    }
}
