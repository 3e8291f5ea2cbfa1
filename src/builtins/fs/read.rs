//! `read`: a window of a text file's lines, numbered like `cat -n` (Claude Code's Read).

use super::root::FsRoot;
use super::{file_error, regular_file};
use crate::builtins::cards::{language_of, location, parse, success_meta};
use crate::builtins::typed::{self, TextRenderer};
use crate::cards::{
    GenericCallView, ReadFileLine, ReadResultView, ToolCallKind, ToolCallView, ToolResultView,
};
use crate::tool::{
    Concurrency, DefinitionError, Render, ToolDefinition, ToolError, ToolRunContext,
};
use crate::tool::{ContentBlock, DurableResult, ToolCards};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::json;
use std::io::BufRead;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Lines returned when the call sets no `limit`.
const DEFAULT_LIMIT: u64 = 2000;
/// Longer lines are cut to this many characters.
const MAX_LINE_CHARS: usize = 2000;
/// A NUL byte within this many leading bytes marks a binary file.
const BINARY_PROBE_BYTES: usize = 8192;
/// Lines read between two looks at the signal.
const LINES_PER_CHECK: u64 = 4096;
/// Files up to this size are read on the calling task: from the page cache that is quicker
/// than handing the work to a blocking thread and back, which would cost a small read more
/// than the read itself. Larger files go to a blocking thread, so one `read` never holds an
/// async worker for long.
const INLINE_BYTES: u64 = 64 * 1024;

#[derive(Deserialize)]
struct ReadArgs {
    file_path: String,
    offset: Option<i64>,
    limit: Option<i64>,
}

/// The canonical value: the window, each line keeping its file line number.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadOutput {
    /// Root-relative path.
    pub path: String,
    /// The 1-based first line requested.
    pub offset: u64,
    /// The lines returned.
    pub lines: Vec<NumberedLine>,
    /// Lines in the whole file.
    pub total_lines: u64,
}

/// One line of the window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NumberedLine {
    /// 1-based line number in the file.
    pub number: u64,
    /// The text, without its line ending.
    pub text: String,
}

/// The `read` definition.
pub fn definition(root: Arc<FsRoot>) -> Result<ToolDefinition, DefinitionError> {
    let description = format!(
        "Read a text file inside the workspace root {root}. Returns up to {DEFAULT_LIMIT} lines \
         starting at `offset` (the 1-based line number, default 1), each prefixed with its line \
         number; lines longer than {MAX_LINE_CHARS} characters are cut. Paths are relative to \
         the root, or absolute inside it (or inside the host's spill directory, where results \
         too large to show are saved).",
        root = root.path().display()
    );
    ToolDefinition::builder("read")
        .description(description)
        .parameters(json!({
            "file_path": { "type": "string", "required": true, "description": "The file to read (relative to the root, or absolute inside it)." },
            "offset": { "type": "integer", "description": "1-based line number to start at." },
            "limit": { "type": "integer", "description": "Number of lines to read." }
        }))
        .output(json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "path": { "type": "string", "required": true },
                "offset": { "type": "integer", "required": true },
                "lines": {
                    "type": "array",
                    "required": true,
                    "items": {
                        "type": "object",
                        "additionalProperties": false,
                        "properties": {
                            "number": { "type": "integer", "required": true },
                            "text": { "type": "string", "required": true }
                        }
                    }
                },
                "totalLines": { "type": "integer", "required": true }
            }
        }))
        .render(Render::Custom(Arc::new(TextRenderer(render))))
        .concurrency(Concurrency::Parallel)
        .idempotent(true)
        .cards(Arc::new(ReadCards))
        .card_meta(typed::value_as_meta())
        .body(move |ctx: ToolRunContext| {
            let root = root.clone();
            async move {
                let args: ReadArgs = typed::arguments(ctx.arguments())?;
                let token = ctx.signal.to_token();
                let output = read(&root, args, CancellationToken::clone(&token)).await?;
                typed::output(&output)
            }
        })
}

/// Reads the window: a small file at once, a large one on a blocking thread.
async fn read(
    root: &FsRoot,
    args: ReadArgs,
    token: CancellationToken,
) -> Result<ReadOutput, ToolError> {
    let opened = open(root, &args)?;
    if opened.size <= INLINE_BYTES {
        return opened.window(&args.file_path, &token);
    }
    typed::blocking(move || opened.window(&args.file_path, &token)).await
}

/// A file opened for `read`, with the window asked of it.
struct Opened {
    file: std::fs::File,
    /// Its size when opened, which decides where its lines are read.
    size: u64,
    /// Root-relative path, as shown.
    display: String,
    offset: u64,
    limit: u64,
}

/// Checks the window and opens the file: path resolution and metadata only, which never
/// waits long on a local file system.
fn open(root: &FsRoot, args: &ReadArgs) -> Result<Opened, ToolError> {
    let offset = match args.offset {
        None | Some(0) => 1,
        Some(n) if n > 0 => n.unsigned_abs(),
        Some(_) => return Err(ToolError::new("offset must be a line number (1 or more)")),
    };
    let limit = match args.limit {
        None => DEFAULT_LIMIT,
        Some(n) if n > 0 => n.unsigned_abs(),
        Some(_) => return Err(ToolError::new("limit must be at least 1")),
    };
    let requested = &args.file_path;
    let spill_dir = root.for_reading(requested);
    let root = spill_dir.as_ref().unwrap_or(root);
    let confined = root.resolve(requested)?;
    let (file, size) = regular_file(root, &confined.path, requested)?;
    Ok(Opened {
        file,
        size,
        display: confined.display,
        offset,
        limit,
    })
}

impl Opened {
    /// Reads every line, keeping the window's.
    fn window(self, requested: &str, token: &CancellationToken) -> Result<ReadOutput, ToolError> {
        let mut reader = std::io::BufReader::new(self.file);
        let mut buffer = Vec::new();
        let mut lines = Vec::new();
        let (mut number, mut unprobed) = (0u64, BINARY_PROBE_BYTES);
        loop {
            buffer.clear();
            let line = next_line(&mut reader, &mut buffer, &mut unprobed)
                .map_err(|e| file_error("read", requested, &e))?;
            match line {
                Line::End => break,
                Line::Binary => {
                    return Err(ToolError::new(format!(
                        "\"{requested}\" looks like a binary file; read only reads text"
                    )));
                }
                Line::Text => {}
            }
            number += 1;
            if number % LINES_PER_CHECK == 0 && token.is_cancelled() {
                return Err(typed::aborted());
            }
            if number >= self.offset && number - self.offset < self.limit {
                lines.push(NumberedLine {
                    number,
                    text: line_text(&buffer),
                });
            }
        }
        Ok(ReadOutput {
            path: self.display,
            offset: self.offset,
            lines,
            total_lines: number,
        })
    }
}

/// What [`next_line`] found.
#[derive(Debug, PartialEq)]
enum Line {
    Text,
    Binary,
    End,
}

/// The bytes of one line kept at most: [`MAX_LINE_CHARS`] characters of up to four bytes,
/// plus `\r\n`. The rest of a longer line is skipped as it streams by, so a file of one
/// 3 GiB line costs a buffer, not its size.
const MAX_LINE_BYTES: usize = MAX_LINE_CHARS * 4 + 2;

/// Reads the next line into `buffer` (cut to [`MAX_LINE_BYTES`]), checking for NUL the
/// first `unprobed` bytes of the file as they pass.
fn next_line(
    reader: &mut impl BufRead,
    buffer: &mut Vec<u8>,
    unprobed: &mut usize,
) -> std::io::Result<Line> {
    let mut any = false;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if chunk.is_empty() {
            return Ok(if any { Line::Text } else { Line::End });
        }
        any = true;
        let newline = chunk.iter().position(|byte| *byte == b'\n');
        let taken = newline.map_or(chunk.len(), |at| at + 1);
        let probe = taken.min(*unprobed);
        if chunk[..probe].contains(&0) {
            return Ok(Line::Binary);
        }
        *unprobed -= probe;
        let room = MAX_LINE_BYTES.saturating_sub(buffer.len());
        buffer.extend_from_slice(&chunk[..taken.min(room)]);
        reader.consume(taken);
        if newline.is_some() {
            return Ok(Line::Text);
        }
    }
}

/// The line without `\n` / `\r\n`, decoded lossily and cut to [`MAX_LINE_CHARS`].
fn line_text(raw: &[u8]) -> String {
    let raw = raw.strip_suffix(b"\n").unwrap_or(raw);
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    String::from_utf8_lossy(raw)
        .chars()
        .take(MAX_LINE_CHARS)
        .collect()
}

/// `cat -n` lines, plus where to continue when the window stops before the end.
fn render(output: &ReadOutput) -> String {
    let (Some(first), Some(last)) = (output.lines.first(), output.lines.last()) else {
        return if output.total_lines == 0 {
            format!("(\"{}\" is empty)", output.path)
        } else {
            format!(
                "(no lines: offset {} is past the end of \"{}\", which has {} lines)",
                output.offset, output.path, output.total_lines
            )
        };
    };
    let numbered: Vec<String> = output
        .lines
        .iter()
        .map(|line| format!("{:>6}\t{}", line.number, line.text))
        .collect();
    let mut text = numbered.join("\n");
    if last.number < output.total_lines {
        text.push_str(&format!(
            "\n\n(showing lines {}-{} of {}; continue with offset {})",
            first.number,
            last.number,
            output.total_lines,
            last.number + 1
        ));
    }
    text
}

#[derive(Deserialize)]
struct PathCall {
    file_path: String,
    offset: Option<i64>,
}

/// `read`: a generic pending row, then the line-numbered `read` card.
struct ReadCards;

impl ToolCards for ReadCards {
    fn call_card(&self, arguments: &Value) -> Option<Value> {
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

    fn result_card(&self, _arguments: &Value, result: &DurableResult) -> Option<Value> {
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn check(raw: &[u8], expected: &str) {
        assert_eq!(line_text(raw), expected, "{raw:?}");
    }

    /// Every line of `bytes` as [`next_line`] keeps it, read through a small buffer.
    fn lines_of(bytes: &[u8]) -> Result<Vec<Vec<u8>>, ()> {
        let mut reader = std::io::BufReader::with_capacity(7, bytes);
        let (mut lines, mut unprobed) = (Vec::new(), 16);
        loop {
            let mut buffer = Vec::new();
            match next_line(&mut reader, &mut buffer, &mut unprobed).unwrap() {
                Line::End => return Ok(lines),
                Line::Binary => return Err(()),
                Line::Text => lines.push(buffer),
            }
        }
    }

    /// A file of `lines` numbered lines, each `width` bytes with its newline.
    fn numbered_file(dir: &std::path::Path, name: &str, lines: usize, width: usize) {
        let text: String = (1..=lines)
            .map(|n| format!("{n:0>w$}\n", w = width - 1))
            .collect();
        std::fs::write(dir.join(name), text).unwrap();
    }

    fn window_of(name: &str) -> ReadArgs {
        ReadArgs {
            file_path: name.to_owned(),
            offset: Some(3),
            limit: Some(2),
        }
    }

    #[tokio::test]
    async fn a_small_file_is_read_without_a_hand_off_and_a_large_one_on_a_blocking_thread() {
        use futures::FutureExt;
        let dir = tempfile::tempdir().unwrap();
        let root = FsRoot::open(dir.path().to_str().unwrap()).unwrap();
        numbered_file(dir.path(), "small.txt", 100, 8);
        // Four times the bound, so the blocking thread cannot be done before the first poll.
        let lines = usize::try_from(INLINE_BYTES * 4).unwrap() / 8;
        numbered_file(dir.path(), "large.txt", lines, 8);
        let token = CancellationToken::new();
        // A small file is read on the calling task: its read is ready at the first poll.
        let small = read(&root, window_of("small.txt"), token.clone())
            .now_or_never()
            .unwrap()
            .unwrap();
        let mut large = Box::pin(read(&root, window_of("large.txt"), token));
        assert!(
            (&mut large).now_or_never().is_none(),
            "a large file waits for a blocking thread"
        );
        let large = large.await.unwrap();
        for (output, total) in [(small, 100), (large, lines as u64)] {
            let numbers: Vec<u64> = output.lines.iter().map(|l| l.number).collect();
            assert_eq!(numbers, [3, 4]);
            assert_eq!(output.lines[0].text, "0000003");
            assert_eq!(output.total_lines, total);
        }
    }

    #[test]
    fn a_long_line_keeps_only_its_cut_and_the_lines_after_it_are_read() {
        let mut bytes = vec![b'y'; MAX_LINE_BYTES * 3];
        bytes.extend_from_slice(b"\nnext\nlast");
        let lines = lines_of(&bytes).unwrap();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0], vec![b'y'; MAX_LINE_BYTES]);
        assert_eq!(lines[1], b"next\n");
        assert_eq!(lines[2], b"last");
        assert_eq!(lines_of(b"").unwrap(), Vec::<Vec<u8>>::new());
    }

    #[test]
    fn nul_is_binary_within_the_probe_even_inside_a_long_line_and_text_after_it() {
        let mut early = vec![b'a'; 10];
        early.push(0);
        assert_eq!(lines_of(&early), Err(()));
        let mut late = vec![b'a'; 40];
        late.push(0);
        assert_eq!(lines_of(&late).unwrap().len(), 1);
    }

    #[test]
    fn line_endings_are_dropped_and_long_lines_cut() {
        check(b"plain\n", "plain");
        check(b"windows\r\n", "windows");
        check(b"last line", "last line");
        check(b"\xff bad utf8\n", "\u{fffd} bad utf8");
        let long = "x".repeat(MAX_LINE_CHARS + 5);
        check(long.as_bytes(), &"x".repeat(MAX_LINE_CHARS));
    }

    #[test]
    fn renders_windows_and_edges() {
        let line = |number, text: &str| NumberedLine {
            number,
            text: text.to_owned(),
        };
        let window = |offset, lines, total_lines| ReadOutput {
            path: "a.txt".to_owned(),
            offset,
            lines,
            total_lines,
        };
        let cases = [
            (
                window(1, vec![line(1, "a"), line(2, "b")], 2),
                "     1\ta\n     2\tb",
            ),
            (
                window(2, vec![line(2, "b")], 3),
                "     2\tb\n\n(showing lines 2-2 of 3; continue with offset 3)",
            ),
            (window(1, vec![], 0), "(\"a.txt\" is empty)"),
            (
                window(9, vec![], 3),
                "(no lines: offset 9 is past the end of \"a.txt\", which has 3 lines)",
            ),
        ];
        for (output, expected) in cases {
            assert_eq!(render(&output), expected);
        }
    }
}
