//! Checking one LSP header block, and finding where a block may start again after garbage.

/// Longest header line accepted (without its line ending).
pub(super) const MAX_HEADER_LINE: usize = 8 * 1024;
/// Longest header block accepted; it bounds what the reader buffers before a body starts.
pub(super) const MAX_HEADER_BLOCK: usize = 16 * 1024;

const NOT_A_HEADER: &str = "expected a header line";
const BAD_CONTENT_LENGTH: &str = "invalid Content-Length";
const CONFLICTING_CONTENT_LENGTH: &str = "conflicting Content-Length headers";
const MISSING_CONTENT_LENGTH: &str = "header block has no Content-Length";
const LINE_TOO_LONG: &str = "header line longer than 8192 bytes";
const BLOCK_TOO_LONG: &str = "header block longer than 16384 bytes";

/// The header name searched for after garbage, lowercase, with its colon.
const RESYNC_MARK: &[u8] = b"content-length:";
/// Bytes kept after a failed search, so a mark split across two reads is still found.
pub(super) const RESYNC_OVERLAP: usize = RESYNC_MARK.len() - 1;

/// What the bytes at a frame boundary turned out to be.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Scan {
    /// An empty line where a block would start: whitespace between frames.
    BlankLine { len: usize },
    /// A valid block of `len` bytes (terminating empty line included).
    Frame { len: usize, content_length: usize },
    /// Not a valid block; the reason names the first problem.
    Invalid(&'static str),
    /// The block continues past the bytes seen so far.
    Incomplete,
}

/// Progress through a block that arrives across several reads, so each byte is checked once.
#[derive(Default)]
pub(super) struct HeaderScan {
    line_start: usize,
    /// Bytes before this offset contain no newline after `line_start`.
    searched: usize,
    content_length: Option<usize>,
}

impl HeaderScan {
    /// Continues checking the block at the start of `block`, which holds the bytes of the
    /// previous call (if any) plus possibly more.
    ///
    /// Limits are decided only when certain, so the outcome never depends on how the
    /// input was split into reads.
    pub(super) fn advance(&mut self, block: &[u8]) -> Scan {
        loop {
            let unsearched = block.get(self.searched..).unwrap_or_default();
            let Some(newline) = unsearched.iter().position(|&byte| byte == b'\n') else {
                self.searched = block.len();
                return if block.len() >= MAX_HEADER_BLOCK {
                    Scan::Invalid(BLOCK_TOO_LONG)
                } else {
                    Scan::Incomplete
                };
            };
            let newline = self.searched + newline;
            let line_end = newline + 1;
            let line = &block[self.line_start..newline];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line_end > MAX_HEADER_BLOCK {
                return Scan::Invalid(BLOCK_TOO_LONG);
            }
            if line.len() > MAX_HEADER_LINE {
                return Scan::Invalid(LINE_TOO_LONG);
            }
            if line.is_empty() {
                return match (self.line_start, self.content_length) {
                    (0, _) => Scan::BlankLine { len: line_end },
                    (_, Some(content_length)) => Scan::Frame {
                        len: line_end,
                        content_length,
                    },
                    (_, None) => Scan::Invalid(MISSING_CONTENT_LENGTH),
                };
            }
            match (content_length_of(line), self.content_length) {
                (Err(reason), _) => return Scan::Invalid(reason),
                (Ok(Some(new)), Some(old)) if new != old => {
                    return Scan::Invalid(CONFLICTING_CONTENT_LENGTH);
                }
                (Ok(Some(new)), _) => self.content_length = Some(new),
                (Ok(None), _) => {}
            }
            self.line_start = line_end;
            self.searched = line_end;
        }
    }
}

/// Checks one `Name: value` line; the value is returned only for `Content-Length`.
fn content_length_of(line: &[u8]) -> Result<Option<usize>, &'static str> {
    let Some(colon) = line.iter().position(|&byte| byte == b':') else {
        return Err(NOT_A_HEADER);
    };
    let (name, value) = (&line[..colon], &line[colon + 1..]);
    // RFC 9110 token characters: anything else (JSON, stray text) is not a header name.
    let is_token = |byte: &u8| byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(byte);
    if name.is_empty() || !name.iter().all(is_token) {
        return Err(NOT_A_HEADER);
    }
    if !name.eq_ignore_ascii_case(&RESYNC_MARK[..RESYNC_MARK.len() - 1]) {
        return Ok(None);
    }
    let digits = value.trim_ascii();
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(BAD_CONTENT_LENGTH);
    }
    digits
        .iter()
        .try_fold(0usize, |total, digit| {
            total
                .checked_mul(10)?
                .checked_add(usize::from(digit - b'0'))
        })
        .map(Some)
        .ok_or(BAD_CONTENT_LENGTH)
}

/// Offset of the first `content-length:` (any ASCII case) in `bytes`: after garbage, the
/// only place where a header block is trusted to start.
pub(super) fn find_resync_mark(bytes: &[u8]) -> Option<usize> {
    bytes
        .windows(RESYNC_MARK.len())
        .position(|window| window.eq_ignore_ascii_case(RESYNC_MARK))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Scans `input` whole, and again growing one byte at a time, expecting the same answer.
    fn check(input: &[u8], expected: Scan) {
        assert_eq!(
            HeaderScan::default().advance(input),
            expected,
            "whole input"
        );
        let mut scan = HeaderScan::default();
        let mut outcome = Scan::Incomplete;
        for end in 1..=input.len() {
            outcome = scan.advance(&input[..end]);
            if outcome != Scan::Incomplete {
                break;
            }
        }
        assert_eq!(outcome, expected, "byte by byte");
    }

    fn frame(len: usize, content_length: usize) -> Scan {
        Scan::Frame {
            len,
            content_length,
        }
    }

    #[test]
    fn accepts_valid_blocks() {
        check(b"Content-Length: 2\r\n\r\n{}", frame(21, 2));
        check(b"content-length:2\n\n", frame(18, 2));
        check(b"CONTENT-LENGTH: \t 007 \t\r\n\r\n", frame(27, 7));
        check(b"Content-Length: 0\r\n\r\n", frame(21, 0));
        check(
            b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 5\r\n\r\n",
            frame(78, 5),
        );
        check(
            b"X-Trace: 1\r\nContent-Length: 5\nX-Other:\r\n\r\n",
            frame(42, 5),
        );
        check(
            b"Content-Length: 5\r\nContent-Length: 5\r\n\r\n",
            frame(40, 5),
        );
        check(b"\r\nContent-Length: 5\r\n\r\n", Scan::BlankLine { len: 2 });
        check(b"\nContent-Length: 5\r\n\r\n", Scan::BlankLine { len: 1 });
    }

    #[test]
    fn waits_for_the_rest_of_a_block() {
        check(b"", Scan::Incomplete);
        check(b"Content-Length: 2\r\n", Scan::Incomplete);
        check(b"Content-Length: 2\r\n\r", Scan::Incomplete);
        check(b"garbage without a newline", Scan::Incomplete);
    }

    #[test]
    fn rejects_bad_blocks() {
        let invalid = |input: &[u8], reason: &'static str| check(input, Scan::Invalid(reason));
        invalid(b"hello\r\n", NOT_A_HEADER);
        invalid(b"{\"jsonrpc\":\"2.0\"}\n", NOT_A_HEADER);
        invalid(b": value\r\n", NOT_A_HEADER);
        invalid(b"Content Length: 2\r\n\r\n", NOT_A_HEADER);
        invalid(b"Content-Length : 2\r\n\r\n", NOT_A_HEADER);
        invalid(b"Content-Length: 2\r\n garbage\r\n\r\n", NOT_A_HEADER);
        invalid(b"Content-Length: abc\r\n", BAD_CONTENT_LENGTH);
        invalid(b"Content-Length: -2\r\n", BAD_CONTENT_LENGTH);
        invalid(b"Content-Length: +2\r\n", BAD_CONTENT_LENGTH);
        invalid(b"Content-Length: 2.0\r\n", BAD_CONTENT_LENGTH);
        invalid(b"Content-Length: 2 3\r\n", BAD_CONTENT_LENGTH);
        invalid(b"Content-Length:\r\n", BAD_CONTENT_LENGTH);
        invalid(
            b"Content-Length: 99999999999999999999999\r\n",
            BAD_CONTENT_LENGTH,
        );
        invalid(
            b"Content-Length: 2\r\nContent-Length: 3\r\n",
            CONFLICTING_CONTENT_LENGTH,
        );
        invalid(b"Content-Type: text/plain\r\n\r\n", MISSING_CONTENT_LENGTH);
        invalid(
            b"Content-LenContent-Length: 2\r\n\r\n",
            MISSING_CONTENT_LENGTH,
        );
    }

    #[test]
    fn bounds_lines_and_blocks() {
        let line =
            |value_len: usize| [b"X-Big: ".as_slice(), &vec![b'a'; value_len], b"\r\n"].concat();
        let longest = line(MAX_HEADER_LINE - 7);
        check(
            &[longest.as_slice(), b"Content-Length: 1\r\n\r\n"].concat(),
            frame(8194 + 21, 1),
        );
        check(&line(MAX_HEADER_LINE - 6), Scan::Invalid(LINE_TOO_LONG));
        let many_lines = b"X-A: b\r\n".repeat(MAX_HEADER_BLOCK / 8);
        check(&many_lines, Scan::Invalid(BLOCK_TOO_LONG));
        check(&many_lines[..MAX_HEADER_BLOCK - 1], Scan::Incomplete);
        check(&vec![b'a'; MAX_HEADER_BLOCK], Scan::Invalid(BLOCK_TOO_LONG));
    }

    #[test]
    fn finds_the_resync_mark_in_any_case() {
        let check = |input: &[u8], expected: Option<usize>| {
            assert_eq!(
                find_resync_mark(input),
                expected,
                "{:?}",
                String::from_utf8_lossy(input)
            );
        };
        check(b"", None);
        check(b"Content-Length", None);
        check(b"xxContent-Length: 2", Some(2));
        check(b"}cOnTeNt-LeNgTh:", Some(1));
        check(b"content-length :", None);
    }
}
