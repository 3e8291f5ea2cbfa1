//! Reading newline-delimited JSON: one message per line, blank lines ignored.

use tokio::io::AsyncRead;

use super::ReadEvent;
use super::input::Input;

/// Reads up to the next non-blank line; `\r\n` endings are accepted, and a final line
/// without a newline is still a message (the JSON parser judges whether it is whole).
///
/// A line longer than the limit is dropped as it streams past, never buffered whole.
pub(super) async fn next_line<R: AsyncRead + Unpin>(
    input: &mut Input<R>,
    max_message_bytes: usize,
) -> ReadEvent {
    // The start of a line that did not end inside the buffer.
    let mut line = Vec::new();
    loop {
        let available = input.available();
        if let Some(newline) = available.iter().position(|&byte| byte == b'\n') {
            let ends_with_cr = match newline {
                0 => line.last() == Some(&b'\r'),
                _ => available[newline - 1] == b'\r',
            };
            let size = line.len() + newline - usize::from(ends_with_cr);
            if size > max_message_bytes {
                input.consume(newline + 1);
                return ReadEvent::TooLarge { size };
            }
            line.extend_from_slice(&available[..newline]);
            input.consume(newline + 1);
            line.truncate(size);
            if is_blank(&line) {
                line.clear();
                continue;
            }
            return ReadEvent::Message(line);
        }
        let seen = line.len() + available.len();
        if seen > max_message_bytes.saturating_add(1) {
            let last = available.last().or(line.last()).copied();
            input.consume_all();
            return discard_rest_of_line(input, seen, last).await;
        }
        line.extend_from_slice(available);
        input.consume_all();
        if !input.fill().await {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return match (line.len() > max_message_bytes, is_blank(&line)) {
                (true, _) => ReadEvent::TooLarge { size: line.len() },
                (false, true) => ReadEvent::Eof,
                (false, false) => ReadEvent::Message(line),
            };
        }
    }
}

/// Whitespace-only lines separate nothing and carry nothing.
fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|byte| matches!(byte, b' ' | b'\t' | b'\r'))
}

/// Drops an over-long line up to and including its newline; `seen` bytes of it (the last
/// one being `last`) are already gone. Returns the `TooLarge` naming its full length.
async fn discard_rest_of_line<R: AsyncRead + Unpin>(
    input: &mut Input<R>,
    mut seen: usize,
    mut last: Option<u8>,
) -> ReadEvent {
    let mut ended = false;
    while !ended && input.fill().await {
        let available = input.available();
        let length = available.iter().position(|&byte| byte == b'\n');
        ended = length.is_some();
        let length = length.unwrap_or(available.len());
        seen += length;
        last = available[..length].last().copied().or(last);
        input.consume(length + usize::from(ended));
    }
    ReadEvent::TooLarge {
        size: seen - usize::from(last == Some(b'\r')),
    }
}
