//! The reader's byte buffer: one fixed allocation refilled from the stream in large reads.

use std::io;

use tokio::io::{AsyncRead, AsyncReadExt};

/// Buffer size: several times the largest header block kept for a rescan (16 KiB), and
/// large enough that small frames cost one copy and no system call each.
const CAPACITY: usize = 64 * 1024;

/// Bytes read from the stream but not yet consumed, plus how the stream ended.
pub(super) struct Input<R> {
    reader: R,
    buffer: Box<[u8]>,
    start: usize,
    end: usize,
    exhausted: bool,
    error: Option<io::Error>,
}

impl<R: AsyncRead + Unpin> Input<R> {
    pub(super) fn new(reader: R) -> Self {
        Input {
            reader,
            buffer: vec![0; CAPACITY].into_boxed_slice(),
            start: 0,
            end: 0,
            exhausted: false,
            error: None,
        }
    }

    /// Bytes read but not yet consumed.
    pub(super) fn available(&self) -> &[u8] {
        &self.buffer[self.start..self.end]
    }

    /// Marks the first `count` available bytes as used (clamped to what is available).
    pub(super) fn consume(&mut self, count: usize) {
        self.start = self.start.saturating_add(count).min(self.end);
    }

    pub(super) fn consume_all(&mut self) {
        self.start = self.end;
    }

    /// Appends at least one byte to `available()`, keeping it; false once the stream has
    /// ended or failed. Callers keep less than the capacity available when they call it.
    pub(super) async fn fill(&mut self) -> bool {
        if self.exhausted {
            return false;
        }
        if self.start > 0 {
            self.buffer.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        debug_assert!(self.end < self.buffer.len(), "fill called on a full buffer");
        loop {
            match self.reader.read(&mut self.buffer[self.end..]).await {
                Ok(0) => {
                    self.exhausted = true;
                    return false;
                }
                Ok(count) => {
                    self.end += count;
                    return true;
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => {
                    self.exhausted = true;
                    self.error = Some(error);
                    return false;
                }
            }
        }
    }

    /// The error that ended the stream, if it did not end cleanly.
    pub(super) fn take_error(&mut self) -> Option<io::Error> {
        self.error.take()
    }

    /// The next `count` bytes of the stream; shorter only if the input ends first.
    pub(super) async fn take_exact(&mut self, count: usize) -> Vec<u8> {
        if let Some(bytes) = self.available().get(..count) {
            let message = bytes.to_vec();
            self.start += count;
            return message;
        }
        let mut message = Vec::with_capacity(count);
        loop {
            let step = (count - message.len()).min(self.end - self.start);
            message.extend_from_slice(&self.buffer[self.start..self.start + step]);
            self.start += step;
            if message.len() == count || !self.fill().await {
                return message;
            }
        }
    }
}
