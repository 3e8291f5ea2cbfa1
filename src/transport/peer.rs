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

/// The LSP error code of a request the peer cancelled (RequestCancelled).
const REQUEST_CANCELLED: i64 = -32800;

/// The client as a peer that answers the host's requests.
pub struct Peer {
    outbox: Outbox,
    pending: Mutex<Option<HashMap<u64, oneshot::Sender<Answer>>>>,
    next_id: AtomicU64,
    max_pending: usize,
    /// How long a cancelled request still waits for the client's answer.
    cancel_grace_ms: AtomicU64,
}

impl Peer {
    /// A peer writing through `outbox`, with at most `max_pending` unanswered requests.
    pub fn new(outbox: Outbox, max_pending: usize) -> Self {
        Peer {
            outbox,
            pending: Mutex::new(Some(HashMap::new())),
            next_id: AtomicU64::new(1),
            max_pending,
            cancel_grace_ms: AtomicU64::new(
                dsh_tools_protocol::PipelineConfig::default().cancel_grace_ms,
            ),
        }
    }

    /// Sets how long a cancelled request waits for the client's answer (the work the client
    /// started for it is not raced away from: its answer within the grace is the outcome).
    pub fn set_cancel_grace_ms(&self, ms: u64) {
        self.cancel_grace_ms.store(ms, Ordering::Relaxed);
    }

    /// The outbox (for notifications).
    pub fn outbox(&self) -> &Outbox {
        &self.outbox
    }

    /// Sends `method` and waits for the answer, `cancelled`, or the deadline. `cancelled` is
    /// the caller's abort (a pending future for requests nobody cancels).
    ///
    /// Cancellation is quiescent: when `cancelled` fires first, `$/cancelRequest` is sent and
    /// the client's answer is still awaited for the cancel grace, never past the deadline.
    /// An answer in that window is the outcome (a late success or error, as the client gave
    /// it); no answer, a `-32800` (RequestCancelled) answer or a lost client is
    /// [`PeerError::Cancelled`].
    pub async fn request(
        &self,
        method: &str,
        params: &impl serde::Serialize,
        cancelled: impl Future<Output = ()>,
        deadline_ms: Option<u64>,
    ) -> Result<Box<RawValue>, PeerError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (sender, mut receiver) = oneshot::channel();
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
        tokio::pin!(deadline);
        // Cancellation is polled first: at EOF the host cancels every request and then
        // disconnects the peer, and the call must end as cancelled, not as a lost client.
        let outcome = tokio::select! {
            biased;
            () = cancelled => Err(PeerError::Cancelled),
            answer = &mut receiver => answer.unwrap_or(Err(PeerError::Disconnected)),
            () = &mut deadline => Err(PeerError::TimedOut(deadline_ms.unwrap_or_default())),
        };
        match outcome {
            Err(PeerError::Cancelled) => {
                self.cancel_request(id);
                let grace = Duration::from_millis(self.cancel_grace_ms.load(Ordering::Relaxed));
                let late = tokio::select! {
                    answer = &mut receiver => answer.unwrap_or(Err(PeerError::Disconnected)),
                    () = tokio::time::sleep(grace) => Err(PeerError::Cancelled),
                    () = &mut deadline => Err(PeerError::Cancelled),
                };
                match late {
                    Ok(raw) => Ok(raw),
                    Err(PeerError::Remote { code, .. }) if code == REQUEST_CANCELLED => {
                        Err(PeerError::Cancelled)
                    }
                    Err(remote @ PeerError::Remote { .. }) => Err(remote),
                    Err(_) => {
                        self.forget(id);
                        Err(PeerError::Cancelled)
                    }
                }
            }
            Err(PeerError::TimedOut(ms)) => {
                self.cancel_request(id);
                self.forget(id);
                Err(PeerError::TimedOut(ms))
            }
            other => other,
        }
    }

    /// Tells the client the host no longer needs request `id` answered (LSP's
    /// `$/cancelRequest`).
    fn cancel_request(&self, id: u64) {
        self.outbox.notify(
            "$/cancelRequest",
            &serde_json::json!({ "id": format!("dsh:{id}") }),
        );
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

    /// A cancelled request still takes the client's answer: a late result is the outcome,
    /// a `-32800` answer is the cancellation itself, any other late error is that error.
    #[tokio::test]
    async fn a_cancelled_request_waits_for_the_clients_answer() {
        let late_answers = [
            (Ok("\"late\""), Ok("\"late\"".to_owned())),
            (
                Err(PeerError::Remote {
                    code: -32800,
                    message: "cancelled".into(),
                }),
                Err(PeerError::Cancelled),
            ),
            (
                Err(PeerError::Remote {
                    code: 7,
                    message: "broke".into(),
                }),
                Err(PeerError::Remote {
                    code: 7,
                    message: "broke".into(),
                }),
            ),
        ];
        for (answer, expected) in late_answers {
            let (output, input) = tokio::io::duplex(1 << 16);
            let (outbox, _writer) = spawn_writer(output, Framing::Ndjson);
            let peer = std::sync::Arc::new(Peer::new(outbox, 4));
            let asking = peer.clone();
            let outcome = tokio::spawn(async move {
                let cancelled = std::future::ready(());
                let raw = asking.request("client/x", &1, cancelled, None).await;
                raw.map(|raw| raw.get().to_owned())
            });
            let mut lines = BufReader::new(input).lines();
            let request = lines.next_line().await.unwrap().unwrap();
            assert!(request.contains("\"id\":\"dsh:1\""), "{request}");
            let cancel = lines.next_line().await.unwrap().unwrap();
            assert_eq!(
                cancel,
                "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":\"dsh:1\"}}"
            );
            let answer = answer.map(|text| RawValue::from_string(text.to_owned()).unwrap());
            assert!(peer.complete(&Value::from("dsh:1"), answer));
            assert_eq!(outcome.await.unwrap(), expected);
        }
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
