//! Text files: a window of lines, numbered like `cat -n` (Claude Code's Read), the whole
//! file streamed once so its line count and content hash (for stale-edit protection) come
//! with the window.

use super::{ReadArgs, TextRead};
use crate::builtins::fs::file_error;
use crate::builtins::fs::ledger::Seen;
use crate::builtins::typed;
use crate::tool::ToolError;
use serde::{Deserialize, Serialize};
use std::io::BufRead;
use tokio_util::sync::CancellationToken;
use xxhash_rust::xxh3::Xxh3;

/// Lines returned when the call sets no `limit`.
pub(super) const DEFAULT_LIMIT: u64 = 2000;
/// Longer lines are cut to this many characters.
pub(super) const MAX_LINE_CHARS: usize = 2000;
/// A NUL byte within this many leading bytes marks a binary file.
const BINARY_PROBE_BYTES: usize = 8192;
/// Lines read between two looks at the signal.
const LINES_PER_CHECK: u64 = 4096;
/// Files up to this size are read on the calling task: from the page cache that is quicker
/// than handing the work to a blocking thread and back, which would cost a small read more
/// than the read itself. Larger files go to a blocking thread, so one `read` never holds an
/// async worker for long.
pub(super) const INLINE_BYTES: u64 = 64 * 1024;

/// One line of the window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NumberedLine {
    /// 1-based line number in the file.
    pub number: u64,
    /// The text, without its line ending.
    pub text: String,
}

/// The window asked of a text file.
pub(super) struct Window {
    offset: u64,
    limit: u64,
}

impl Window {
    /// Checks `offset` and `limit` (before any file is opened).
    pub(super) fn of(args: &ReadArgs) -> Result<Window, ToolError> {
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
        Ok(Window { offset, limit })
    }
}

/// A text file opened for `read`, with the window asked of it.
pub(super) struct Opened {
    pub(super) file: std::fs::File,
    /// Its metadata when opened (the mtime recorded with the read).
    pub(super) meta: std::fs::Metadata,
    /// Root-relative path, as shown.
    pub(super) display: String,
    pub(super) window: Window,
}

impl Opened {
    /// Reads every line, keeping the window's; returns it with what the file looked like.
    pub(super) fn window(
        self,
        requested: &str,
        token: &CancellationToken,
    ) -> Result<(TextRead, Seen), ToolError> {
        let mut reader = std::io::BufReader::new(self.file);
        let mut buffer = Vec::new();
        let mut lines = Vec::new();
        let (mut number, mut unprobed) = (0u64, BINARY_PROBE_BYTES);
        let mut hashed = Hashed::default();
        let Window { offset, limit } = self.window;
        loop {
            buffer.clear();
            let line = next_line(&mut reader, &mut buffer, &mut unprobed, &mut hashed)
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
            if number >= offset && number - offset < limit {
                lines.push(NumberedLine {
                    number,
                    text: line_text(&buffer),
                });
            }
        }
        let seen = Seen {
            mtime: self.meta.modified().ok(),
            size: hashed.bytes,
            hash: hashed.hasher.digest(),
        };
        let read = TextRead {
            path: self.display,
            offset,
            lines,
            total_lines: number,
        };
        Ok((read, seen))
    }
}

/// The bytes streamed so far and their running hash.
#[derive(Default)]
struct Hashed {
    hasher: Xxh3,
    bytes: u64,
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
    hashed: &mut Hashed,
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
        hashed.hasher.update(&chunk[..taken]);
        hashed.bytes += taken as u64;
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
pub(super) fn render(output: &TextRead) -> String {
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
            match next_line(
                &mut reader,
                &mut buffer,
                &mut unprobed,
                &mut Hashed::default(),
            )
            .unwrap()
            {
                Line::End => return Ok(lines),
                Line::Binary => return Err(()),
                Line::Text => lines.push(buffer),
            }
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
        let window = |offset, lines, total_lines| TextRead {
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
