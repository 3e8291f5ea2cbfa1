//! Host→client requests: ids `dsh:<n>`, a bounded pending table, `$/cancelRequest` when the
//! work's signal fires, deadlines, and failing every waiter when the client disconnects.

use super::Outbox;
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
    /// The params could not be serialized; nothing was sent.
    #[error("the request could not be serialized: {0}")]
    Unserializable(String),
}

/// A request's envelope, fields in wire order.
#[derive(serde::Serialize)]
struct Request<'a, P> {
    jsonrpc: &'static str,
    id: &'a str,
    method: &'a str,
    params: &'a P,
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

    /// Sends `method` and waits for the answer, `cancelled`, or the deadline. `cancelled` is
    /// the caller's abort (a pending future for requests nobody cancels).
    pub async fn request(
        &self,
        method: &str,
        params: &impl serde::Serialize,
        cancelled: impl Future<Output = ()>,
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
        let request = Request {
            jsonrpc: "2.0",
            id: &format!("dsh:{id}"),
            method,
            params,
        };
        // Straight to bytes: a `json!` value tree first would cost a quarter of a call's CPU.
        let bytes = match serde_json::to_vec(&request) {
            Ok(bytes) => bytes,
            Err(error) => {
                self.forget(id);
                return Err(PeerError::Unserializable(error.to_string()));
            }
        };
        self.outbox.send(bytes);
        let deadline = async {
            match deadline_ms {
                Some(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
                None => std::future::pending().await,
            }
        };
        // Cancellation is polled first: at EOF the host cancels every request and then
        // disconnects the peer, and the call must end as cancelled, not as a lost client.
        let outcome = tokio::select! {
            biased;
            () = cancelled => Err(PeerError::Cancelled),
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::transport::framing::Framing;
    use crate::transport::spawn_writer;
    use tokio::io::{AsyncBufReadExt, BufReader};

    #[tokio::test]
    async fn a_request_is_one_compact_envelope_and_its_answer_is_routed_back() {
        let (output, input) = tokio::io::duplex(1 << 16);
        let (outbox, _writer) = spawn_writer(output, Framing::Ndjson);
        let peer = std::sync::Arc::new(Peer::new(outbox, 4));
        let params: Value = serde_json::from_str(r#"{"b":1.50,"a":"x\"y"}"#).unwrap();
        let asking = peer.clone();
        let answer = tokio::spawn(async move {
            let never = std::future::pending();
            asking.request("client/x", &params, never, None).await
        });
        let mut line = String::new();
        BufReader::new(input).read_line(&mut line).await.unwrap();
        assert_eq!(
            line,
            "{\"jsonrpc\":\"2.0\",\"id\":\"dsh:1\",\"method\":\"client/x\",\"params\":{\"b\":1.50,\"a\":\"x\\\"y\"}}\n"
        );
        let result = RawValue::from_string("[true]".into()).unwrap();
        assert!(peer.complete(&Value::from("dsh:1"), Ok(result)));
        assert_eq!(answer.await.unwrap().unwrap().get(), "[true]");
        assert!(!peer.complete(&Value::from("dsh:1"), Err(PeerError::Disconnected)));
    }

    #[tokio::test]
    async fn unserializable_params_fail_the_request_without_leaving_it_pending() {
        struct Failing;
        impl serde::Serialize for Failing {
            fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
                Err(serde::ser::Error::custom("no"))
            }
        }
        let (output, _input) = tokio::io::duplex(1 << 16);
        let (outbox, _writer) = spawn_writer(output, Framing::Ndjson);
        let peer = Peer::new(outbox, 1);
        let outcome = peer
            .request("x", &Failing, std::future::pending(), None)
            .await;
        assert_eq!(
            outcome.map(|raw| raw.get().to_string()),
            Err(PeerError::Unserializable("no".into()))
        );
        assert_eq!(peer.pending.lock().as_ref().map(HashMap::len), Some(0));
    }
}
