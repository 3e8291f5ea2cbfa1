//! The one writer task: takes what the outboxes queued and writes it, coalesced, so a busy
//! connection makes few syscalls and wakes the client few times.

use super::framing::{Framing, encode_frame, frame_prefix, frame_suffix};
use super::outbox::{Queued, Shared};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

/// How long deferred (observe-only) messages wait for company before they are written
/// anyway. Nothing waits for them; a message someone waits for ends the pause at once.
pub(super) const FLUSH_PAUSE: Duration = Duration::from_millis(1);

/// Bytes coalesced before they are written; a message this large is written from its own
/// buffer, never copied, so a large result costs the host once, not twice.
pub(super) const COALESCE_LIMIT: usize = 1 << 20;

/// Writes until [`Queued::Close`], until every outbox is gone (after what they deferred),
/// or until the output fails: then the client is gone, and later sends are refused.
pub(super) async fn write_loop<W: AsyncWrite + Unpin>(
    mut receiver: mpsc::UnboundedReceiver<Queued>,
    output: W,
    shared: Arc<Shared>,
) {
    let mut out = Framed {
        output,
        buffer: Vec::with_capacity(64 * 1024),
    };
    let mut cut = false;
    loop {
        let mut pass = Pass::default();
        let first = if cut {
            // The last pass stopped at a full buffer: go on with what is queued.
            receiver.try_recv().ok()
        } else {
            match receiver.recv().await {
                Some(Queued::Deferred) => Some(company(&mut receiver).await),
                Some(first) => Some(first),
                None => {
                    pass.last = true;
                    None
                }
            }
        };
        let framing = *shared.framing.lock();
        let result = pass
            .write(first, &mut receiver, &mut out, framing, &shared)
            .await;
        shared.queued_bytes.written(pass.written, pass.awaited);
        shared.notify_drained();
        if result.is_err() {
            tracing::warn!("stdout closed: the client is gone");
            receiver.close();
            shared.queued_bytes.clear();
            shared.disconnected.cancel();
            shared.notify_drained();
            return;
        }
        if pass.last {
            shared.notify_drained();
            return;
        }
        cut = pass.cut;
    }
}

/// Waits up to [`FLUSH_PAUSE`] for more deferred messages to gather; whatever is queued
/// meanwhile ends the wait and is written first (it was queued before them).
async fn company(receiver: &mut mpsc::UnboundedReceiver<Queued>) -> Queued {
    tokio::select! {
        biased;
        // The channel's end is seen again by the next pass.
        queued = receiver.recv() => queued.unwrap_or(Queued::Deferred),
        () = tokio::time::sleep(FLUSH_PAUSE) => Queued::Deferred,
    }
}

/// One write of everything queued by now.
#[derive(Default)]
struct Pass {
    /// Message bytes written (they leave the queued count).
    written: usize,
    /// Of those, the bytes of messages that are not observe-only.
    awaited: usize,
    /// The writer ends after this pass.
    last: bool,
    /// The pass stopped after writing a full buffer, before the queue was empty: written
    /// bytes leave the count as they go, so a client that keeps up is never seen as behind.
    cut: bool,
}

impl Pass {
    async fn write<W: AsyncWrite + Unpin>(
        &mut self,
        mut next: Option<Queued>,
        receiver: &mut mpsc::UnboundedReceiver<Queued>,
        out: &mut Framed<W>,
        framing: Framing,
        shared: &Shared,
    ) -> std::io::Result<()> {
        while let Some(queued) = next.take() {
            match queued {
                Queued::Message {
                    bytes: message,
                    observed,
                } => {
                    self.written += message.len();
                    if !observed {
                        self.awaited += message.len();
                    }
                    if out.put(framing, message).await? {
                        self.cut = true;
                        return out.finish(framing, None).await;
                    }
                }
                Queued::Deferred => {}
                Queued::Close => {
                    // What was deferred before the close is in the channel, ahead of it.
                    self.last = true;
                    return out.finish(framing, shared.take_report()).await;
                }
            }
            next = receiver.try_recv().ok();
        }
        // The channel is empty; what was deferred since was queued after all of it.
        let deferred = std::mem::take(&mut *shared.deferred.lock());
        for message in deferred {
            self.written += message.len();
            out.put(framing, message).await?;
        }
        // Drops are reported when the queue has emptied, if no later notification did.
        let report = receiver.is_empty().then(|| shared.take_report()).flatten();
        out.finish(framing, report).await
    }
}

/// The output and the bytes coalesced for its next write.
struct Framed<W> {
    output: W,
    buffer: Vec<u8>,
}

impl<W: AsyncWrite + Unpin> Framed<W> {
    /// Frames `message`; returns whether a full buffer or the message itself was written.
    async fn put(&mut self, framing: Framing, message: Vec<u8>) -> std::io::Result<bool> {
        if message.len() < COALESCE_LIMIT {
            encode_frame(framing, &message, &mut self.buffer);
            if self.buffer.len() < COALESCE_LIMIT {
                return Ok(false);
            }
            self.write_buffer().await?;
            return Ok(true);
        }
        frame_prefix(framing, message.len(), &mut self.buffer);
        self.write_buffer().await?;
        self.output.write_all(&message).await?;
        frame_suffix(framing, &mut self.buffer);
        Ok(true)
    }

    /// Writes what is coalesced, then `report` if any, and flushes.
    async fn finish(&mut self, framing: Framing, report: Option<Vec<u8>>) -> std::io::Result<()> {
        if let Some(report) = report {
            encode_frame(framing, &report, &mut self.buffer);
        }
        self.write_buffer().await?;
        self.output.flush().await
    }

    async fn write_buffer(&mut self) -> std::io::Result<()> {
        if !self.buffer.is_empty() {
            self.output.write_all(&self.buffer).await?;
            self.buffer.clear();
        }
        Ok(())
    }
}
