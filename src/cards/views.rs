//! The card vocabulary of tool-owned UI presentation (the seed's `ToolCallView` and
//! `ToolResultView` unions), serialized as the JSON `tools/presentCall` and
//! `tools/presentResult` return.

use crate::tool::ContentBlock;
use serde::Serialize;
use serde_json::Value;

/// How a UI shows a pending call, tagged by `card`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "card", rename_all = "lowercase")]
pub enum ToolCallView {
    /// A titled row with an optional category icon.
    Generic(GenericCallView),
    /// A shell command in a working directory.
    Terminal(TerminalCallView),
    /// File changes derived from the call's arguments.
    Diff(DiffCallView),
}

/// How a UI shows a completed call, tagged by `card`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "card", rename_all = "lowercase")]
pub enum ToolResultView {
    /// A replacement title and content.
    Generic(GenericResultView),
    /// Captured output and exit status.
    Terminal(TerminalResultView),
    /// The applied change.
    Diff(DiffResultView),
    /// A completed discovery search, tagged by `shape`.
    Search(SearchResultView),
    /// A line-numbered file window.
    Read(ReadResultView),
    /// A completed web retrieval, tagged by `kind`.
    Web(super::web::WebResultView),
}

/// A call's category, for an icon.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolCallKind {
    /// Reads a file.
    Read,
    /// Changes a file.
    Edit,
    /// Deletes something.
    Delete,
    /// Moves something.
    Move,
    /// Searches.
    Search,
    /// Runs a command.
    Execute,
    /// Fetches from the network.
    Fetch,
    /// Anything else.
    Other,
}

/// A file a call touches, for editor follow-along.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FileLocation {
    /// The model-facing path.
    pub path: String,
    /// A 1-based line to focus.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
}

/// One file's change; `oldText` is `null` when there is no before-image.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileDiff {
    /// The model-facing path.
    pub path: String,
    /// Prior text, or `null` for a create or an overwrite.
    pub old_text: Option<String>,
    /// Text after the change.
    pub new_text: String,
}

/// `{ card: 'generic', title, kind?, rawInput?, content?, locations? }`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GenericCallView {
    /// What this call does.
    pub title: String,
    /// Its category.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<ToolCallKind>,
    /// The salient input.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_input: Option<Value>,
    /// Extra content blocks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<ContentBlock>>,
    /// Files it touches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locations: Option<Vec<FileLocation>>,
}

/// `{ card: 'terminal', title, description?, cwd? }`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TerminalCallView {
    /// The command.
    pub title: String,
    /// What it does, in a line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Where it runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

/// `{ card: 'diff', title, diffs, locations? }`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DiffCallView {
    /// Card header.
    pub title: String,
    /// One entry per changed file.
    pub diffs: Vec<FileDiff>,
    /// Files it changes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locations: Option<Vec<FileLocation>>,
}

/// `{ card: 'generic', title?, content? }`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GenericResultView {
    /// Replacement title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Reformatted content.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<ContentBlock>>,
}

/// `{ card: 'terminal', title?, output?, exitCode?, signal?, sessionId?, running? }`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TerminalResultView {
    /// Replacement title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Captured output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// Exit code, when the process exited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// The signal that killed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    /// The exec session the command runs (or ran) as.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Whether that session was still running when the card was made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub running: Option<bool>,
}

/// `{ card: 'diff', title?, diffs }`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DiffResultView {
    /// Replacement title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The change, in file order.
    pub diffs: Vec<FileDiff>,
}

/// `{ card: 'search', shape: 'matches' | 'paths', … }`: a capped search never reads as
/// complete because `truncated` and `total` travel with it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "shape", rename_all = "lowercase")]
pub enum SearchResultView {
    /// Matched lines grouped by file (grep).
    Matches(SearchMatches),
    /// A flat path list (glob).
    Paths(SearchPaths),
}

/// The `matches` shape.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SearchMatches {
    /// Replacement title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Matches by file, in first-seen order.
    pub files: Vec<SearchFileMatches>,
    /// Whether `files` holds only the retained matches.
    pub truncated: bool,
    /// Matches found before capping.
    pub total: u64,
}

/// The `paths` shape.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SearchPaths {
    /// Replacement title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The retained paths.
    pub paths: Vec<String>,
    /// Whether `paths` is only the retained page.
    pub truncated: bool,
    /// Paths found before capping.
    pub total: u64,
}

/// One file's matches.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SearchFileMatches {
    /// The model-facing path.
    pub path: String,
    /// Matched lines, in file order.
    pub matches: Vec<SearchLineMatch>,
}

/// One matched line.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchLineMatch {
    /// 1-based line number.
    pub line_number: u64,
    /// The line text.
    pub line: String,
    /// A context line around a match (grep's `-A`/`-B`/`-C`), not a match.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub context: bool,
}

/// `{ card: 'read', title?, path, offset, lines, totalLines, lang?, content?, kind?, image?,
/// pages?, totalPages?, cells? }`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResultView {
    /// Replacement title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The model-facing path.
    pub path: String,
    /// The 1-based first line the window requested (kept when `lines` is empty).
    pub offset: u64,
    /// The window, each line keeping its file line number.
    pub lines: Vec<ReadFileLine>,
    /// Lines in the whole file.
    pub total_lines: u64,
    /// Syntax-highlighting hint from the extension.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lang: Option<String>,
    /// Plain text for a UI without the read card (and an image read's image block).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<ContentBlock>>,
    /// What was read when it is not a text file (then `lines` is empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<super::ReadKind>,
    /// An image read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<super::ReadImageView>,
    /// The PDF pages read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pages: Option<Vec<super::ReadPdfPage>>,
    /// Pages in the PDF.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_pages: Option<u64>,
    /// A notebook's cells.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cells: Option<Vec<super::ReadNotebookCell>>,
}

/// One numbered line of a read window.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReadFileLine {
    /// 1-based line number in the file.
    pub number: u64,
    /// The line without its newline.
    pub text: String,
}

impl ToolCallView {
    /// The card JSON (`None` only if serialization failed, which plain data cannot).
    pub fn to_json(&self) -> Option<Value> {
        serde_json::to_value(self).ok()
    }
}

impl ToolResultView {
    /// The card JSON.
    pub fn to_json(&self) -> Option<Value> {
        serde_json::to_value(self).ok()
    }
}
