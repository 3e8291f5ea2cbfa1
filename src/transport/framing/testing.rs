//! Test support: readers that split input into chosen chunks, and draining a reader.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

use super::{FrameReader, Framing, ReadEvent};

/// Serves `data` in reads of the sizes in `chunks` (cycled); a 0 answers `Pending` once
/// (waking itself), so decoders are exercised across suspension points too. After the
/// data it fails once with `error` if one is given, then reports end of input.
pub(super) struct ChunkedReader {
    data: Vec<u8>,
    position: usize,
    chunks: Vec<usize>,
    turn: usize,
    error: Option<io::ErrorKind>,
}

impl ChunkedReader {
    pub(super) fn new(data: &[u8], chunks: &[usize]) -> Self {
        assert!(
            chunks.iter().any(|&chunk| chunk > 0),
            "chunks must make progress"
        );
        ChunkedReader {
            data: data.to_vec(),
            position: 0,
            chunks: chunks.to_vec(),
            turn: 0,
            error: None,
        }
    }

    pub(super) fn failing_with(mut self, error: io::ErrorKind) -> Self {
        self.error = Some(error);
        self
    }
}

impl AsyncRead for ChunkedReader {
    fn poll_read(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffer: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let chunk = this.chunks[this.turn % this.chunks.len()];
        this.turn += 1;
        if chunk == 0 {
            context.waker().wake_by_ref();
            return Poll::Pending;
        }
        let rest = &this.data[this.position..];
        if rest.is_empty() {
            return Poll::Ready(match this.error.take() {
                Some(kind) => Err(io::Error::new(kind, "test failure")),
                None => Ok(()),
            });
        }
        let count = chunk.min(rest.len()).min(buffer.remaining());
        buffer.put_slice(&rest[..count]);
        this.position += count;
        Poll::Ready(Ok(()))
    }
}

/// Every event up to and including `Eof`, then the framing in force. Fails the test if
/// the reader does not end within a bound linear in the input, or does not stay ended.
pub(super) fn read_all<R: AsyncRead + Unpin>(
    reader: R,
    framing: Framing,
    max_message_bytes: usize,
    input_len: usize,
) -> (Vec<ReadEvent>, Option<Framing>) {
    let mut reader = FrameReader::new(reader, framing, max_message_bytes);
    let mut events = Vec::new();
    futures::executor::block_on(async {
        loop {
            let event = reader.next().await;
            let done = event == ReadEvent::Eof;
            events.push(event);
            assert!(
                events.len() <= 2 * input_len + 2,
                "no end in sight: {events:?}"
            );
            if done {
                break;
            }
        }
        assert_eq!(reader.next().await, ReadEvent::Eof, "Eof must repeat");
    });
    (events, reader.framing())
}

/// [`read_all`] over `input` served in the given read sizes.
pub(super) fn read_chunked(
    input: &[u8],
    chunks: &[usize],
    framing: Framing,
    max_message_bytes: usize,
) -> (Vec<ReadEvent>, Option<Framing>) {
    read_all(
        ChunkedReader::new(input, chunks),
        framing,
        max_message_bytes,
        input.len(),
    )
}

pub(super) fn message(text: &str) -> ReadEvent {
    ReadEvent::Message(text.as_bytes().to_vec())
}

pub(super) fn skipped(reason: &str) -> ReadEvent {
    ReadEvent::Skipped {
        reason: reason.to_owned(),
    }
}

pub(super) fn too_large(size: usize) -> ReadEvent {
    ReadEvent::TooLarge { size }
}

pub(super) fn oversized(size: usize) -> ReadEvent {
    ReadEvent::Oversized { size }
}
