//! How a `grep` result reads: its output schema, its text (rg's `path:line:text` for
//! matches and `path-line-text` for context, `--` between separate groups), and its card.

use super::GrepOutput;
use crate::builtins::cards::{search_call, success_meta};
use crate::cards::{
    SearchFileMatches, SearchLineMatch, SearchMatches, SearchPaths, SearchResultView,
    ToolResultView,
};
use crate::tool::{DurableResult, ToolCards};
use serde_json::{Value, json};

pub(super) fn output_schema() -> Value {
    let search_result = |mode: &str, key: &str, items: Value, extra: Value| {
        let mut properties = json!({
            "mode": { "type": "string", "const": mode, "required": true },
            key: { "type": "array", "required": true, "items": items },
            "truncated": { "type": "boolean", "required": true },
            "total": { "type": "integer", "required": true },
            "skipped": {
                "type": "array",
                "items": { "type": "string" },
                "description": "Files not searched because they are larger than 16 MiB."
            },
            "notSearched": {
                "type": "object",
                "additionalProperties": false,
                "description": "Files not searched (or searched only up to a NUL byte), by reason.",
                "properties": {
                    "tooLarge": { "type": "integer", "required": true },
                    "binary": { "type": "integer", "required": true },
                    "unreadable": { "type": "integer", "required": true }
                }
            },
            "offset": { "type": "integer", "description": "Entries skipped before the first shown." }
        });
        if let (Some(properties), Value::Object(extra)) = (properties.as_object_mut(), extra) {
            properties.extend(extra);
        }
        json!({ "type": "object", "additionalProperties": false, "properties": properties })
    };
    let line = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "lineNumber": { "type": "integer", "required": true },
            "line": { "type": "string", "required": true },
            "context": { "type": "boolean", "description": "A line around a match, not a match." }
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
    json!({
        "oneOf": [
            search_result("content", "files", file, json!({
                "lineNumbers": { "type": "boolean", "description": "False when the text leaves line numbers out (-n false)." }
            })),
            search_result("files_with_matches", "paths", json!({ "type": "string" }), json!({})),
            search_result("count", "counts", count, json!({}))
        ]
    })
}

pub(super) fn render(output: &GrepOutput) -> String {
    let (lines, truncated, total, offset, unit): (Vec<String>, _, _, _, _) = match output {
        GrepOutput::Content {
            files,
            truncated,
            total,
            offset,
            line_numbers,
            ..
        } => (
            content_lines(files, *line_numbers),
            *truncated,
            *total,
            *offset,
            "lines",
        ),
        GrepOutput::FilesWithMatches {
            paths,
            truncated,
            total,
            offset,
            ..
        } => (paths.clone(), *truncated, *total, *offset, "files"),
        GrepOutput::Count {
            counts,
            truncated,
            total,
            offset,
            ..
        } => (
            counts
                .iter()
                .map(|c| format!("{}:{}", c.path, c.count))
                .collect(),
            *truncated,
            *total,
            *offset,
            "files",
        ),
    };
    let shown = match output {
        GrepOutput::Content { files, .. } => files.iter().map(|f| f.matches.len()).sum(),
        _ => lines.len(),
    } as u64;
    let mut text = if lines.is_empty() && total > 0 {
        format!("No {unit} past offset {offset} (there are {total})")
    } else if lines.is_empty() {
        "No matches found".to_owned()
    } else {
        let mut text = lines.join("\n");
        let next = offset + shown;
        if offset > 0 || truncated {
            let first = offset + 1;
            text.push_str(&format!("\n\n(showing {unit} {first} to {next} of {total}"));
            if truncated {
                text.push_str(&format!(
                    "; pass offset {next} for the next page, or narrow the search"
                ));
            }
            text.push(')');
        }
        text
    };
    if let Some(line) = not_searched_line(output) {
        text.push_str("\n\n");
        text.push_str(&line);
    }
    text
}

/// rg's layout: `path:N:line` for a match, `path-N-line` for context, `--` between groups
/// that do not touch (only when context lines are shown, as rg does).
fn content_lines(files: &[super::MatchedFile], line_numbers: bool) -> Vec<String> {
    let with_context = files.iter().any(|f| f.matches.iter().any(|m| m.context));
    let mut lines = Vec::new();
    for file in files {
        let mut previous: Option<u64> = None;
        for m in &file.matches {
            let adjacent = previous.is_some_and(|p| p + 1 == m.line_number);
            if with_context && !adjacent && !lines.is_empty() {
                lines.push("--".to_owned());
            }
            previous = Some(m.line_number);
            let separator = if m.context { '-' } else { ':' };
            lines.push(match line_numbers {
                true => format!(
                    "{}{separator}{}{separator}{}",
                    file.path, m.line_number, m.line
                ),
                false => format!("{}{separator}{}", file.path, m.line),
            });
        }
    }
    lines
}

/// One line naming what was not searched, or `None` when everything was.
fn not_searched_line(output: &GrepOutput) -> Option<String> {
    let (skipped, not_searched) = match output {
        GrepOutput::Content {
            skipped,
            not_searched,
            ..
        }
        | GrepOutput::FilesWithMatches {
            skipped,
            not_searched,
            ..
        }
        | GrepOutput::Count {
            skipped,
            not_searched,
            ..
        } => (skipped, not_searched),
    };
    let mut parts = Vec::new();
    if !skipped.is_empty() {
        parts.push(format!(
            "larger than 16 MiB: {} (use read with offset/limit on them)",
            skipped.join(", ")
        ));
    }
    let plural = |n: u64, one: &str, many: &str| match n {
        1 => format!("1 {one}"),
        n => format!("{n} {many}"),
    };
    if not_searched.binary > 0 {
        parts.push(plural(not_searched.binary, "binary file", "binary files"));
    }
    if not_searched.unreadable > 0 {
        parts.push(format!("{} unreadable", not_searched.unreadable));
    }
    (!parts.is_empty()).then(|| format!("(not searched: {})", parts.join("; ")))
}

/// Entries (lines, or paths) a card carries at most. A card shows a capped result as capped
/// (`truncated`, `total`), so the metadata persisted with every result (and sent with it)
/// stays small when `head_limit: 0` returns ten thousand lines to the model.
pub const CARD_ENTRIES: usize = 1_000;

/// The card's metadata: the value with at most [`CARD_ENTRIES`] entries (`truncated` set
/// when some were left out); none for `count`, whose card is the generic one.
pub(super) fn card_meta(value: &Value) -> Option<Value> {
    let Value::Object(fields) = value else {
        return None;
    };
    let (key, entries_of): (&str, fn(&Value) -> usize) = match value.get("mode")?.as_str()? {
        "content" => ("files", |file| {
            file.get("matches")
                .and_then(Value::as_array)
                .map_or(0, Vec::len)
        }),
        "files_with_matches" => ("paths", |_path| 1),
        _ => return None,
    };
    let mut meta = serde_json::Map::with_capacity(fields.len());
    let mut capped = false;
    for (name, field) in fields {
        let kept = match (name == key, field) {
            (true, Value::Array(items)) => {
                let (kept, cut) = first_entries(items, entries_of);
                capped = cut;
                Value::Array(kept)
            }
            _ => field.clone(),
        };
        meta.insert(name.clone(), kept);
    }
    if capped {
        meta.insert("truncated".into(), Value::Bool(true));
    }
    Some(Value::Object(meta))
}

/// The leading items holding at most [`CARD_ENTRIES`] entries (a file's lines cut inside it),
/// and whether any were left out.
fn first_entries(items: &[Value], entries_of: fn(&Value) -> usize) -> (Vec<Value>, bool) {
    let mut room = CARD_ENTRIES;
    let mut kept = Vec::new();
    for item in items {
        let entries = entries_of(item);
        if entries <= room {
            room -= entries;
            kept.push(item.clone());
            continue;
        }
        if room > 0 {
            kept.push(with_first_matches(item, room));
        }
        return (kept, true);
    }
    (kept, false)
}

/// A file of `content` mode with only its first `lines` lines.
fn with_first_matches(file: &Value, lines: usize) -> Value {
    let Value::Object(fields) = file else {
        return file.clone();
    };
    let fields = fields.iter().map(|(name, field)| {
        let field = match (name.as_str(), field) {
            ("matches", Value::Array(matches)) => {
                Value::Array(matches[..lines.min(matches.len())].to_vec())
            }
            _ => field.clone(),
        };
        (name.clone(), field)
    });
    Value::Object(fields.collect())
}

/// `grep`: a search row, then matches grouped by file (`content`) or paths
/// (`files_with_matches`); counts keep the generic card.
pub(super) struct GrepCards;

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
                                context: m.context,
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
