//! The one writer task: every response, notification and host→client request leaves through
//! it, framed like the input. Queued bytes are counted so the reader can apply backpressure
//! when the client stops reading, and so observe-only notifications (results, dispatch
//! events, program output) are dropped, counted and reported instead of piling up in memory
//! behind a client that does not read.

use super::framing::{Framing, encode_frame, frame_prefix, frame_suffix};
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
        self.admits_observed(limit, method) && self.notify(method, params)
    }

    /// [`Outbox::notify_observed_below`] with params the caller writes as JSON text straight
    /// into the envelope (`capacity` bytes reserved for them): a result of many megabytes,
    /// or a flood of live output, is built once, in the buffer that is queued.
    pub fn notify_observed_with(
        &self,
        limit: usize,
        method: &str,
        capacity: usize,
        write_params: impl FnOnce(&mut String),
    ) -> bool {
        if !self.admits_observed(limit, method) {
            return false;
        }
        let mut text = String::with_capacity(capacity + method.len() + 48);
        text.push_str("{\"jsonrpc\":\"2.0\",\"method\":");
        crate::json::write_json_string(&mut text, method);
        text.push_str(",\"params\":");
        write_params(&mut text);
        text.push('}');
        self.send(text.into_bytes())
    }

    /// Whether an observe-only notification may be queued below `limit`; if not, it is
    /// counted as dropped. Reports earlier drops first when it may.
    fn admits_observed(&self, limit: usize, method: &str) -> bool {
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
        true
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
        let written = serde_json::to_writer(&mut *scratch, value);
        if scratch.capacity() <= KEPT {
            return written.map(|()| scratch.to_vec());
        }
        // Too large to keep: the buffer itself leaves, trimmed, rather than a copy of it.
        let mut large = std::mem::take(&mut *scratch);
        written?;
        large.shrink_to_fit();
        Ok(large)
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
/// A message of [`COALESCE_LIMIT`] bytes or more is written from its own buffer after what
/// was coalesced before it, never copied: a large result costs the host once, not twice,
/// and the coalescing buffer never grows past twice the limit.
async fn write_loop<W: AsyncWrite + Unpin>(
    mut receiver: mpsc::UnboundedReceiver<Queued>,
    mut output: W,
    shared: Arc<Shared>,
) {
    let mut buffer = Vec::with_capacity(64 * 1024);
    let mut tail = Vec::new();
    let mut closing = false;
    while !closing && let Some(first) = receiver.recv().await {
        let Queued::Message(first) = first else { break };
        buffer.clear();
        tail.clear();
        let framing = *shared.framing.lock();
        let mut written = 0;
        let mut large = None;
        let mut next = Some(first);
        while let Some(message) = next.take() {
            written += message.len();
            if message.len() >= COALESCE_LIMIT {
                frame_prefix(framing, message.len(), &mut buffer);
                frame_suffix(framing, &mut tail);
                large = Some(message);
                break;
            }
            encode_frame(framing, &message, &mut buffer);
            if buffer.len() >= COALESCE_LIMIT {
                break;
            }
            match receiver.try_recv() {
                Ok(Queued::Message(message)) => next = Some(message),
                Ok(Queued::Close) => closing = true,
                Err(_) => {}
            }
        }
        // Drops are reported when the queue has emptied, if no later notification did.
        if receiver.is_empty()
            && let Some(report) = shared.take_report()
        {
            encode_frame(framing, &report, &mut tail);
        }
        let failed = write_out(
            &mut output,
            [&buffer, large.as_deref().unwrap_or(&[]), &tail],
        )
        .await
        .is_err();
        drop(large);
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

/// Bytes a writer pass coalesces before it writes; a message this large is not copied.
const COALESCE_LIMIT: usize = 1 << 20;

/// Writes the non-empty parts in order, then flushes.
async fn write_out<W: AsyncWrite + Unpin>(
    output: &mut W,
    parts: [&[u8]; 3],
) -> std::io::Result<()> {
    for part in parts {
        if !part.is_empty() {
            output.write_all(part).await?;
        }
    }
    output.flush().await
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

    /// What the writer wrote in `framing` for messages sent all at once.
    async fn framed(framing: Framing, messages: &[Vec<u8>]) -> Vec<u8> {
        let (output, mut input) = tokio::io::duplex(1 << 16);
        let (outbox, writer) = spawn_writer(output, framing);
        for message in messages {
            assert!(outbox.send(message.clone()));
        }
        outbox.close();
        let reader = tokio::spawn(async move {
            let mut bytes = Vec::new();
            input.read_to_end(&mut bytes).await.unwrap();
            bytes
        });
        writer.await.unwrap();
        reader.await.unwrap()
    }

    #[tokio::test]
    async fn a_large_message_between_small_ones_is_framed_whole_and_in_order() {
        let large = format!("{{\"big\":\"{}\"}}", "y".repeat(3 * COALESCE_LIMIT)).into_bytes();
        let messages = vec![b"{\"a\":1}".to_vec(), large, b"{\"b\":2}".to_vec()];
        for framing in [Framing::Ndjson, Framing::Lsp] {
            let mut expected = Vec::new();
            for message in &messages {
                encode_frame(framing, message, &mut expected);
            }
            assert!(framed(framing, &messages).await == expected, "{framing:?}");
        }
    }

    #[tokio::test]
    async fn params_written_in_place_make_the_same_envelope_as_serialized_ones() {
        let params = serde_json::json!({ "x": [1, "two"] });
        let serialized = written(|outbox| assert!(outbox.notify("m/x", &params))).await;
        let in_place = written(|outbox| {
            assert!(
                outbox.notify_observed_with(OBSERVED_HIGH_WATER, "m/x", 8, |out| {
                    crate::json::append_serialized(out, &params)
                })
            )
        })
        .await;
        assert_eq!(in_place, serialized);
    }
}
