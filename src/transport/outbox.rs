//! The one writer task: every response, notification and host→client request leaves through
//! it, framed like the input. Queued bytes are counted so the reader can apply backpressure
//! when the client stops reading, and so observe-only notifications (results, dispatch
//! events, program output) are dropped, counted and reported instead of piling up in memory
//! behind a client that does not read.

use super::framing::{Framing, encode_frame};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;

/// Write side of a connection. Cheap to clone.
#[derive(Clone)]
pub struct Outbox {
    sender: mpsc::UnboundedSender<Queued>,
    shared: Arc<Shared>,
}

/// One entry of the writer's queue.
enum Queued {
    Message(Vec<u8>),
    /// Everything before this is written; the writer ends.
    Close,
}

/// A notification's envelope, fields in wire order.
#[derive(serde::Serialize)]
struct Notification<'a, P> {
    jsonrpc: &'static str,
    method: &'a str,
    params: &'a P,
}

/// Queued bytes at which observe-only notifications stop being queued.
pub const OBSERVED_HIGH_WATER: usize = 16 << 20;
/// The notification that tells the client how many observe-only notifications, by method,
/// were dropped since the last report (sent once the queue has room again).
pub const DROPPED_METHOD: &str = "$/notificationsDropped";

impl Shared {
    /// The [`DROPPED_METHOD`] notification for the drops so far, if any, resetting them.
    fn take_report(&self) -> Option<Vec<u8>> {
        // A plain load first: the common case (nothing dropped) writes no shared cache line.
        if !self.any_dropped.load(Ordering::Relaxed)
            || !self.any_dropped.swap(false, Ordering::Relaxed)
        {
            return None;
        }
        let dropped = std::mem::take(&mut *self.dropped.lock());
        serde_json::to_vec(&serde_json::json!({
            "jsonrpc": "2.0", "method": DROPPED_METHOD, "params": { "dropped": dropped }
        }))
        .ok()
    }
}

struct Shared {
    framing: Mutex<Framing>,
    /// Observe-only notifications dropped since the last report, by method.
    dropped: Mutex<BTreeMap<String, u64>>,
    any_dropped: AtomicBool,
    queued_bytes: AtomicUsize,
    drained: Notify,
    /// Cancelled when a write failed: the client is gone (EPIPE is a disconnect).
    disconnected: CancellationToken,
}

impl Outbox {
    /// Queues one compact JSON message. Returns `false` once the writer is gone.
    pub fn send(&self, payload: Vec<u8>) -> bool {
        self.shared
            .queued_bytes
            .fetch_add(payload.len(), Ordering::Relaxed);
        self.sender.send(Queued::Message(payload)).is_ok()
    }

    /// Queues an observe-only notification (nothing waits for it) unless the client is
    /// [`OBSERVED_HIGH_WATER`] bytes behind: then it is dropped and counted, and the counts
    /// reach the client as [`DROPPED_METHOD`] before the next one that is queued.
    pub fn notify_observed(&self, method: &str, params: &impl serde::Serialize) -> bool {
        self.notify_observed_below(OBSERVED_HIGH_WATER, method, params)
    }

    /// [`Outbox::notify_observed`] with its own high-water mark: live output, which can come
    /// faster than any client reads, is dropped once the client is `limit` bytes behind.
    pub fn notify_observed_below(
        &self,
        limit: usize,
        method: &str,
        params: &impl serde::Serialize,
    ) -> bool {
        if self.queued_bytes() >= limit {
            *self
                .shared
                .dropped
                .lock()
                .entry(method.to_owned())
                .or_default() += 1;
            self.shared.any_dropped.store(true, Ordering::Relaxed);
            return false;
        }
        if let Some(report) = self.shared.take_report() {
            self.send(report);
        }
        self.notify(method, params)
    }

    /// Ends the writer once what is queued so far is written, whoever still holds a clone
    /// (a runaway program's bridge may never let go of its own): later sends are dropped.
    pub fn close(&self) {
        let _ = self.sender.send(Queued::Close);
    }

    /// Resolves once a write to the client failed: it closed its end.
    pub async fn disconnected(&self) {
        self.shared.disconnected.cancelled().await;
    }

    /// Serializes and queues a notification. Returns `false` once the writer is gone, or
    /// when `params` cannot be serialized (logged; nothing is sent).
    pub fn notify(&self, method: &str, params: &impl serde::Serialize) -> bool {
        let notification = Notification {
            jsonrpc: "2.0",
            method,
            params,
        };
        // Straight to bytes: a `json!` value tree first would cost a third of a call's CPU.
        match exact_json(&notification) {
            Ok(bytes) => self.send(bytes),
            Err(error) => {
                tracing::error!("cannot serialize the {method} notification: {error}");
                false
            }
        }
    }

    /// Sets the framing once the reader decided it (`--framing auto`).
    pub fn set_framing(&self, framing: Framing) {
        *self.shared.framing.lock() = framing;
    }

    /// Bytes queued and not yet written.
    pub fn queued_bytes(&self) -> usize {
        self.shared.queued_bytes.load(Ordering::Relaxed)
    }

    /// Waits until fewer than `limit` bytes are queued.
    pub async fn wait_below(&self, limit: usize) {
        loop {
            let drained = self.shared.drained.notified();
            if self.queued_bytes() < limit || self.sender.is_closed() {
                return;
            }
            drained.await;
        }
    }
}

/// `value` as compact JSON in an allocation of exactly its size: serialized into a reused
/// per-thread buffer, then copied once. A queued message holds no doubling slack, so the
/// queue's byte count is what it costs, and a large report is one allocation, not ten.
fn exact_json(value: &impl serde::Serialize) -> serde_json::Result<Vec<u8>> {
    /// A buffer that grew past this is given back after use.
    const KEPT: usize = 1 << 20;
    thread_local! {
        static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    SCRATCH.with(|scratch| {
        let mut scratch = scratch.borrow_mut();
        scratch.clear();
        let written = serde_json::to_writer(&mut *scratch, value).map(|()| scratch.to_vec());
        if scratch.capacity() > KEPT {
            *scratch = Vec::new();
        }
        written
    })
}

/// Starts the writer task; it ends on [`Outbox::close`] or when every clone is dropped, once
/// the queue is written, or when the output fails (the client went away).
pub fn spawn_writer<W>(output: W, framing: Framing) -> (Outbox, tokio::task::JoinHandle<()>)
where
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (sender, receiver) = mpsc::unbounded_channel();
    let shared = Arc::new(Shared {
        framing: Mutex::new(framing),
        dropped: Mutex::new(BTreeMap::new()),
        any_dropped: AtomicBool::new(false),
        queued_bytes: AtomicUsize::new(0),
        drained: Notify::new(),
        disconnected: CancellationToken::new(),
    });
    let task = tokio::spawn(write_loop(receiver, output, shared.clone()));
    (Outbox { sender, shared }, task)
}

/// Coalesces whatever is queued into one write, so a busy connection makes few syscalls.
async fn write_loop<W: AsyncWrite + Unpin>(
    mut receiver: mpsc::UnboundedReceiver<Queued>,
    mut output: W,
    shared: Arc<Shared>,
) {
    const COALESCE_LIMIT: usize = 1 << 20;
    let mut buffer = Vec::with_capacity(64 * 1024);
    let mut closing = false;
    while !closing && let Some(first) = receiver.recv().await {
        let Queued::Message(first) = first else { break };
        buffer.clear();
        let framing = *shared.framing.lock();
        let mut written = first.len();
        encode_frame(framing, &first, &mut buffer);
        while buffer.len() < COALESCE_LIMIT {
            match receiver.try_recv() {
                Ok(Queued::Message(next)) => {
                    written += next.len();
                    encode_frame(framing, &next, &mut buffer);
                }
                Ok(Queued::Close) => {
                    closing = true;
                    break;
                }
                Err(_) => break,
            }
        }
        // Drops are reported when the queue has emptied, if no later notification did.
        if receiver.is_empty()
            && let Some(report) = shared.take_report()
        {
            encode_frame(framing, &report, &mut buffer);
        }
        let failed = output.write_all(&buffer).await.is_err() || output.flush().await.is_err();
        shared.queued_bytes.fetch_sub(written, Ordering::Relaxed);
        shared.drained.notify_waiters();
        if failed {
            tracing::warn!("stdout closed: the client is gone");
            receiver.close();
            shared.queued_bytes.store(0, Ordering::Relaxed);
            shared.disconnected.cancel();
            return;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    /// Everything the writer wrote once every outbox clone is gone.
    async fn written(send: impl FnOnce(&Outbox)) -> String {
        let (output, mut input) = tokio::io::duplex(1 << 16);
        let (outbox, writer) = spawn_writer(output, Framing::Ndjson);
        send(&outbox);
        drop(outbox);
        writer.await.unwrap();
        let mut text = String::new();
        input.read_to_string(&mut text).await.unwrap();
        text
    }

    #[tokio::test]
    async fn a_notification_is_one_compact_envelope_with_fields_in_wire_order() {
        let params = r#"{"b":1,"a":[1.50,"x\"y"],"n":100000000000000000000}"#;
        let params: serde_json::Value = serde_json::from_str(params).unwrap();
        let text = written(|outbox| assert!(outbox.notify("tools/result", &params))).await;
        let expected = r#"{"jsonrpc":"2.0","method":"tools/result","params":{"b":1,"a":[1.50,"x\"y"],"n":100000000000000000000}}"#;
        assert_eq!(text, format!("{expected}\n"));
    }

    #[tokio::test]
    async fn unserializable_params_send_nothing() {
        struct Failing;
        impl serde::Serialize for Failing {
            fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
                Err(serde::ser::Error::custom("no"))
            }
        }
        let text = written(|outbox| assert!(!outbox.notify("x", &Failing))).await;
        assert_eq!(text, "");
    }

    #[tokio::test]
    async fn observed_notifications_behind_a_stalled_client_are_dropped_counted_and_reported() {
        let (output, mut input) = tokio::io::duplex(1024);
        let (outbox, writer) = spawn_writer(output, Framing::Ndjson);
        let line = "x".repeat(1 << 20);
        // Responses always queue, past the high-water mark too.
        for _ in 0..(OBSERVED_HIGH_WATER >> 20) + 1 {
            assert!(outbox.send(format!("{{\"r\":\"{line}\"}}").into_bytes()));
        }
        assert!(outbox.queued_bytes() >= OBSERVED_HIGH_WATER);
        for _ in 0..3 {
            assert!(!outbox.notify_observed("code/log", &line));
        }
        assert!(!outbox.notify_observed("tools/result", &1));
        // The client reads again: everything queued arrives, then the report, then the next.
        let reader = tokio::spawn(async move {
            let mut text = String::new();
            input.read_to_string(&mut text).await.unwrap();
            text
        });
        outbox.wait_below(OBSERVED_HIGH_WATER).await;
        assert!(outbox.notify_observed("code/log", &"after"));
        outbox.close();
        writer.await.unwrap();
        let text = reader.await.unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let responses = lines.iter().filter(|l| l.starts_with("{\"r\"")).count();
        assert_eq!(responses, (OBSERVED_HIGH_WATER >> 20) + 1);
        assert_eq!(
            &lines[responses..],
            [
                r#"{"jsonrpc":"2.0","method":"$/notificationsDropped","params":{"dropped":{"code/log":3,"tools/result":1}}}"#,
                r#"{"jsonrpc":"2.0","method":"code/log","params":"after"}"#,
            ]
        );
    }
}
