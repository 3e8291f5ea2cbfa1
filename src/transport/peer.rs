//! Host→client requests: ids `dsh:<n>`, a bounded pending table, `$/cancelRequest` when the
//! work's signal fires, deadlines, and failing every waiter when the client disconnects.

use super::Outbox;
use crate::tool::Signal;
use parking_lot::Mutex;
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::oneshot;

/// Why a host→client request produced no result.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PeerError {
    /// The client answered with a JSON-RPC error.
    #[error("{message} (code {code})")]
    Remote {
        /// JSON-RPC code.
        code: i64,
        /// Its message.
        message: String,
    },
    /// The work's signal fired first; `$/cancelRequest` was sent.
    #[error("cancelled")]
    Cancelled,
    /// No answer within the deadline; `$/cancelRequest` was sent.
    #[error("no answer within {0} ms")]
    TimedOut(u64),
    /// The client went away (EOF) before answering.
    #[error("the client disconnected before answering")]
    Disconnected,
    /// Too many requests awaiting answers.
    #[error("too many requests awaiting the client ({0})")]
    Overloaded(usize),
}

type Answer = Result<Box<RawValue>, PeerError>;

/// The client as a peer that answers the host's requests.
pub struct Peer {
    outbox: Outbox,
    pending: Mutex<Option<HashMap<u64, oneshot::Sender<Answer>>>>,
    next_id: AtomicU64,
    max_pending: usize,
}

impl Peer {
    /// A peer writing through `outbox`, with at most `max_pending` unanswered requests.
    pub fn new(outbox: Outbox, max_pending: usize) -> Self {
        Peer {
            outbox,
            pending: Mutex::new(Some(HashMap::new())),
            next_id: AtomicU64::new(1),
            max_pending,
        }
    }

    /// The outbox (for notifications).
    pub fn outbox(&self) -> &Outbox {
        &self.outbox
    }

    /// Sends `method` and waits for the answer, the signal, or the deadline.
    pub async fn request(
        &self,
        method: &str,
        params: &impl serde::Serialize,
        signal: &Signal,
        deadline_ms: Option<u64>,
    ) -> Result<Box<RawValue>, PeerError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (sender, receiver) = oneshot::channel();
        {
            let mut pending = self.pending.lock();
            let Some(table) = pending.as_mut() else {
                return Err(PeerError::Disconnected);
            };
            if table.len() >= self.max_pending {
                return Err(PeerError::Overloaded(self.max_pending));
            }
            table.insert(id, sender);
        }
        let message = serde_json::json!({ "jsonrpc": "2.0", "id": format!("dsh:{id}"), "method": method, "params": params });
        self.outbox.send(message.to_string().into_bytes());
        let deadline = async {
            match deadline_ms {
                Some(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
                None => std::future::pending().await,
            }
        };
        // The signal is polled first: at EOF the host cancels every request and then
        // disconnects the peer, and the call must end as cancelled, not as a lost client.
        let outcome = tokio::select! {
            biased;
            () = signal.aborted() => Err(PeerError::Cancelled),
            answer = receiver => answer.unwrap_or(Err(PeerError::Disconnected)),
            () = deadline => Err(PeerError::TimedOut(deadline_ms.unwrap_or_default())),
        };
        if matches!(outcome, Err(PeerError::Cancelled | PeerError::TimedOut(_))) {
            self.forget(id);
            self.outbox.notify(
                "$/cancelRequest",
                &serde_json::json!({ "id": format!("dsh:{id}") }),
            );
        }
        outcome
    }

    /// Routes a response from the client. Returns `false` for an id the host is not waiting on.
    pub fn complete(&self, id: &Value, answer: Result<Box<RawValue>, PeerError>) -> bool {
        let Some(number) = id
            .as_str()
            .and_then(|s| s.strip_prefix("dsh:"))
            .and_then(|n| n.parse::<u64>().ok())
        else {
            return false;
        };
        let sender = self
            .pending
            .lock()
            .as_mut()
            .and_then(|table| table.remove(&number));
        match sender {
            Some(sender) => sender.send(answer).is_ok(),
            None => false,
        }
    }

    /// Fails every waiter and refuses new requests (EOF on the client's side).
    pub fn disconnect(&self) {
        let table = self.pending.lock().take();
        for (_, sender) in table.into_iter().flatten() {
            let _ = sender.send(Err(PeerError::Disconnected));
        }
    }

    fn forget(&self, id: u64) {
        if let Some(table) = self.pending.lock().as_mut() {
            table.remove(&id);
        }
    }
}
