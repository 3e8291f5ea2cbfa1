//! The write side of a connection: every response, notification and host→client request
//! is queued here for the one writer task (`writer`), framed like the input. Queued bytes are
//! counted so the reader can apply backpressure when the client stops reading, and so
//! observe-only notifications (results, dispatch events, program output) are dropped, counted
//! and reported instead of piling up in memory behind a client that does not read.
//!
//! Observe-only notifications are deferred: they wait, without waking the writer, for the
//! next message someone waits for or for the writer's short pause ([`writer::FLUSH_PAUSE`]),
//! so a program's burst of dispatch events costs one wake-up and one write, not one each.

use super::framing::Framing;
use super::unsent::Unsent;
use super::writer;
use parking_lot::{Condvar, Mutex};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::io::AsyncWrite;
use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;

/// Write side of a connection. Cheap to clone.
#[derive(Clone)]
pub struct Outbox {
    sender: mpsc::UnboundedSender<Queued>,
    shared: Arc<Shared>,
}

/// One entry of the writer's queue.
pub(super) enum Queued {
    /// A message; `observed` when it is an observe-only notification.
    Message { bytes: Vec<u8>, observed: bool },
    /// Deferred messages wait in [`Shared::deferred`]: write them after a pause.
    Deferred,
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

/// What the outboxes and the writer share.
pub(super) struct Shared {
    pub(super) framing: Mutex<Framing>,
    /// Observe-only messages not yet handed to the writer, in order. Everything in the
    /// channel was queued before them: a message that is sent moves them in ahead of it.
    pub(super) deferred: Mutex<Vec<Vec<u8>>>,
    /// Observe-only notifications dropped since the last report, by method.
    dropped: Mutex<BTreeMap<String, u64>>,
    any_dropped: AtomicBool,
    pub(super) queued_bytes: Unsent,
    pub(super) drained: Notify,
    /// Cancelled when a write failed: the client is gone (EPIPE is a disconnect).
    pub(super) disconnected: CancellationToken,
    /// [`Shared::drained`] for threads outside the runtime ([`Outbox::wait_below_blocking`]).
    pub(super) drained_lock: Mutex<()>,
    pub(super) drained_blocking: Condvar,
}

impl Shared {
    /// Wakes whoever waits for the queue to shrink (or for the writer to end).
    pub(super) fn notify_drained(&self) {
        self.drained.notify_waiters();
        let _held = self.drained_lock.lock();
        self.drained_blocking.notify_all();
    }

    /// The [`DROPPED_METHOD`] notification for the drops so far, if any, resetting them.
    pub(super) fn take_report(&self) -> Option<Vec<u8>> {
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

impl Outbox {
    /// Queues one compact JSON message, after the observe-only ones deferred before it.
    /// Returns `false` once the writer is gone.
    pub fn send(&self, payload: Vec<u8>) -> bool {
        self.shared.queued_bytes.add(payload.len(), false);
        self.after_deferred(Queued::Message {
            bytes: payload,
            observed: false,
        })
    }

    /// Queues `last` behind every deferred message, keeping their order.
    fn after_deferred(&self, last: Queued) -> bool {
        let mut deferred = self.shared.deferred.lock();
        for earlier in deferred.drain(..) {
            let _ = self.sender.send(Queued::Message {
                bytes: earlier,
                observed: true,
            });
        }
        self.sender.send(last).is_ok()
    }

    /// Defers an observe-only message: the first one deferred tells the writer to pause
    /// and collect the rest; the others wake nobody.
    fn defer(&self, payload: Vec<u8>) -> bool {
        if self.sender.is_closed() {
            return false;
        }
        self.shared.queued_bytes.add(payload.len(), true);
        let mut deferred = self.shared.deferred.lock();
        deferred.push(payload);
        deferred.len() > 1 || self.sender.send(Queued::Deferred).is_ok()
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
        self.admits_observed(limit, method)
            && notification(method, params).is_some_and(|bytes| self.defer(bytes))
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
        self.defer(text.into_bytes())
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
        self.after_deferred(Queued::Close);
    }

    /// Resolves once a write to the client failed: it closed its end.
    pub async fn disconnected(&self) {
        self.shared.disconnected.cancelled().await;
    }

    /// Serializes and queues a notification someone may wait for. Returns `false` once the
    /// writer is gone, or when `params` cannot be serialized (logged; nothing is sent).
    pub fn notify(&self, method: &str, params: &impl serde::Serialize) -> bool {
        notification(method, params).is_some_and(|bytes| self.send(bytes))
    }

    /// Sets the framing once the reader decided it (`--framing auto`).
    pub fn set_framing(&self, framing: Framing) {
        *self.shared.framing.lock() = framing;
    }

    /// Bytes queued and not yet written.
    pub fn queued_bytes(&self) -> usize {
        self.shared.queued_bytes.get()
    }

    /// [`Outbox::wait_below`] for a thread outside the runtime (a program's own thread,
    /// which may block): returns once fewer than `limit` bytes are queued, the writer is
    /// gone or the client went away.
    pub fn wait_below_blocking(&self, limit: usize) {
        let mut held = self.shared.drained_lock.lock();
        while self.queued_bytes() >= limit
            && !self.sender.is_closed()
            && !self.shared.disconnected.is_cancelled()
        {
            // Bounded, so a wake-up missed between the check and the wait costs no more.
            self.shared
                .drained_blocking
                .wait_for(&mut held, std::time::Duration::from_millis(100));
        }
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

/// A notification's compact JSON, or `None` (logged) when `params` cannot be serialized.
fn notification(method: &str, params: &impl serde::Serialize) -> Option<Vec<u8>> {
    let notification = Notification {
        jsonrpc: "2.0",
        method,
        params,
    };
    // Straight to bytes: a `json!` value tree first would cost a third of a call's CPU.
    exact_json(&notification)
        .inspect_err(|error| tracing::error!("cannot serialize the {method} notification: {error}"))
        .ok()
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
        deferred: Mutex::new(Vec::new()),
        dropped: Mutex::new(BTreeMap::new()),
        any_dropped: AtomicBool::new(false),
        queued_bytes: Unsent::default(),
        drained: Notify::new(),
        disconnected: CancellationToken::new(),
        drained_lock: Mutex::new(()),
        drained_blocking: Condvar::new(),
    });
    let task = tokio::spawn(writer::write_loop(receiver, output, shared.clone()));
    (Outbox { sender, shared }, task)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::transport::framing::encode_frame;
    use crate::transport::writer::{COALESCE_LIMIT, FLUSH_PAUSE};
    use std::pin::Pin;
    use std::task::{Context, Poll};
    use tokio::io::{AsyncBufReadExt, AsyncReadExt};

    /// An output that keeps each write apart.
    #[derive(Clone, Default)]
    struct Writes(Arc<Mutex<Vec<Vec<u8>>>>);

    impl AsyncWrite for Writes {
        fn poll_write(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            bytes: &[u8],
        ) -> Poll<std::io::Result<usize>> {
            self.0.lock().push(bytes.to_vec());
            Poll::Ready(Ok(bytes.len()))
        }
        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            Poll::Ready(Ok(()))
        }
        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_of_observed_notifications_is_one_write_and_keeps_its_place() {
        let writes = Writes::default();
        let (outbox, writer) = spawn_writer(writes.clone(), Framing::Ndjson);
        // The writer runs between them, as it would while a program dispatches.
        for i in 0..50 {
            assert!(outbox.notify_observed("code/dispatchEnd", &i));
            tokio::task::yield_now().await;
        }
        assert!(
            writes.0.lock().is_empty(),
            "nothing is written before a pause"
        );
        assert!(outbox.send(b"{\"id\":1}".to_vec()));
        assert!(outbox.notify_observed("code/dispatchEnd", &50));
        outbox.close();
        writer.await.unwrap();
        let writes = writes.0.lock();
        assert_eq!(writes.len(), 1, "one write for the burst and the response");
        let text = String::from_utf8(writes[0].clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let expected: Vec<String> = (0..50)
            .map(|i| format!(r#"{{"jsonrpc":"2.0","method":"code/dispatchEnd","params":{i}}}"#))
            .chain([r#"{"id":1}"#.to_owned()])
            .chain([r#"{"jsonrpc":"2.0","method":"code/dispatchEnd","params":50}"#.to_owned()])
            .collect();
        assert_eq!(lines, expected);
    }

    #[tokio::test(start_paused = true)]
    async fn a_lone_observed_notification_is_written_after_the_pause_and_a_response_at_once() {
        let (output, input) = tokio::io::duplex(1 << 16);
        let mut input = tokio::io::BufReader::new(input);
        let (outbox, _writer) = spawn_writer(output, Framing::Ndjson);
        let mut line = String::new();
        let started = tokio::time::Instant::now();
        assert!(outbox.notify_observed("code/log", &"alone"));
        input.read_line(&mut line).await.unwrap();
        assert_eq!(
            line,
            "{\"jsonrpc\":\"2.0\",\"method\":\"code/log\",\"params\":\"alone\"}\n"
        );
        assert!(started.elapsed() >= FLUSH_PAUSE);
        let started = tokio::time::Instant::now();
        assert!(outbox.send(b"{\"id\":2}".to_vec()));
        line.clear();
        input.read_line(&mut line).await.unwrap();
        assert_eq!(line, "{\"id\":2}\n");
        assert!(started.elapsed() < FLUSH_PAUSE, "a response does not wait");
    }

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

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_thread_waits_until_the_client_has_read_enough_or_went_away() {
        const LIMIT: usize = 1 << 20;
        for client_leaves in [false, true] {
            let (output, mut input) = tokio::io::duplex(1024);
            let (outbox, writer) = spawn_writer(output, Framing::Ndjson);
            assert!(outbox.send(vec![b'x'; 2 * LIMIT]));
            assert!(outbox.queued_bytes() >= LIMIT);
            // Nothing drains before the client reads: the thread can only return after.
            let waiting = outbox.clone();
            let waiter = std::thread::spawn(move || {
                waiting.wait_below_blocking(LIMIT);
                waiting.queued_bytes()
            });
            if client_leaves {
                drop(input);
            } else {
                tokio::spawn(async move {
                    let mut sink = Vec::new();
                    let _ = input.read_to_end(&mut sink).await;
                });
            }
            let queued_at_return = tokio::task::spawn_blocking(move || waiter.join().unwrap())
                .await
                .unwrap();
            assert!(queued_at_return < LIMIT, "{client_leaves}");
            outbox.close();
            writer.await.unwrap();
        }
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
