//! A stream's live output for the front end, coalesced: what arrived is reported once 8 KiB
//! are pending (unless the last report left under 50 ms ago), 50 ms after the first pending
//! byte, or at once when 1 MiB is pending. A trickle costs at most one report per 50 ms, and
//! a flood one per 50 ms or per MiB rather than one per pipe read: each report wakes the
//! writer and the client. Text is cut on UTF-8 boundaries.

use crate::tool::{OutputStream, Progress};
use std::time::Duration;
use tokio::time::Instant;

/// Bytes pending that are reported at once.
pub const FLUSH_BYTES: usize = 8 << 10;
/// The most one read of a pipe returns.
pub const READ_BYTES: usize = 64 << 10;
/// How long the first pending byte may wait, and the least time between two reports of
/// fewer than [`MAX_REPORT_BYTES`].
pub const FLUSH_AFTER: Duration = Duration::from_millis(50);
/// Bytes pending that are reported at once, however recent the last report.
pub const MAX_REPORT_BYTES: usize = 1 << 20;

/// One stream's pending live output.
pub struct LiveOutput {
    progress: Progress,
    stream: OutputStream,
    pending: Vec<u8>,
    since: Option<Instant>,
    last_report: Option<Instant>,
    /// Bytes left out since the last report because the listener would have dropped them.
    skipped: usize,
}

impl LiveOutput {
    pub fn new(progress: Progress, stream: OutputStream) -> Self {
        LiveOutput {
            progress,
            stream,
            pending: Vec::new(),
            since: None,
            last_report: None,
            skipped: 0,
        }
    }

    /// Takes bytes read from the stream, reporting them if enough are pending.
    pub fn push(&mut self, bytes: &[u8]) {
        self.push_at(bytes, Instant::now());
    }

    fn push_at(&mut self, mut bytes: &[u8], now: Instant) {
        if !self.progress.is_live() {
            return;
        }
        // While the listener would drop output (its allowance spent), none is copied or
        // checked: a flood then costs one counter.
        if self.pending.is_empty() && !self.progress.wants_output() {
            self.skipped += bytes.len();
            return;
        }
        if self.skipped > 0 {
            // The end of a character whose start was left out goes with it.
            let tail = bytes
                .iter()
                .take(3)
                .take_while(|&&b| is_continuation(b))
                .count();
            self.progress.output_skipped(self.skipped + tail);
            self.skipped = 0;
            bytes = &bytes[tail..];
        }
        self.pending.extend_from_slice(bytes);
        self.since.get_or_insert(now);
        let rested = self
            .last_report
            .is_none_or(|last| now.duration_since(last) >= FLUSH_AFTER);
        if self.pending.len() >= MAX_REPORT_BYTES || (self.pending.len() >= FLUSH_BYTES && rested) {
            self.flush_at(now);
        }
    }

    /// When pending output is due (none pending: never): 50 ms after its first byte, or
    /// after the last report once 8 KiB are pending.
    pub fn due(&self) -> Option<Instant> {
        let since = self.since?;
        let from = match self.last_report {
            Some(last) if self.pending.len() >= FLUSH_BYTES => last.min(since),
            _ => since,
        };
        Some(from + FLUSH_AFTER)
    }

    /// Reports what is pending, keeping an incomplete UTF-8 sequence at the end for the next
    /// read (at the end of the stream, `finish` reports it as it is).
    pub fn flush(&mut self) {
        self.flush_at(Instant::now());
    }

    fn flush_at(&mut self, now: Instant) {
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
        self.since = (!self.pending.is_empty()).then_some(now);
        self.last_report = Some(now);
        self.progress.output(self.stream, text);
    }

    /// Reports everything still pending (the stream ended).
    pub fn finish(mut self) {
        if self.skipped > 0 {
            self.progress.output_skipped(self.skipped);
        }
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

/// Whether `byte` continues a UTF-8 sequence rather than starting one.
fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
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
    use std::sync::atomic::{AtomicBool, Ordering};

    /// Reports as text, skips as `<skipped N>`; refuses output while `.1` is set.
    #[derive(Default)]
    struct Collect(Mutex<Vec<String>>, AtomicBool);

    impl ProgressSink for Collect {
        fn report(&self, _: &ToolExecution, event: ProgressEvent) {
            if let ProgressEvent::Output { text, .. } = event {
                self.0.lock().push(text);
            }
        }

        fn wants_output(&self, _: &ToolExecution) -> bool {
            !self.1.load(Ordering::Relaxed)
        }

        fn output_skipped(&self, _: &ToolExecution, bytes: usize) {
            self.0.lock().push(format!("<skipped {bytes}>"));
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
    fn within_50_ms_of_a_report_output_waits_unless_a_mib_is_pending() {
        let (mut live, sink) = live();
        let start = Instant::now();
        live.push_at(&[b'x'; FLUSH_BYTES], start);
        assert_eq!(sink.0.lock().len(), 1);
        let soon = start + FLUSH_AFTER / 2;
        live.push_at(&[b'y'; FLUSH_BYTES], soon);
        assert_eq!(sink.0.lock().len(), 1, "8 KiB right after a report wait");
        assert_eq!(live.due(), Some(start + FLUSH_AFTER));
        live.push_at(&vec![b'z'; MAX_REPORT_BYTES - FLUSH_BYTES], soon);
        let reports = sink.0.lock().clone();
        assert_eq!(reports.len(), 2, "a full MiB goes at once");
        assert_eq!(reports[1].len(), MAX_REPORT_BYTES);
        live.push_at(&[b'w'; FLUSH_BYTES], start + FLUSH_AFTER * 2);
        assert_eq!(sink.0.lock().len(), 3, "8 KiB once 50 ms passed go at once");
    }

    #[test]
    fn invalid_bytes_are_reported_lossily_at_the_end() {
        let (mut live, sink) = live();
        live.push(&[b'a', 0xE2]);
        live.finish();
        assert_eq!(*sink.0.lock(), ["a", "\u{FFFD}"]);
    }

    #[test]
    fn output_the_listener_would_drop_is_counted_not_kept() {
        let (mut live, sink) = live();
        sink.1.store(true, Ordering::Relaxed);
        let euro = "€".as_bytes();
        live.push(&[b'x'; 3 * READ_BYTES]);
        live.push(&euro[..1]);
        assert!(live.due().is_none(), "nothing is pending");
        sink.1.store(false, Ordering::Relaxed);
        // The rest of the euro sign goes with the skipped bytes.
        live.push(&[&euro[1..], b"after"].concat());
        live.finish();
        let skipped = format!("<skipped {}>", 3 * READ_BYTES + euro.len());
        assert_eq!(*sink.0.lock(), [skipped, "after".to_string()]);
    }

    #[test]
    fn a_stream_that_ends_while_skipping_tells_what_it_skipped() {
        let (mut live, sink) = live();
        live.push(b"first");
        live.flush();
        sink.1.store(true, Ordering::Relaxed);
        live.push(b"second");
        live.finish();
        assert_eq!(*sink.0.lock(), ["first", "<skipped 6>"]);
    }
}
