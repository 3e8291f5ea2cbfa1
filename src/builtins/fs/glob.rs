//! `glob`: file paths under a directory matching a glob pattern, the set `rg --files -g
//! PATTERN` lists (same walker, same glob semantics), most recently modified first as Claude
//! Code orders them, capped with `truncated` and `total` so a partial list never reads as
//! complete.

use super::root::FsRoot;
use super::walk::{self, Filters};
use crate::builtins::cards::{search_call, success_meta};
use crate::builtins::typed::{self, TextRenderer};
use crate::cards::{SearchPaths, SearchResultView, ToolResultView};
use crate::tool::{
    Concurrency, DefinitionError, Render, ToolDefinition, ToolError, ToolRunContext,
};
use crate::tool::{DurableResult, ToolCards};
use ignore::overrides::OverrideBuilder;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::json;
use std::cmp::Reverse;
use std::path::{Component, Path};
use std::sync::Arc;
use std::time::SystemTime;
use tokio_util::sync::CancellationToken;

/// Paths returned at most.
const MAX_PATHS: usize = 100;

#[derive(Deserialize)]
struct GlobArgs {
    pattern: String,
    path: Option<String>,
}

/// The canonical value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GlobOutput {
    /// Root-relative paths, most recently modified first (then by path).
    pub paths: Vec<String>,
    /// Whether `paths` is only the first page.
    pub truncated: bool,
    /// Paths that matched in all.
    pub total: u64,
}

/// The `glob` definition.
pub fn definition(root: Arc<FsRoot>) -> Result<ToolDefinition, DefinitionError> {
    let description = format!(
        "Find files by glob pattern (`**/*.rs`, `src/*.{{ts,tsx}}`) under a directory of the \
         workspace root {root}: the files `rg --files -g PATTERN` lists. A pattern with a `/` \
         is matched against paths relative to `path` (default: the root), `*` within one \
         directory and `**` across them; one without (`*.rs`) matches file names at any depth. \
         Returns at most {MAX_PATHS} root-relative paths, most recently modified first; hidden \
         and .gitignore'd files are skipped unless the pattern names them.",
        root = root.path().display()
    );
    ToolDefinition::builder("glob")
        .description(description)
        .parameters(json!({
            "pattern": { "type": "string", "required": true, "description": "Glob pattern relative to `path`." },
            "path": { "type": "string", "description": "Directory to search (default: the root)." }
        }))
        .output(json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "paths": { "type": "array", "required": true, "items": { "type": "string" } },
                "truncated": { "type": "boolean", "required": true },
                "total": { "type": "integer", "required": true }
            }
        }))
        .render(Render::Custom(Arc::new(TextRenderer(render))))
        .concurrency(Concurrency::Parallel)
        .idempotent(true)
        .cards(Arc::new(GlobCards))
        .card_meta(typed::value_as_meta())
        .body(move |ctx: ToolRunContext| {
            let root = root.clone();
            async move {
                let args: GlobArgs = typed::arguments(ctx.arguments())?;
                let token = ctx.signal.to_token();
                let output = typed::blocking(move || glob(&root, &args, &token)).await?;
                typed::output(&output)
            }
        })
}

fn glob(
    root: &FsRoot,
    args: &GlobArgs,
    token: &CancellationToken,
) -> Result<GlobOutput, ToolError> {
    let pattern = Path::new(&args.pattern);
    if pattern.is_absolute() || pattern.components().any(|c| c == Component::ParentDir) {
        return Err(ToolError::new(
            "pattern must be relative and must not contain \"..\"; choose the directory with `path`",
        ));
    }
    let requested = args.path.as_deref().unwrap_or(".");
    let base = root.resolve(requested)?;
    if !base.path.exists() {
        return Err(ToolError::new(format!("\"{requested}\" does not exist")));
    }
    if !base.path.is_dir() {
        return Err(ToolError::new(format!(
            "\"{requested}\" is not a directory"
        )));
    }
    let mut overrides = OverrideBuilder::new(&base.path);
    overrides
        .add(&args.pattern)
        .map_err(|e| ToolError::new(format!("invalid glob pattern: {e}")))?;
    let overrides = overrides
        .build()
        .map_err(|e| ToolError::new(format!("invalid glob pattern: {e}")))?;
    let filters = Filters {
        types: None,
        overrides: Some(overrides),
    };
    let found: Mutex<Vec<(Reverse<SystemTime>, String)>> = Mutex::new(Vec::new());
    let walked = walk::parallel(root, &base.path, filters, token, || {
        let found = &found;
        Box::new(move |entry| {
            if let Some(display) = root.display(entry.path()) {
                // The entry's own time (lstat): links are not listed, so nothing is followed.
                let modified = entry
                    .metadata()
                    .ok()
                    .and_then(|meta| meta.modified().ok())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                found.lock().push((Reverse(modified), display));
            }
            true
        })
    });
    if walked.cancelled {
        return Err(typed::aborted());
    }
    let mut found = found.into_inner();
    found.sort_unstable();
    let mut paths: Vec<String> = found.into_iter().map(|(_, path)| path).collect();
    let total = paths.len() as u64;
    let truncated = paths.len() > MAX_PATHS;
    paths.truncate(MAX_PATHS);
    Ok(GlobOutput {
        paths,
        truncated,
        total,
    })
}

fn render(output: &GlobOutput) -> String {
    if output.paths.is_empty() {
        return "No files matched".to_owned();
    }
    let mut text = output.paths.join("\n");
    if output.truncated {
        text.push_str(&format!(
            "\n\n(showing the first {} of {} paths; narrow the pattern to see the rest)",
            output.paths.len(),
            output.total
        ));
    }
    text
}

/// `glob`: a search row, then the `paths` search card.
struct GlobCards;

impl ToolCards for GlobCards {
    fn call_card(&self, arguments: &Value) -> Option<Value> {
        search_call("Glob", arguments)
    }

    fn result_card(&self, _arguments: &Value, result: &DurableResult) -> Option<Value> {
        let glob: GlobOutput = success_meta(result)?;
        ToolResultView::Search(SearchResultView::Paths(SearchPaths {
            title: None,
            paths: glob.paths,
            truncated: glob.truncated,
            total: glob.total,
        }))
        .to_json()
    }
}
