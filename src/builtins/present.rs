//! The built-in tools' UI presenters and the presentation metadata they read back.
//!
//! Every presenter is pure over its arguments and the durable result (content and `meta`,
//! never the execution-local value), so a UI gets the same card live and on log replay.
//! Arguments or metadata that do not parse (an older log, a hand-edited one) yield `None`,
//! the generic fallback.

use super::bash::BashOutput;
use super::fs::{GlobOutput, GrepOutput, ReadOutput};
use crate::present::{
    DiffCallView, DiffResultView, FileDiff, FileLocation, GenericCallView, ReadFileLine,
    ReadResultView, SearchFileMatches, SearchLineMatch, SearchMatches, SearchPaths,
    SearchResultView, TerminalCallView, TerminalResultView, ToolCallKind, ToolCallView,
    ToolResultView,
};
use crate::tool::{ContentBlock, PresentationMeta, PresentedResult, Presenter};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

/// `write`'s metadata.
#[derive(Serialize, Deserialize)]
struct WriteMeta {
    created: bool,
}

/// `edit`'s metadata.
#[derive(Serialize, Deserialize)]
struct EditMeta {
    replacements: u64,
}

/// `bash`'s metadata: what the terminal card shows.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TerminalMeta {
    output: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    exit_code: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    signal: Option<String>,
}

/// `write` persists whether it created the file.
pub fn write_meta() -> PresentationMeta {
    Arc::new(|_arguments, value| {
        let created = value.get("created")?.as_bool()?;
        serde_json::to_value(WriteMeta { created }).ok()
    })
}

/// `edit` persists how many occurrences it replaced.
pub fn edit_meta() -> PresentationMeta {
    Arc::new(|_arguments, value| {
        let replacements = value.get("replacements")?.as_u64()?;
        serde_json::to_value(EditMeta { replacements }).ok()
    })
}

/// `bash` persists its combined output and exit status.
pub fn bash_meta() -> PresentationMeta {
    Arc::new(|_arguments, value| {
        let output = BashOutput::deserialize(value).ok()?;
        serde_json::to_value(TerminalMeta {
            output: output.combined(),
            exit_code: output.exit_code,
            signal: output.signal,
        })
        .ok()
    })
}

/// Soft validation: the shape a presenter needs, or `None`.
fn parse<T: DeserializeOwned>(value: &Value) -> Option<T> {
    T::deserialize(value).ok()
}

/// The metadata of a successful result, parsed.
fn success_meta<T: DeserializeOwned>(result: &PresentedResult) -> Option<T> {
    if result.is_error {
        return None;
    }
    parse(result.meta.as_ref()?)
}

fn location(path: &str, line: Option<u64>) -> Option<Vec<FileLocation>> {
    Some(vec![FileLocation {
        path: path.to_owned(),
        line,
    }])
}

#[derive(Deserialize)]
struct PathCall {
    file_path: String,
    offset: Option<i64>,
}

/// `read`: a generic pending row, then the line-numbered `read` card.
pub struct ReadPresenter;

impl Presenter for ReadPresenter {
    fn present_call(&self, arguments: &Value) -> Option<Value> {
        let call: PathCall = parse(arguments)?;
        let line = call
            .offset
            .and_then(|n| u64::try_from(n).ok())
            .filter(|n| *n > 0);
        ToolCallView::Generic(GenericCallView {
            title: format!("Read {}", call.file_path),
            kind: Some(ToolCallKind::Read),
            raw_input: None,
            content: None,
            locations: location(&call.file_path, line),
        })
        .to_json()
    }

    fn present_result(&self, _arguments: &Value, result: &PresentedResult) -> Option<Value> {
        let read: ReadOutput = success_meta(result)?;
        let text: Vec<&str> = read.lines.iter().map(|line| line.text.as_str()).collect();
        ToolResultView::Read(ReadResultView {
            title: None,
            lang: language_of(&read.path).map(str::to_owned),
            content: Some(vec![ContentBlock::text(text.join("\n"))]),
            path: read.path,
            offset: read.offset,
            lines: read
                .lines
                .into_iter()
                .map(|line| ReadFileLine {
                    number: line.number,
                    text: line.text,
                })
                .collect(),
            total_lines: read.total_lines,
        })
        .to_json()
    }
}

#[derive(Deserialize)]
struct WriteCall {
    file_path: String,
    content: String,
}

/// `write`: the whole new file as a diff (no before-image is kept).
pub struct WritePresenter;

impl WritePresenter {
    fn diffs(call: WriteCall) -> Vec<FileDiff> {
        vec![FileDiff {
            path: call.file_path,
            old_text: None,
            new_text: call.content,
        }]
    }
}

impl Presenter for WritePresenter {
    fn present_call(&self, arguments: &Value) -> Option<Value> {
        let call: WriteCall = parse(arguments)?;
        ToolCallView::Diff(DiffCallView {
            title: format!("Write {}", call.file_path),
            locations: location(&call.file_path, None),
            diffs: Self::diffs(call),
        })
        .to_json()
    }

    fn present_result(&self, arguments: &Value, result: &PresentedResult) -> Option<Value> {
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

#[derive(Deserialize)]
struct EditCall {
    file_path: String,
    old_string: String,
    new_string: String,
}

/// `edit`: the replaced string and its replacement.
pub struct EditPresenter;

impl EditPresenter {
    fn diffs(call: EditCall) -> Vec<FileDiff> {
        vec![FileDiff {
            path: call.file_path,
            old_text: Some(call.old_string),
            new_text: call.new_string,
        }]
    }
}

impl Presenter for EditPresenter {
    fn present_call(&self, arguments: &Value) -> Option<Value> {
        let call: EditCall = parse(arguments)?;
        ToolCallView::Diff(DiffCallView {
            title: format!("Edit {}", call.file_path),
            locations: location(&call.file_path, None),
            diffs: Self::diffs(call),
        })
        .to_json()
    }

    fn present_result(&self, arguments: &Value, result: &PresentedResult) -> Option<Value> {
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

#[derive(Deserialize)]
struct SearchCall {
    pattern: String,
    path: Option<String>,
}

fn search_title(tool: &str, call: SearchCall) -> String {
    match call.path {
        Some(path) => format!("{tool} {} in {path}", call.pattern),
        None => format!("{tool} {}", call.pattern),
    }
}

fn search_call(tool: &str, arguments: &Value) -> Option<Value> {
    ToolCallView::Generic(GenericCallView {
        title: search_title(tool, parse(arguments)?),
        kind: Some(ToolCallKind::Search),
        raw_input: None,
        content: None,
        locations: None,
    })
    .to_json()
}

/// `glob`: a search row, then the `paths` search card.
pub struct GlobPresenter;

impl Presenter for GlobPresenter {
    fn present_call(&self, arguments: &Value) -> Option<Value> {
        search_call("Glob", arguments)
    }

    fn present_result(&self, _arguments: &Value, result: &PresentedResult) -> Option<Value> {
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

/// `grep`: a search row, then matches grouped by file (`content`) or paths
/// (`files_with_matches`); counts keep the generic card.
pub struct GrepPresenter;

impl Presenter for GrepPresenter {
    fn present_call(&self, arguments: &Value) -> Option<Value> {
        search_call("Grep", arguments)
    }

    fn present_result(&self, _arguments: &Value, result: &PresentedResult) -> Option<Value> {
        let search = match success_meta(result)? {
            GrepOutput::Content {
                files,
                truncated,
                total,
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

#[derive(Deserialize)]
struct BashCall {
    command: String,
    description: Option<String>,
}

/// `bash`: a terminal card in the configured working directory.
pub struct BashPresenter {
    /// The canonical working directory commands run in.
    pub cwd: String,
}

impl Presenter for BashPresenter {
    fn present_call(&self, arguments: &Value) -> Option<Value> {
        let call: BashCall = parse(arguments)?;
        ToolCallView::Terminal(TerminalCallView {
            title: call.command,
            description: call.description,
            cwd: Some(self.cwd.clone()),
        })
        .to_json()
    }

    fn present_result(&self, _arguments: &Value, result: &PresentedResult) -> Option<Value> {
        let meta: TerminalMeta = success_meta(result)?;
        ToolResultView::Terminal(TerminalResultView {
            title: None,
            output: Some(meta.output),
            exit_code: meta.exit_code,
            signal: meta.signal,
        })
        .to_json()
    }
}

/// A syntax-highlighting hint from the file extension.
fn language_of(path: &str) -> Option<&'static str> {
    let extension = Path::new(path).extension()?.to_str()?;
    Some(match extension {
        "rs" => "rust",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "tsx",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "jsx",
        "py" => "python",
        "go" => "go",
        "java" => "java",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" => "cpp",
        "rb" => "ruby",
        "sh" | "bash" => "bash",
        "json" => "json",
        "toml" => "toml",
        "yaml" | "yml" => "yaml",
        "md" => "markdown",
        "html" => "html",
        "css" => "css",
        "sql" => "sql",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_come_from_extensions() {
        let cases = [
            ("src/main.rs", Some("rust")),
            ("a/b.test.ts", Some("typescript")),
            ("Makefile", None),
            ("notes.txt", None),
            ("x.YML", None),
        ];
        for (path, expected) in cases {
            assert_eq!(language_of(path), expected, "{path}");
        }
    }
}
