//! `grep`: Claude Code's `Grep` on ripgrep's own libraries (see `search`): the same files,
//! lines and counts as `rg` with the same flags, in three output modes (matching lines with
//! context, matching files newest first, counts per file), paged with `offset` and
//! `head_limit`, and every file it did not search (too large, binary, unreadable) counted.

mod page;
mod search;
mod view;

pub use view::CARD_ENTRIES;

use super::root::FsRoot;
use super::walk::Filters;
use crate::builtins::typed::{self, TextRenderer};
use crate::tool::{
    Concurrency, DefinitionError, Render, ToolDefinition, ToolError, ToolRunContext,
};
use ignore::overrides::{Override, OverrideBuilder};
use ignore::types::{Types, TypesBuilder};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Entries kept when the call sets no `head_limit` (Claude Code's default); 0 means all.
const DEFAULT_HEAD_LIMIT: u64 = 250;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Mode {
    Content,
    #[default]
    FilesWithMatches,
    Count,
}

#[derive(Deserialize)]
struct GrepArgs {
    pattern: String,
    path: Option<String>,
    glob: Option<String>,
    #[serde(rename = "type")]
    file_type: Option<String>,
    #[serde(default)]
    output_mode: Mode,
    #[serde(rename = "-A")]
    after: Option<u64>,
    #[serde(rename = "-B")]
    before: Option<u64>,
    #[serde(rename = "-C")]
    around: Option<u64>,
    #[serde(rename = "-n", default = "yes")]
    line_numbers: bool,
    #[serde(rename = "-i", default)]
    case_insensitive: bool,
    #[serde(default)]
    multiline: bool,
    head_limit: Option<u64>,
    #[serde(default)]
    offset: u64,
}

fn yes() -> bool {
    true
}

fn is_true(value: &bool) -> bool {
    *value
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// The canonical value, tagged by `mode`. An entry is a line in `content` mode (a match or
/// a context line) and a file in the others; `total` counts entries, `offset` entries were
/// skipped before the ones shown, and `truncated` says more follow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum GrepOutput {
    /// Matching (and context) lines grouped by file, files in path order.
    Content {
        /// Files in path order.
        files: Vec<MatchedFile>,
        /// Whether lines follow the ones shown.
        truncated: bool,
        /// Lines in all.
        total: u64,
        /// Files too large to search (absent when none).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        skipped: Vec<String>,
        /// Files not searched, by reason (absent when none).
        #[serde(
            rename = "notSearched",
            default,
            skip_serializing_if = "NotSearched::is_empty"
        )]
        not_searched: NotSearched,
        /// Lines skipped before the first shown (`offset`).
        #[serde(default, skip_serializing_if = "is_zero")]
        offset: u64,
        /// Whether the text shows line numbers (`-n`, default true).
        #[serde(
            rename = "lineNumbers",
            default = "yes",
            skip_serializing_if = "is_true"
        )]
        line_numbers: bool,
    },
    /// Files with at least one match, most recently modified first.
    FilesWithMatches {
        /// Root-relative paths, newest first.
        paths: Vec<String>,
        /// Whether files follow the ones shown.
        truncated: bool,
        /// Matching files in all.
        total: u64,
        /// Files too large to search (absent when none).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        skipped: Vec<String>,
        /// Files not searched, by reason (absent when none).
        #[serde(
            rename = "notSearched",
            default,
            skip_serializing_if = "NotSearched::is_empty"
        )]
        not_searched: NotSearched,
        /// Files skipped before the first shown (`offset`).
        #[serde(default, skip_serializing_if = "is_zero")]
        offset: u64,
    },
    /// Matches per file (`rg -c`), files in path order.
    Count {
        /// Counts in path order.
        counts: Vec<PathCount>,
        /// Whether files follow the ones shown.
        truncated: bool,
        /// Matching files in all.
        total: u64,
        /// Files too large to search (absent when none).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        skipped: Vec<String>,
        /// Files not searched, by reason (absent when none).
        #[serde(
            rename = "notSearched",
            default,
            skip_serializing_if = "NotSearched::is_empty"
        )]
        not_searched: NotSearched,
        /// Files skipped before the first shown (`offset`).
        #[serde(default, skip_serializing_if = "is_zero")]
        offset: u64,
    },
}

/// Files a search did not (wholly) search: never silently dropped.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotSearched {
    /// Larger than 16 MiB (named in `skipped`).
    pub too_large: u64,
    /// A NUL byte found (searching stops there, as `rg`'s does).
    pub binary: u64,
    /// Files or directories that could not be opened or read.
    pub unreadable: u64,
}

impl NotSearched {
    fn is_empty(&self) -> bool {
        *self == NotSearched::default()
    }
}

/// One file's lines.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchedFile {
    /// Root-relative path.
    pub path: String,
    /// Its matching and context lines, in file order.
    pub matches: Vec<MatchedLine>,
}

/// One line of a file: a match, or context around one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MatchedLine {
    /// 1-based line number.
    pub line_number: u64,
    /// The line, cut to a preview length.
    pub line: String,
    /// A context line (`-A`/`-B`/`-C`), not a match (absent on matches).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub context: bool,
}

/// One file's count of matches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PathCount {
    /// Root-relative path.
    pub path: String,
    /// Matches (matching lines, as `rg -c` counts them).
    pub count: u64,
}

/// The `grep` definition.
pub fn definition(root: Arc<FsRoot>) -> Result<ToolDefinition, DefinitionError> {
    let description = format!(
        "Search file contents with a regular expression (ripgrep's syntax and engine) under a \
         file or directory of the workspace root {root}; results equal `rg`'s with the same \
         flags. `output_mode`: \"files_with_matches\" (default) lists matching files, most \
         recently modified first; \"content\" shows matching lines as path:line:text (context \
         lines as path-line-text, with -A/-B/-C); \"count\" counts matches per file. `glob` \
         (`*.rs`, `*.{{ts,tsx}}`) and `type` (`rust`, `py`, `js`, ...) filter files, `-i` \
         ignores case, `multiline` lets patterns span lines (`.` matches newlines). \
         `head_limit` keeps the first N entries (lines or files; default {DEFAULT_HEAD_LIMIT}, \
         0 for all) after skipping `offset` entries, for paging. Hidden, .gitignore'd, binary \
         and larger-than-16-MiB files are skipped; the skipped ones are counted. A path in the \
         host's spill directory (where results too large to show are saved) may be searched too.",
        root = root.path().display()
    );
    ToolDefinition::builder("grep")
        .description(description)
        .parameters(json!({
            "pattern": { "type": "string", "required": true, "description": "Regular expression to search for (rg syntax)." },
            "path": { "type": "string", "description": "File or directory to search (default: the root)." },
            "glob": { "type": "string", "description": "Only search files matching this glob, as rg --glob (`*.rs`, `*.{ts,tsx}`, `src/**/*.ts`, `!*.min.js`)." },
            "type": { "type": "string", "description": "Only search files of this type, as rg --type (`rust`, `py`, `js`, `ts`, `go`, `java`, ...)." },
            "output_mode": { "type": "string", "enum": ["content", "files_with_matches", "count"], "description": "What to return (default files_with_matches)." },
            "-A": { "type": "integer", "description": "Lines of context after each match (content mode)." },
            "-B": { "type": "integer", "description": "Lines of context before each match (content mode)." },
            "-C": { "type": "integer", "description": "Lines of context before and after each match (content mode)." },
            "-n": { "type": "boolean", "description": "Show line numbers (content mode; default true)." },
            "-i": { "type": "boolean", "description": "Case-insensitive search." },
            "multiline": { "type": "boolean", "description": "Patterns may span lines and `.` matches newlines (rg -U --multiline-dotall)." },
            "head_limit": { "type": "integer", "description": "Entries (lines or files) to return after `offset` (default 250; 0 for all)." },
            "offset": { "type": "integer", "description": "Entries to skip before `head_limit` applies, for paging (default 0)." }
        }))
        .output(view::output_schema())
        .render(Render::Custom(Arc::new(TextRenderer(view::render))))
        .concurrency(Concurrency::Parallel)
        .idempotent(true)
        .cards(Arc::new(view::GrepCards))
        .card_meta(Arc::new(|_arguments, value| view::card_meta(value)))
        .body(move |ctx: ToolRunContext| {
            let root = root.clone();
            async move {
                let args: GrepArgs = typed::arguments(ctx.arguments())?;
                let token = ctx.signal.to_token();
                let output = typed::blocking(move || grep(&root, &args, &token)).await?;
                typed::output(&output)
            }
        })
}

fn grep(
    root: &FsRoot,
    args: &GrepArgs,
    token: &CancellationToken,
) -> Result<GrepOutput, ToolError> {
    let matcher = search::matcher(&args.pattern, args.case_insensitive, args.multiline)
        .map_err(|e| ToolError::new(format!("invalid regular expression: {e}")))?;
    let requested = args.path.as_deref().unwrap_or(".");
    let spill_dir = root.for_reading(requested);
    let root = spill_dir.as_ref().unwrap_or(root);
    let base = root.resolve(requested)?;
    if !base.path.exists() {
        return Err(ToolError::new(format!("\"{requested}\" does not exist")));
    }
    let filters = Filters {
        types: args.file_type.as_deref().map(file_types).transpose()?,
        overrides: args
            .glob
            .as_deref()
            .map(|glob| overrides(&base.path, glob))
            .transpose()?,
    };
    let limit = args.head_limit.unwrap_or(DEFAULT_HEAD_LIMIT);
    let around = args.around.unwrap_or(0);
    let query = search::Query {
        matcher,
        mode: args.output_mode,
        before: context_lines(args.before.unwrap_or(around)),
        after: context_lines(args.after.unwrap_or(around)),
        multiline: args.multiline,
        window_end: match limit {
            0 => u64::MAX,
            limit => args.offset.saturating_add(limit),
        },
    };
    let findings =
        search::run(root, &base.path, filters, &query, token).ok_or_else(typed::aborted)?;
    Ok(page::output(
        findings,
        args.output_mode,
        page::Page {
            offset: args.offset,
            limit,
            line_numbers: args.line_numbers,
        },
    ))
}

fn context_lines(lines: u64) -> usize {
    usize::try_from(lines).unwrap_or(usize::MAX)
}

/// `rg --type NAME` over ripgrep's default type definitions.
fn file_types(name: &str) -> Result<Types, ToolError> {
    let mut builder = TypesBuilder::new();
    builder.add_defaults();
    let known = builder.definitions();
    if name != "all" && !known.iter().any(|def| def.name() == name) {
        let common = [
            "rust", "py", "js", "ts", "go", "java", "c", "cpp", "ruby", "sh", "md", "json",
        ];
        let listed: Vec<&str> = common
            .into_iter()
            .filter(|name| known.iter().any(|def| def.name() == *name))
            .collect();
        return Err(ToolError::new(format!(
            "unknown type \"{name}\": use one of ripgrep's types, such as {} ({} in all; \
             `glob` filters by any pattern)",
            listed.join(", "),
            known.len()
        )));
    }
    builder.select(name);
    builder
        .build()
        .map_err(|e| ToolError::new(format!("invalid type: {e}")))
}

/// `rg --glob`: whitespace-separated globs rooted at the search directory; a leading `!`
/// excludes.
fn overrides(base: &Path, globs: &str) -> Result<Override, ToolError> {
    let mut builder = OverrideBuilder::new(base);
    for glob in globs.split_whitespace() {
        builder
            .add(glob)
            .map_err(|e| ToolError::new(format!("invalid glob: {e}")))?;
    }
    builder
        .build()
        .map_err(|e| ToolError::new(format!("invalid glob: {e}")))
}
