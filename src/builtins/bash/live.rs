//! A stream's live output for the front end, coalesced: what arrived is reported once 8 KiB
//! are pending or 50 ms after the first pending byte, so a flood costs one report per 8 KiB
//! or more and a trickle at most one per 50 ms. Text is cut on UTF-8 boundaries.

use crate::tool::{OutputStream, Progress};
use std::time::Duration;
use tokio::time::Instant;

/// Bytes pending that are reported at once.
pub const FLUSH_BYTES: usize = 8 << 10;
/// The most one read of a pipe returns.
pub const READ_BYTES: usize = 64 << 10;
/// How long the first pending byte may wait.
pub const FLUSH_AFTER: Duration = Duration::from_millis(50);

/// One stream's pending live output.
pub struct LiveOutput {
    progress: Progress,
    stream: OutputStream,
    pending: Vec<u8>,
    since: Option<Instant>,
}

impl LiveOutput {
    pub fn new(progress: Progress, stream: OutputStream) -> Self {
        LiveOutput {
            progress,
            stream,
            pending: Vec::new(),
            since: None,
        }
    }

    /// Takes bytes read from the stream, reporting them if enough are pending.
    pub fn push(&mut self, bytes: &[u8]) {
        if !self.progress.is_live() {
            return;
        }
        self.pending.extend_from_slice(bytes);
        self.since.get_or_insert_with(Instant::now);
        if self.pending.len() >= FLUSH_BYTES {
            self.flush();
        }
    }

    /// When pending output is due (none pending: never).
    pub fn due(&self) -> Option<Instant> {
        self.since.map(|since| since + FLUSH_AFTER)
    }

    /// Reports what is pending, keeping an incomplete UTF-8 sequence at the end for the next
    /// read (at the end of the stream, `finish` reports it as it is).
    pub fn flush(&mut self) {
        let cut = complete_prefix(&self.pending);
        if cut == 0 {
            self.since = None;
            return;
        }
        // The pending bytes become the report's text without a copy; the next ones go into
        // a buffer sized for a full read and a flush.
        let mut next = Vec::with_capacity(READ_BYTES + FLUSH_BYTES);
        next.extend_from_slice(&self.pending[cut..]);
        self.pending.truncate(cut);
        let text = text_of(std::mem::replace(&mut self.pending, next));
        self.since = (!self.pending.is_empty()).then(Instant::now);
        self.progress.output(self.stream, text);
    }

    /// Reports everything still pending (the stream ended).
    pub fn finish(mut self) {
        self.flush();
        if !self.pending.is_empty() {
            let text = text_of(std::mem::take(&mut self.pending));
            self.progress.output(self.stream, text);
        }
    }
}

/// `bytes` as text, invalid sequences replaced (copied only then).
fn text_of(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes)
        .unwrap_or_else(|invalid| String::from_utf8_lossy(invalid.as_bytes()).into_owned())
}

/// The length of `bytes` without a trailing UTF-8 sequence that more bytes may complete.
fn complete_prefix(bytes: &[u8]) -> usize {
    // A sequence is at most 4 bytes: look for its lead byte among the last 3.
    for back in 1..=bytes.len().min(3) {
        let byte = bytes[bytes.len() - back];
        let width = match byte {
            0x00..=0x7F => return bytes.len(),
            0x80..=0xBF => continue,
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            _ => 4,
        };
        return if width > back {
            bytes.len() - back
        } else {
            bytes.len()
        };
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::{ExecutionToken, ProgressEvent, ProgressSink, Signal, ToolExecution};
    use parking_lot::Mutex;
    use std::sync::Arc;

    #[derive(Default)]
    struct Collect(Mutex<Vec<String>>);

    impl ProgressSink for Collect {
        fn report(&self, _: &ToolExecution, event: ProgressEvent) {
            if let ProgressEvent::Output { text, .. } = event {
                self.0.lock().push(text);
            }
        }
    }

    fn live() -> (LiveOutput, Arc<Collect>) {
        let sink = Arc::new(Collect::default());
        let execution = Arc::new(ToolExecution {
            token: ExecutionToken::fresh(),
            call_id: "c".into(),
            name: "bash".into(),
            arguments: Arc::new(serde_json::json!({})),
            agent: None,
            parent: None,
            signal: Signal::never(),
        });
        let dyn_sink: Arc<dyn ProgressSink> = sink.clone();
        let progress = Progress::new(&execution, Some(&dyn_sink));
        (LiveOutput::new(progress, OutputStream::Stdout), sink)
    }

    #[test]
    fn a_split_character_waits_for_its_last_byte() {
        let (mut live, sink) = live();
        let euro = "€".as_bytes();
        live.push(b"a");
        live.push(&euro[..2]);
        live.flush();
        live.push(&euro[2..]);
        live.finish();
        assert_eq!(*sink.0.lock(), ["a", "€"]);
    }

    #[test]
    fn eight_kib_pending_are_reported_at_once() {
        let (mut live, sink) = live();
        live.push(&[b'x'; FLUSH_BYTES - 1]);
        assert!(sink.0.lock().is_empty() && live.due().is_some());
        live.push(b"y");
        assert_eq!(sink.0.lock().len(), 1);
        assert_eq!(sink.0.lock()[0].len(), FLUSH_BYTES);
        assert!(live.due().is_none());
    }

    #[test]
    fn invalid_bytes_are_reported_lossily_at_the_end() {
        let (mut live, sink) = live();
        live.push(&[b'a', 0xE2]);
        live.finish();
        assert_eq!(*sink.0.lock(), ["a", "\u{FFFD}"]);
    }
}
