//! The frame reader: picks the framing, runs its decoder, and reports dropped input.

use tokio::io::AsyncRead;

use super::input::Input;
use super::lsp::LspDecoder;
use super::ndjson;
use super::skipped::SkipReport;
use super::{Framing, ReadEvent};

/// Reads JSON-RPC messages from a byte stream, one [`ReadEvent`] per call.
///
/// Memory stays bounded by one 64 KiB buffer plus the message being returned: over-long
/// lines and garbage are dropped as they stream past, an oversized LSP frame ends the stream.
pub struct FrameReader<R> {
    input: Input<R>,
    decoder: Decoder,
    max_message_bytes: usize,
    skipped: SkipReport,
    /// The event found while a `Skipped` report was returned ahead of it.
    queued: Option<ReadEvent>,
    finished: bool,
}

/// The framing in force; `Undecided` until `Auto` has seen a non-whitespace byte.
enum Decoder {
    Undecided,
    Lsp(LspDecoder),
    Ndjson,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// `max_message_bytes` caps one payload; a longer ndjson line becomes
    /// [`ReadEvent::TooLarge`], a longer LSP frame [`ReadEvent::Oversized`].
    pub fn new(reader: R, framing: Framing, max_message_bytes: usize) -> Self {
        FrameReader {
            input: Input::new(reader),
            decoder: match framing {
                Framing::Lsp => Decoder::Lsp(LspDecoder::default()),
                Framing::Ndjson => Decoder::Ndjson,
                Framing::Auto => Decoder::Undecided,
            },
            max_message_bytes,
            skipped: SkipReport::default(),
            queued: None,
            finished: false,
        }
    }

    /// Changes the payload cap for the frames read from now on (`initialize.config` may
    /// set `transport.maxMessageBytes`).
    pub fn set_max_message_bytes(&mut self, max_message_bytes: usize) {
        self.max_message_bytes = max_message_bytes;
    }

    /// `Lsp` or `Ndjson` once decided (immediately unless constructed with `Auto`); replies
    /// must use it.
    pub fn framing(&self) -> Option<Framing> {
        match self.decoder {
            Decoder::Undecided => None,
            Decoder::Lsp(_) => Some(Framing::Lsp),
            Decoder::Ndjson => Some(Framing::Ndjson),
        }
    }

    /// The next message or problem. Dropped input is reported as one `Skipped` just before
    /// the event that ends it; after `Eof`, every call returns `Eof`.
    ///
    /// Not cancel-safe: dropping the future mid-read loses the partial frame, so read
    /// from one task that always awaits it to completion.
    pub async fn next(&mut self) -> ReadEvent {
        if let Some(event) = self.queued.take() {
            return event;
        }
        if self.finished {
            return ReadEvent::Eof;
        }
        let event = self.read_event().await;
        if matches!(event, ReadEvent::Oversized { .. }) {
            // The body that follows was not read: nothing after it can be framed.
            self.finished = true;
        }
        if event == ReadEvent::Eof {
            self.finished = true;
            if let Some(error) = self.input.take_error() {
                self.skipped.note(format!("read error: {error}"), 0);
            }
        }
        match self.skipped.take() {
            Some(report) => {
                self.queued = Some(event);
                report
            }
            None => event,
        }
    }

    async fn read_event(&mut self) -> ReadEvent {
        loop {
            match &mut self.decoder {
                Decoder::Lsp(lsp) => {
                    return lsp
                        .next(&mut self.input, &mut self.skipped, self.max_message_bytes)
                        .await;
                }
                Decoder::Ndjson => {
                    return ndjson::next_line(&mut self.input, self.max_message_bytes).await;
                }
                Decoder::Undecided => {
                    let available = self.input.available();
                    let whitespace = available
                        .iter()
                        .take_while(|b| b.is_ascii_whitespace())
                        .count();
                    self.input.consume(whitespace);
                    match self.input.available().first().copied() {
                        Some(b'{' | b'[') => self.decoder = Decoder::Ndjson,
                        Some(_) => self.decoder = Decoder::Lsp(LspDecoder::default()),
                        None if self.input.fill().await => {}
                        None => return ReadEvent::Eof,
                    }
                }
            }
        }
    }
}
