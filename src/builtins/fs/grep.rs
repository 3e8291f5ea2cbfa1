//! `grep`: regular-expression search over file contents under the root, in three output
//! modes (matching lines, matching files, counts), capped with `truncated` and `total`.

use super::root::FsRoot;
use super::walk;
use crate::builtins::cards::{search_call, success_meta};
use crate::builtins::typed::{self, TextRenderer};
use crate::cards::{
    SearchFileMatches, SearchLineMatch, SearchMatches, SearchPaths, SearchResultView,
    ToolResultView,
};
use crate::tool::{
    Concurrency, DefinitionError, Render, ToolDefinition, ToolError, ToolRunContext,
};
use crate::tool::{DurableResult, ToolCards};
use globset::GlobBuilder;
use regex::RegexBuilder;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::json;
use std::io::Read;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Results kept when the call sets no `head_limit`: matching lines in `content` mode.
const DEFAULT_LINES: u64 = 200;
/// Results kept when the call sets no `head_limit`: files in the other modes.
const DEFAULT_FILES: u64 = 100;
/// Largest `head_limit`.
const MAX_HEAD_LIMIT: i64 = 2000;
/// Matched lines are cut to this many characters.
const MAX_LINE_CHARS: usize = 500;
/// Larger files are skipped.
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// A NUL byte within this many leading bytes marks a binary file (skipped).
const BINARY_PROBE_BYTES: usize = 8192;

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
    #[serde(default)]
    output_mode: Mode,
    #[serde(rename = "-i", default)]
    case_insensitive: bool,
    head_limit: Option<i64>,
}

/// The canonical value, tagged by `mode`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum GrepOutput {
    /// Matching lines grouped by file; `total` counts matching lines.
    Content {
        /// Files in path order.
        files: Vec<MatchedFile>,
        /// Whether lines were left out.
        truncated: bool,
        /// Matching lines in all.
        total: u64,
        /// Files too large to search (absent when none).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        skipped: Vec<String>,
    },
    /// Files with at least one match; `total` counts them.
    FilesWithMatches {
        /// Root-relative paths in order.
        paths: Vec<String>,
        /// Whether files were left out.
        truncated: bool,
        /// Matching files in all.
        total: u64,
        /// Files too large to search (absent when none).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        skipped: Vec<String>,
    },
    /// Matching lines per file; `total` counts files.
    Count {
        /// Counts in path order.
        counts: Vec<PathCount>,
        /// Whether files were left out.
        truncated: bool,
        /// Matching files in all.
        total: u64,
        /// Files too large to search (absent when none).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        skipped: Vec<String>,
    },
}

/// One file's matching lines.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchedFile {
    /// Root-relative path.
    pub path: String,
    /// Its matching lines.
    pub matches: Vec<MatchedLine>,
}

/// One matching line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MatchedLine {
    /// 1-based line number.
    pub line_number: u64,
    /// The line, cut to a preview length.
    pub line: String,
}

/// One file's count of matching lines.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PathCount {
    /// Root-relative path.
    pub path: String,
    /// Matching lines.
    pub count: u64,
}

/// The `grep` definition.
pub fn definition(root: Arc<FsRoot>) -> Result<ToolDefinition, DefinitionError> {
    let description = format!(
        "Search file contents with a regular expression (Rust regex syntax) under a file or \
         directory of the workspace root {root}. `output_mode`: \"files_with_matches\" (default) \
         lists matching files, \"content\" shows matching lines as path:line:text, \"count\" \
         counts matching lines per file. `glob` filters files (`*.rs`), `-i` ignores case, \
         `head_limit` caps results (default {DEFAULT_LINES} lines or {DEFAULT_FILES} files). \
         .gitignore'd and binary files are skipped. A path in the host's spill directory \
         (where results too large to show are saved) may be searched too.",
        root = root.path().display()
    );
    let search_result = |mode: &str, key: &str, items: serde_json::Value| {
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "mode": { "type": "string", "const": mode, "required": true },
                key: { "type": "array", "required": true, "items": items },
                "truncated": { "type": "boolean", "required": true },
                "total": { "type": "integer", "required": true },
                "skipped": {
                    "type": "array",
                    "items": { "type": "string" },
                    "description": "Files not searched because they are larger than 16 MiB."
                }
            }
        })
    };
    let line = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "lineNumber": { "type": "integer", "required": true },
            "line": { "type": "string", "required": true }
        }
    });
    let file = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "path": { "type": "string", "required": true },
            "matches": { "type": "array", "required": true, "items": line }
        }
    });
    let count = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "path": { "type": "string", "required": true },
            "count": { "type": "integer", "required": true }
        }
    });
    ToolDefinition::builder("grep")
        .description(description)
        .parameters(json!({
            "pattern": { "type": "string", "required": true, "description": "Regular expression to search for." },
            "path": { "type": "string", "description": "File or directory to search (default: the root)." },
            "glob": { "type": "string", "description": "Only search files whose path matches this glob (`*.rs`, `src/**/*.ts`)." },
            "output_mode": { "type": "string", "enum": ["content", "files_with_matches", "count"], "description": "What to return (default files_with_matches)." },
            "-i": { "type": "boolean", "description": "Case-insensitive search." },
            "head_limit": { "type": "integer", "description": "Results to keep (1 to 2000)." }
        }))
        .output(json!({
            "oneOf": [
                search_result("content", "files", file),
                search_result("files_with_matches", "paths", json!({ "type": "string" })),
                search_result("count", "counts", count)
            ]
        }))
        .render(Render::Custom(Arc::new(TextRenderer(render))))
        .concurrency(Concurrency::Parallel)
        .idempotent(true)
        .cards(Arc::new(GrepCards))
        .card_meta(Arc::new(|_arguments, value| {
            let count = value.get("mode")?.as_str()? == "count";
            (!count).then(|| value.clone())
        }))
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

/// What one search accumulates, whatever the mode.
struct Tally {
    mode: Mode,
    limit: u64,
    files: Vec<MatchedFile>,
    paths: Vec<String>,
    counts: Vec<PathCount>,
    total: u64,
    /// Files too large to search.
    skipped: Vec<String>,
}

fn grep(
    root: &FsRoot,
    args: &GrepArgs,
    token: &CancellationToken,
) -> Result<GrepOutput, ToolError> {
    let regex = RegexBuilder::new(&args.pattern)
        .case_insensitive(args.case_insensitive)
        .build()
        .map_err(|e| ToolError::new(format!("invalid regular expression: {e}")))?;
    let filter = match &args.glob {
        None => None,
        Some(glob) => Some(
            GlobBuilder::new(glob)
                .build()
                .map_err(|e| ToolError::new(format!("invalid glob: {e}")))?
                .compile_matcher(),
        ),
    };
    let limit = match args.head_limit {
        None if args.output_mode == Mode::Content => DEFAULT_LINES,
        None => DEFAULT_FILES,
        Some(n) if (1..=MAX_HEAD_LIMIT).contains(&n) => n.unsigned_abs(),
        Some(_) => {
            return Err(ToolError::new(format!(
                "head_limit must be between 1 and {MAX_HEAD_LIMIT}"
            )));
        }
    };
    let requested = args.path.as_deref().unwrap_or(".");
    let spill_dir = root.for_reading(requested);
    let root = spill_dir.as_ref().unwrap_or(root);
    let base = root.resolve(requested)?;
    if !base.path.exists() {
        return Err(ToolError::new(format!("\"{requested}\" does not exist")));
    }
    let mut tally = Tally {
        mode: args.output_mode,
        limit,
        files: Vec::new(),
        paths: Vec::new(),
        counts: Vec::new(),
        total: 0,
        skipped: Vec::new(),
    };
    walk::files(root, &base.path, token, |found| {
        // An explicitly named file is searched whatever the filter says (like ripgrep).
        let named = found.within_base.as_os_str().is_empty();
        if !named
            && filter
                .as_ref()
                .is_some_and(|f| !f.is_match(&found.within_base))
        {
            return Ok(());
        }
        match searchable_text(root, &found.file) {
            Searchable::Text(text) => tally.search(&regex, found.display, &text),
            Searchable::TooLarge => tally.skipped.push(found.display),
            Searchable::Not => {}
        }
        Ok(())
    })?;
    Ok(tally.finish())
}

impl Tally {
    fn search(&mut self, regex: &regex::Regex, path: String, text: &str) {
        let mut matching = text
            .lines()
            .enumerate()
            .filter(|(_, line)| regex.is_match(line));
        match self.mode {
            Mode::Content => {
                let mut matches = Vec::new();
                for (index, line) in matching {
                    self.total += 1;
                    if self.total <= self.limit {
                        matches.push(MatchedLine {
                            line_number: index as u64 + 1,
                            line: line.chars().take(MAX_LINE_CHARS).collect(),
                        });
                    }
                }
                if !matches.is_empty() {
                    self.files.push(MatchedFile { path, matches });
                }
            }
            Mode::FilesWithMatches => {
                if matching.next().is_some() {
                    self.total += 1;
                    if self.total <= self.limit {
                        self.paths.push(path);
                    }
                }
            }
            Mode::Count => {
                let count = matching.count() as u64;
                if count > 0 {
                    self.total += 1;
                    if self.total <= self.limit {
                        self.counts.push(PathCount { path, count });
                    }
                }
            }
        }
    }

    fn finish(self) -> GrepOutput {
        let (total, truncated, skipped) = (self.total, self.total > self.limit, self.skipped);
        match self.mode {
            Mode::Content => GrepOutput::Content {
                files: self.files,
                truncated,
                total,
                skipped,
            },
            Mode::FilesWithMatches => GrepOutput::FilesWithMatches {
                paths: self.paths,
                truncated,
                total,
                skipped,
            },
            Mode::Count => GrepOutput::Count {
                counts: self.counts,
                truncated,
                total,
                skipped,
            },
        }
    }
}

/// What grep makes of one file.
enum Searchable {
    Text(String),
    /// Over [`MAX_FILE_BYTES`]: reported, so "no matches" is never a silent skip.
    TooLarge,
    /// Unreadable or binary.
    Not,
}

/// Reads `file` through the root's one-step open (a link or a FIFO swapped in after the
/// listing is never followed nor waited on) and at most [`MAX_FILE_BYTES`] of it, however
/// large it claims to be or grows.
fn searchable_text(root: &FsRoot, file: &std::path::Path) -> Searchable {
    let Ok(opened) = super::beneath::open_for_reading(root.path(), file) else {
        return Searchable::Not;
    };
    match opened.metadata() {
        Ok(meta) if meta.is_file() && meta.len() > MAX_FILE_BYTES => return Searchable::TooLarge,
        Ok(meta) if meta.is_file() => {}
        _ => return Searchable::Not,
    }
    let mut bytes = Vec::new();
    if opened
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .is_err()
    {
        return Searchable::Not;
    }
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Searchable::TooLarge;
    }
    let probe = &bytes[..bytes.len().min(BINARY_PROBE_BYTES)];
    if probe.contains(&0) {
        return Searchable::Not;
    }
    Searchable::Text(String::from_utf8_lossy(&bytes).into_owned())
}

fn render(output: &GrepOutput) -> String {
    let (lines, truncated, total, unit): (Vec<String>, _, _, _) = match output {
        GrepOutput::Content {
            files,
            truncated,
            total,
            ..
        } => (
            files
                .iter()
                .flat_map(|file| {
                    file.matches
                        .iter()
                        .map(|m| format!("{}:{}:{}", file.path, m.line_number, m.line))
                })
                .collect(),
            *truncated,
            *total,
            "matching lines",
        ),
        GrepOutput::FilesWithMatches {
            paths,
            truncated,
            total,
            ..
        } => (paths.clone(), *truncated, *total, "files"),
        GrepOutput::Count {
            counts,
            truncated,
            total,
            ..
        } => (
            counts
                .iter()
                .map(|c| format!("{}:{}", c.path, c.count))
                .collect(),
            *truncated,
            *total,
            "files",
        ),
    };
    let skipped = match output {
        GrepOutput::Content { skipped, .. }
        | GrepOutput::FilesWithMatches { skipped, .. }
        | GrepOutput::Count { skipped, .. } => skipped,
    };
    let mut text = if lines.is_empty() {
        "No matches found".to_owned()
    } else {
        let shown = lines.len();
        let mut text = lines.join("\n");
        if truncated {
            text.push_str(&format!(
                "\n\n(showing the first {shown} of {total} {unit}; narrow the search or raise head_limit)"
            ));
        }
        text
    };
    if !skipped.is_empty() {
        text.push_str(&format!(
            "\n\n(not searched, larger than 16 MiB: {}; use read with offset/limit on them)",
            skipped.join(", ")
        ));
    }
    text
}

/// `grep`: a search row, then matches grouped by file (`content`) or paths
/// (`files_with_matches`); counts keep the generic card.
struct GrepCards;

impl ToolCards for GrepCards {
    fn call_card(&self, arguments: &Value) -> Option<Value> {
        search_call("Grep", arguments)
    }

    fn result_card(&self, _arguments: &Value, result: &DurableResult) -> Option<Value> {
        let search = match success_meta(result)? {
            GrepOutput::Content {
                files,
                truncated,
                total,
                ..
            } => SearchResultView::Matches(SearchMatches {
                title: None,
                files: files
                    .into_iter()
                    .map(|file| SearchFileMatches {
                        path: file.path,
                        matches: file
                            .matches
                            .into_iter()
                            .map(|m| SearchLineMatch {
                                line_number: m.line_number,
                                line: m.line,
                            })
                            .collect(),
                    })
                    .collect(),
                truncated,
                total,
            }),
            GrepOutput::FilesWithMatches {
                paths,
                truncated,
                total,
                ..
            } => SearchResultView::Paths(SearchPaths {
                title: None,
                paths,
                truncated,
                total,
            }),
            GrepOutput::Count { .. } => return None,
        };
        ToolResultView::Search(search).to_json()
    }
}
