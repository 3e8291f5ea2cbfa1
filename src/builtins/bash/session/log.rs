//! A session's output: every byte streamed to its file as it arrives, and the model's text
//! (escape sequences removed on a terminal) in a bounded window of the latest bytes, with a
//! read position. A read returns what arrived since the last one; when more arrived than the
//! window keeps or a result may show, its tail and a marker naming the file.

use super::terminal::TerminalText;
use crate::spill::{SpillFault, SpillRef, SpillWriter};
use regex::bytes::Regex;
use std::collections::VecDeque;
use std::path::PathBuf;

/// Latest text bytes kept in memory per session (what `until` is matched against).
pub const WINDOW_BYTES: usize = 256 << 10;
/// Bytes of the tail `bash/exited` carries.
pub const TAIL_BYTES: usize = 2_000;

/// Where the whole stream goes.
enum File {
    Writing(SpillWriter),
    Saved(SpillRef),
    Failed(String),
}

/// One session's output.
pub struct SessionLog {
    window: VecDeque<u8>,
    /// Text offset of the window's first byte.
    start: u64,
    /// Text bytes so far.
    end: u64,
    /// Text bytes the model has been given.
    read: u64,
    terminal: Option<TerminalText>,
    file: File,
}

/// What a read returns.
#[derive(Debug, Default)]
pub struct Unread {
    /// The text since the last read, or its tail.
    pub text: String,
    /// Bytes since the last read that are not in `text` (they are in the file).
    pub skipped: u64,
}

/// The file holding the whole stream, as a result names it.
#[derive(Debug, Clone)]
pub struct Saved {
    pub path: PathBuf,
    pub bytes: u64,
}

impl SessionLog {
    /// A log streaming into `file` (or noting why it cannot), converting a terminal's
    /// output to text when `terminal`.
    pub fn new(file: Result<SpillWriter, SpillFault>, terminal: bool) -> Self {
        SessionLog {
            window: VecDeque::new(),
            start: 0,
            end: 0,
            read: 0,
            terminal: terminal.then(TerminalText::default),
            file: match file {
                Ok(writer) => File::Writing(writer),
                Err(fault) => File::Failed(fault.0),
            },
        }
    }

    /// Takes bytes the command printed (blocking only on the page cache); on a terminal,
    /// returns their text.
    pub fn push(&mut self, raw: &[u8]) -> Option<Vec<u8>> {
        if let File::Writing(writer) = &mut self.file
            && let Err(fault) = writer.write(raw)
        {
            tracing::warn!("a session's output is no longer saved whole: {}", fault.0);
            self.file = File::Failed(fault.0);
        }
        match self.terminal.as_mut() {
            Some(terminal) => {
                let text = terminal.feed(raw);
                self.push_text(&text);
                Some(text)
            }
            None => {
                self.push_text(raw);
                None
            }
        }
    }

    fn push_text(&mut self, text: &[u8]) {
        self.end += text.len() as u64;
        let text = &text[text.len().saturating_sub(WINDOW_BYTES)..];
        let over = (self.window.len() + text.len()).saturating_sub(WINDOW_BYTES);
        self.window.drain(..over);
        self.window.extend(text);
        self.start = self.end - self.window.len() as u64;
    }

    /// The stream ended: the file is closed (and may be evicted like any spill file).
    pub fn finish(&mut self) {
        let file = std::mem::replace(&mut self.file, File::Failed(String::new()));
        self.file = match file {
            File::Writing(writer) => match writer.finish() {
                Ok(saved) => File::Saved(saved),
                Err(fault) => File::Failed(fault.0),
            },
            other => other,
        };
    }

    /// Text bytes so far (a position `until` matching and reads count in).
    pub fn end(&self) -> u64 {
        self.end
    }

    /// Whether text arrived since the last read.
    pub fn has_unread(&self) -> bool {
        self.end > self.read
    }

    /// Text bytes not read yet.
    pub fn unread_bytes(&self) -> u64 {
        self.end - self.read
    }

    /// Marks everything so far as read (the model saw it in another form).
    pub fn mark_read(&mut self) {
        self.read = self.end;
    }

    /// The text since the last read (its last `limit` bytes at most) and how much of it is
    /// left out; the read position moves to the end.
    pub fn take_unread(&mut self, limit: usize) -> Unread {
        let from = self.read.max(self.start);
        let shown_from = from.max(self.end.saturating_sub(limit as u64));
        let skipped = shown_from - self.read;
        let bytes = self.slice_from(shown_from);
        self.read = self.end;
        if skipped > 0 {
            self.flush_file();
        }
        Unread {
            text: text_from_cut(&bytes),
            skipped,
        }
    }

    /// The last `bytes` of text, starting on a line when there is one.
    pub fn tail(&self, bytes: usize) -> String {
        let from = self.start.max(self.end.saturating_sub(bytes as u64));
        let slice = self.slice_from(from);
        let text = text_from_cut(&slice);
        match (from > self.start, text.find('\n')) {
            (true, Some(newline)) if newline + 1 < text.len() => text[newline + 1..].to_owned(),
            _ => text,
        }
    }

    /// Whether `pattern` matches the unread text from `scan` on (rescanning from the line
    /// `scan` lies in, so a line split between two reads still matches whole); `scan`
    /// moves to the end.
    pub fn unread_matches(&mut self, pattern: &Regex, scan: &mut u64) -> bool {
        let from = (*scan).max(self.read).max(self.start);
        let bytes = self.window.make_contiguous();
        let offset = (from - self.start) as usize;
        let line = bytes[..offset]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let read_offset = (self.read.max(self.start) - self.start) as usize;
        let found = pattern.is_match(&bytes[line.max(read_offset)..]);
        *scan = self.end;
        found
    }

    /// The file with every byte so far (flushed, so it can be read now).
    pub fn saved(&mut self) -> Option<Saved> {
        self.flush_file();
        match &self.file {
            File::Writing(writer) => Some(Saved {
                path: writer.path().to_owned(),
                bytes: writer.bytes(),
            }),
            File::Saved(saved) => Some(Saved {
                path: saved.path.clone(),
                bytes: saved.bytes,
            }),
            File::Failed(_) => None,
        }
    }

    /// Why the stream is not saved whole, if it is not.
    pub fn unsaved(&self) -> Option<&str> {
        match &self.file {
            File::Failed(why) => Some(why),
            _ => None,
        }
    }

    fn flush_file(&mut self) {
        if let File::Writing(writer) = &mut self.file
            && let Err(fault) = writer.flush()
        {
            self.file = File::Failed(fault.0);
        }
    }

    fn slice_from(&self, from: u64) -> Vec<u8> {
        let offset = (from.saturating_sub(self.start) as usize).min(self.window.len());
        self.window.range(offset..).copied().collect()
    }
}

/// `bytes` as text, a character cut at the front dropped and invalid sequences replaced.
fn text_from_cut(bytes: &[u8]) -> String {
    let start = bytes
        .iter()
        .take(3)
        .take_while(|&&b| b & 0xC0 == 0x80)
        .count();
    String::from_utf8_lossy(&bytes[start..]).into_owned()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn log() -> SessionLog {
        SessionLog::new(Err(SpillFault("off".into())), false)
    }

    #[test]
    fn a_read_returns_what_arrived_since_the_last_one() {
        let mut log = log();
        log.push(b"one\n");
        assert_eq!(log.take_unread(100).text, "one\n");
        assert!(!log.has_unread());
        log.push(b"two\n");
        log.push(b"three\n");
        let unread = log.take_unread(100);
        assert_eq!((unread.text.as_str(), unread.skipped), ("two\nthree\n", 0));
    }

    #[test]
    fn past_the_limit_or_the_window_a_read_returns_the_tail_and_counts_the_rest() {
        let mut log = log();
        log.push(b"0123456789");
        let unread = log.take_unread(4);
        assert_eq!((unread.text.as_str(), unread.skipped), ("6789", 6));
        let flood = vec![b'x'; WINDOW_BYTES * 3];
        log.push(&flood);
        log.push(b"end");
        let unread = log.take_unread(usize::MAX);
        assert_eq!(unread.skipped, (WINDOW_BYTES * 2 + 3) as u64);
        assert!(unread.text.ends_with("xend") && unread.text.len() == WINDOW_BYTES);
    }

    #[test]
    fn until_matches_only_unread_text_and_a_line_split_across_pushes() {
        let mut log = log();
        let ready = Regex::new("^ready$").unwrap();
        let pattern = Regex::new("(?m)^ready$").unwrap();
        log.push(b"ready\n");
        log.mark_read();
        let mut scan = 0;
        assert!(
            !log.unread_matches(&pattern, &mut scan),
            "read text is not matched again"
        );
        log.push(b"not re");
        assert!(!log.unread_matches(&pattern, &mut scan));
        log.push(b"ady\nrea");
        assert!(!log.unread_matches(&pattern, &mut scan));
        log.push(b"dy\n");
        assert!(log.unread_matches(&pattern, &mut scan));
        assert!(!ready.is_match(b"not ready"));
    }

    #[test]
    fn a_terminal_log_keeps_text_and_the_tail_starts_on_a_line() {
        let mut log = SessionLog::new(Err(SpillFault("off".into())), true);
        log.push(b"\x1b[1mfirst\x1b[0m\r\nsecond\r\nthird\r\n");
        assert_eq!(log.tail(12), "third\n");
        assert_eq!(log.take_unread(100).text, "first\nsecond\nthird\n");
    }
}
