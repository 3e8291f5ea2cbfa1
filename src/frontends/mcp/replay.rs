//! Resumable SSE streams for `dsh-tools mcp --http`: every event rmcp sends on a stream
//! (a request's own stream, or a session's standalone one) is kept here for a bounded
//! window, under an id naming its stream, so that a client whose connection dropped can
//! reconnect with `Last-Event-ID` and receive what it missed: above all the tool response
//! that was sent while it was away. rmcp's own per-session cache forgets a request's
//! stream as soon as its response is sent, which is exactly the case that matters.
//!
//! A replay first yields the kept events after the given id, then follows the stream live
//! until its response (a request's stream ends there), until nothing arrives for the
//! window (the client reconnects again), or until the stream is evicted.
//!
//! Bounds: at most [`ReplayLimits::events_per_stream`] events per stream (the oldest go
//! first; a long call's progress, never its response, which is last), at most
//! [`ReplayLimits::streams`] streams and [`ReplayLimits::bytes`] of serialized events in
//! all (the least recently written streams go first, then a stream's own oldest events;
//! the newest event is always kept), and a stream not written for
//! [`ReplayLimits::window`] is dropped when a new stream starts.

use parking_lot::Mutex;
use rmcp::model::ServerJsonRpcMessage;
use rmcp::transport::streamable_http_server::session::{
    EventStore, EventStoreError, EventStream, ServerSseMessage,
};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// How much [`ReplayStore`] keeps, and for how long.
#[derive(Clone, Copy, Debug)]
pub struct ReplayLimits {
    /// Events kept per stream.
    pub events_per_stream: usize,
    /// Streams kept at once.
    pub streams: usize,
    /// Serialized bytes of the kept events, all streams together.
    pub bytes: usize,
    /// How long a stream is kept after its last event (and how long a replay waits for
    /// the next one).
    pub window: Duration,
}

impl Default for ReplayLimits {
    fn default() -> Self {
        ReplayLimits {
            events_per_stream: 64,
            streams: 1024,
            bytes: 32 * 1024 * 1024,
            window: Duration::from_secs(120),
        }
    }
}

/// The events of recent SSE streams, for `Last-Event-ID` replay.
pub struct ReplayStore {
    streams: Arc<Mutex<HashMap<Arc<str>, Kept>>>,
    limits: ReplayLimits,
}

/// One stream's recent events.
struct Kept {
    /// `(index, event with its id, its serialized size)`, oldest first.
    events: VecDeque<(u64, ServerSseMessage, usize)>,
    /// The sum of the sizes of `events`.
    bytes: usize,
    next: u64,
    /// Its response was sent: nothing follows.
    finished: bool,
    written: Instant,
    /// The next index, for replays following the stream live.
    grew: watch::Sender<u64>,
}

/// The event id of `index` on `stream` (rmcp's stream ids are UUIDs or `<session>:common`,
/// so ids are not guessable across sessions).
fn event_id(stream: &str, index: u64) -> String {
    format!("{stream}#{index}")
}

fn parse_event_id(id: &str) -> Option<(&str, u64)> {
    let (stream, index) = id.rsplit_once('#')?;
    Some((stream, index.parse().ok()?))
}

/// Counts the bytes written to it.
#[derive(Default)]
struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 += bytes.len();
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The size of `event`'s message as JSON (counted, not built), plus a little for its id.
fn size_of(event: &ServerSseMessage) -> usize {
    let mut counter = Counter::default();
    if let Some(message) = event.message.as_deref() {
        let _ = serde_json::to_writer(&mut counter, message);
    }
    counter.0 + 64
}

/// Whether `event` ends its stream (a request's stream carries its answer last).
fn is_final(stream: &str, event: &ServerSseMessage) -> bool {
    !stream.ends_with(":common")
        && event.message.as_deref().is_some_and(|message| {
            matches!(
                message,
                ServerJsonRpcMessage::Response(_) | ServerJsonRpcMessage::Error(_)
            )
        })
}

impl ReplayStore {
    /// An empty store keeping what `limits` allow.
    pub fn new(limits: ReplayLimits) -> ReplayStore {
        ReplayStore {
            streams: Arc::default(),
            limits,
        }
    }

    /// Makes room for one more stream: drops those not written for the window, then the
    /// least recently written while at the cap.
    fn make_room(&self, streams: &mut HashMap<Arc<str>, Kept>, now: Instant) {
        streams.retain(|_, kept| now.duration_since(kept.written) < self.limits.window);
        while streams.len() >= self.limits.streams.max(1) {
            if !drop_least_recent(streams, None) {
                break;
            }
        }
    }

    /// Keeps the bytes of all streams within the budget after `stream` grew: other streams
    /// go first (least recently written first), then `stream`'s oldest events.
    fn within_budget(&self, streams: &mut HashMap<Arc<str>, Kept>, stream: &str) {
        let budget = self.limits.bytes;
        let mut total: usize = streams.values().map(|kept| kept.bytes).sum();
        while total > budget {
            if let Some(kept) = streams.get_mut(stream)
                && kept.bytes > budget
                && kept.events.len() > 1
                && let Some((_, _, size)) = kept.events.pop_front()
            {
                kept.bytes -= size;
                total -= size;
                continue;
            }
            if !drop_least_recent(streams, Some(stream)) {
                break;
            }
            total = streams.values().map(|kept| kept.bytes).sum();
        }
    }
}

/// Drops the least recently written stream other than `spare`; false when there is none.
fn drop_least_recent(streams: &mut HashMap<Arc<str>, Kept>, spare: Option<&str>) -> bool {
    let oldest = streams
        .iter()
        .filter(|(name, _)| Some(&***name) != spare)
        .min_by_key(|(_, kept)| kept.written)
        .map(|(name, _)| name.clone());
    match oldest {
        Some(name) => streams.remove(&name).is_some(),
        None => false,
    }
}

#[async_trait::async_trait]
impl EventStore for ReplayStore {
    async fn store_event(
        &self,
        stream_id: &str,
        event: &ServerSseMessage,
    ) -> Result<String, EventStoreError> {
        let now = Instant::now();
        let mut streams = self.streams.lock();
        if !streams.contains_key(stream_id) {
            self.make_room(&mut streams, now);
            let (grew, _) = watch::channel(0);
            let kept = Kept {
                events: VecDeque::new(),
                bytes: 0,
                next: 0,
                finished: false,
                written: now,
                grew,
            };
            streams.insert(Arc::from(stream_id), kept);
        }
        let Some(kept) = streams.get_mut(stream_id) else {
            return Err("the replay store lost a stream it had just made".into());
        };
        let index = kept.next;
        let id = event_id(stream_id, index);
        let mut stored = event.clone();
        stored.event_id = Some(id.clone());
        let size = size_of(event);
        kept.events.push_back((index, stored, size));
        kept.bytes += size;
        while kept.events.len() > self.limits.events_per_stream.max(1) {
            if let Some((_, _, size)) = kept.events.pop_front() {
                kept.bytes -= size;
            }
        }
        kept.next = index + 1;
        kept.finished |= is_final(stream_id, event);
        kept.written = now;
        kept.grew.send_replace(kept.next);
        self.within_budget(&mut streams, stream_id);
        Ok(id)
    }

    async fn replay_events_after(
        &self,
        last_event_id: &str,
    ) -> Result<EventStream, EventStoreError> {
        let Some((stream, after)) = parse_event_id(last_event_id) else {
            return Err(format!("malformed Last-Event-ID {last_event_id:?}").into());
        };
        let grew = match self.streams.lock().get(stream) {
            Some(kept) => kept.grew.subscribe(),
            None => {
                return Err(format!(
                    "Last-Event-ID {last_event_id:?}: its stream has expired or never existed"
                )
                .into());
            }
        };
        let follow = Follow {
            streams: self.streams.clone(),
            stream: Arc::from(stream),
            after,
            grew,
            window: self.limits.window,
        };
        Ok(Box::pin(futures::stream::unfold(follow, Follow::next)))
    }
}

/// A replay in progress: the last index it yielded.
struct Follow {
    streams: Arc<Mutex<HashMap<Arc<str>, Kept>>>,
    stream: Arc<str>,
    after: u64,
    grew: watch::Receiver<u64>,
    window: Duration,
}

impl Follow {
    /// The next kept event after `after`, waiting for one while the stream is unfinished.
    async fn next(mut self) -> Option<(ServerSseMessage, Follow)> {
        loop {
            let (next, finished) = {
                let streams = self.streams.lock();
                let kept = streams.get(&self.stream)?;
                let next = kept
                    .events
                    .iter()
                    .find(|(index, _, _)| *index > self.after)
                    .map(|(index, event, _)| (*index, event.clone()));
                (next, kept.finished)
            };
            if let Some((index, event)) = next {
                self.after = index;
                return Some((event, self));
            }
            if finished {
                return None;
            }
            // The receiver was subscribed before the first look: an event stored since
            // then makes `changed` return at once.
            match tokio::time::timeout(self.window, self.grew.changed()).await {
                Ok(Ok(())) => {}
                _ => return None,
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use futures::StreamExt;
    use rmcp::model::{EmptyResult, RequestId, ServerResult};

    fn response(id: i64) -> ServerSseMessage {
        ServerSseMessage::from_message(ServerJsonRpcMessage::response(
            ServerResult::EmptyResult(EmptyResult {}),
            RequestId::Number(id),
        ))
    }

    fn priming() -> ServerSseMessage {
        ServerSseMessage::retry(Duration::from_secs(3))
    }

    fn limits() -> ReplayLimits {
        ReplayLimits {
            events_per_stream: 4,
            streams: 2,
            bytes: 1024 * 1024,
            window: Duration::from_secs(60),
        }
    }

    #[tokio::test]
    async fn a_finished_stream_replays_what_followed_the_id_and_ends() {
        let store = ReplayStore::new(limits());
        let first = store.store_event("s1", &priming()).await.unwrap();
        let answer = store.store_event("s1", &response(7)).await.unwrap();
        assert_ne!(first, answer);
        let replayed: Vec<_> = store
            .replay_events_after(&first)
            .await
            .unwrap()
            .collect()
            .await;
        assert_eq!(replayed.len(), 1);
        assert_eq!(replayed[0].event_id.as_deref(), Some(answer.as_str()));
        assert!(replayed[0].message.is_some());
        let after_answer: Vec<_> = store
            .replay_events_after(&answer)
            .await
            .unwrap()
            .collect()
            .await;
        assert!(after_answer.is_empty());
    }

    #[tokio::test]
    async fn an_unfinished_stream_is_followed_until_its_answer() {
        let store = ReplayStore::new(limits());
        let first = store.store_event("s1", &priming()).await.unwrap();
        let mut replay = store.replay_events_after(&first).await.unwrap();
        let stored = store.store_event("s1", &response(1)).await.unwrap();
        let next = replay.next().await.unwrap();
        assert_eq!(next.event_id.as_deref(), Some(stored.as_str()));
        assert!(replay.next().await.is_none(), "the answer ends the stream");
    }

    #[tokio::test]
    async fn streams_and_events_are_bounded() {
        let store = ReplayStore::new(limits());
        let mut ids = Vec::new();
        for _ in 0..6 {
            ids.push(store.store_event("s1", &priming()).await.unwrap());
        }
        // Only the last four are kept: a replay from the first yields those.
        let kept: Vec<_> = store
            .replay_events_after(&ids[0])
            .await
            .unwrap()
            .take(4)
            .collect()
            .await;
        let kept: Vec<_> = kept.iter().map(|e| e.event_id.clone().unwrap()).collect();
        assert_eq!(kept, ids[2..].to_vec());
        store.store_event("s2", &priming()).await.unwrap();
        store.store_event("s3", &priming()).await.unwrap();
        let evicted = store.replay_events_after(&ids[5]).await;
        assert!(
            evicted.is_err(),
            "s1 was the least recently written of three"
        );
        assert!(store.replay_events_after("no-such-id").await.is_err());
    }

    #[tokio::test]
    async fn the_byte_budget_drops_other_streams_first_and_keeps_the_newest_event() {
        let store = ReplayStore::new(ReplayLimits {
            bytes: size_of(&response(1)) * 2,
            ..limits()
        });
        let old = store.store_event("s1", &response(1)).await.unwrap();
        let first = store.store_event("s2", &priming()).await.unwrap();
        store.store_event("s2", &response(2)).await.unwrap();
        assert!(
            store.replay_events_after(&old).await.is_err(),
            "s1 made room"
        );
        let kept: Vec<_> = store
            .replay_events_after(&first)
            .await
            .unwrap()
            .collect()
            .await;
        assert_eq!(kept.len(), 1, "s2's answer is kept");
        let big = ReplayStore::new(ReplayLimits {
            bytes: 1,
            ..limits()
        });
        let a = big.store_event("s", &priming()).await.unwrap();
        let b = big.store_event("s", &response(3)).await.unwrap();
        let left: Vec<_> = big.replay_events_after(&a).await.unwrap().collect().await;
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].event_id.as_deref(), Some(b.as_str()));
    }
}
