//! Reading LSP base-protocol frames: header block, then exactly `Content-Length` bytes.

use tokio::io::AsyncRead;

use super::ReadEvent;
use super::header::{HeaderScan, RESYNC_OVERLAP, Scan, find_resync_mark};
use super::input::Input;
use super::skipped::SkipReport;

/// Where the decoder is between calls: inside a header block, or hunting for the next one.
#[derive(Default)]
pub(super) struct LspDecoder {
    scan: HeaderScan,
    resyncing: bool,
}

impl LspDecoder {
    /// Reads up to the next frame, noting every byte it drops in `skipped`; never returns
    /// `Skipped` itself.
    ///
    /// A header block stays buffered until it proves valid; when it does not, the search
    /// for `content-length:` restarts one byte after its start, so a frame hidden inside a
    /// broken block (`Content-LenContent-Length: 2…`) is still found.
    pub(super) async fn next<R: AsyncRead + Unpin>(
        &mut self,
        input: &mut Input<R>,
        skipped: &mut SkipReport,
        max_message_bytes: usize,
    ) -> ReadEvent {
        loop {
            if self.resyncing {
                let available = input.available();
                match find_resync_mark(available) {
                    Some(offset) => {
                        skipped.add_bytes(offset);
                        input.consume(offset);
                        self.resyncing = false;
                    }
                    None => {
                        let dropped = available.len().saturating_sub(RESYNC_OVERLAP);
                        skipped.add_bytes(dropped);
                        input.consume(dropped);
                        if !input.fill().await {
                            skipped.add_bytes(input.available().len());
                            input.consume_all();
                            return ReadEvent::Eof;
                        }
                        continue;
                    }
                }
            }
            match self.scan.advance(input.available()) {
                Scan::BlankLine { len } => {
                    input.consume(len);
                    self.scan = HeaderScan::default();
                }
                Scan::Frame {
                    len,
                    content_length,
                } => {
                    input.consume(len);
                    self.scan = HeaderScan::default();
                    if content_length > max_message_bytes {
                        // Its body is not read: discarding it could swallow the client's
                        // next messages for ever (`Content-Length: 999999999999`).
                        return ReadEvent::Oversized {
                            size: content_length,
                        };
                    }
                    let body = input.take_exact(content_length).await;
                    if body.len() < content_length {
                        skipped.note(
                            format!(
                                "end of input inside a frame body: got {} of {content_length} bytes",
                                body.len()
                            ),
                            len + body.len(),
                        );
                        return ReadEvent::Eof;
                    }
                    return ReadEvent::Message(body);
                }
                Scan::Invalid(reason) => {
                    skipped.note(reason, 1);
                    input.consume(1);
                    self.scan = HeaderScan::default();
                    self.resyncing = true;
                }
                Scan::Incomplete => {
                    if !input.fill().await {
                        let rest = input.available().len();
                        if rest > 0 {
                            skipped.note("end of input inside a frame header", rest);
                            input.consume_all();
                        }
                        self.scan = HeaderScan::default();
                        return ReadEvent::Eof;
                    }
                }
            }
        }
    }
}
