//! The connection loop: read frames, demultiplex requests / notifications / responses /
//! batches, pass requests through the lifecycle gate to the router (inline or as tasks),
//! and shut down in order.

use super::anticipate::Anticipation;
use super::backpressure::{OUTPUT_HIGH_WATER, WORK_HIGH_WATER};
use super::methods;
use super::nesting::nesting_exceeds;
use super::reply::DirectReply;
use super::router::{Dispatch, Router};
use super::session::{RequestSignal, Session};
use crate::transport::framing::{FrameReader, Framing, ReadEvent};
use crate::transport::{PeerError, spawn_writer};
use dsh_tools_protocol::{HostConfig, TransportConfig, error_codes};
use futures::FutureExt;
use jsonrpsee::Extensions;
use jsonrpsee_types::Id;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use serde_json::value::RawValue;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::task::JoinSet;

/// The exit code after an oversized LSP frame ended the connection (a broken stream, like
/// `exit` without `shutdown`).
const OVERSIZED_EXIT_CODE: i32 = 1;

/// How to serve one connection.
pub struct ServeOptions {
    /// Input framing (`auto` decides on the first byte).
    pub framing: Framing,
    /// `--config FILE` as JSON (`initialize.config` merges over it).
    pub base_config: Value,
    /// That configuration, parsed (limits the transport before `initialize`).
    pub config: HostConfig,
}

/// Serves one client until EOF or `exit`; returns the process exit code.
pub async fn serve<R, W>(input: R, output: W, options: ServeOptions) -> i32
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let initial = if options.framing == Framing::Ndjson {
        Framing::Ndjson
    } else {
        Framing::Lsp
    };
    let (outbox, writer) = spawn_writer(output, initial);
    let session = Session::new(outbox.clone(), options.base_config, options.config);
    let mut router = methods::router(session.clone());
    router.add_hook(Arc::new(Anticipation {
        runtime: session.host.runtime.clone(),
        code: session.host.code.clone(),
    }));
    let connection = Connection {
        router,
        session: session.clone(),
    };
    // The cap is set before every read below.
    let mut reader = FrameReader::new(input, options.framing, usize::MAX);
    let mut tasks = JoinSet::new();
    let mut framing_known = false;
    let exit_code = loop {
        outbox.wait_below(OUTPUT_HIGH_WATER).await;
        while tasks.try_join_next().is_some() {}
        // `initialize.config` may change the limits; it is answered before the next read.
        let max_bytes = max_message_bytes(&session.client().config.transport);
        reader.set_max_message_bytes(max_bytes);
        let event = tokio::select! {
            event = reader.next() => event,
            // A failed write means the client closed its end: as good as EOF.
            () = outbox.disconnected() => ReadEvent::Eof,
        };
        match event {
            ReadEvent::Message(bytes) => {
                if !framing_known && let Some(framing) = reader.framing() {
                    framing_known = true;
                    outbox.set_framing(framing);
                    session.set_framing(framing);
                }
                if let Some(code) = connection.handle(bytes, &mut tasks).await {
                    break code;
                }
            }
            ReadEvent::TooLarge { size } => {
                let message = format!(
                    "message of {size} bytes exceeds transport.maxMessageBytes ({max_bytes})"
                );
                outbox.send(error_response(None, error_codes::INVALID_REQUEST, &message));
            }
            ReadEvent::Oversized { size } => {
                // The body was not read, so nothing after it can be framed: answer, say why
                // on stderr, and end the connection as an LSP server does on a broken stream.
                let message = format!(
                    "message of {size} bytes exceeds transport.maxMessageBytes ({max_bytes})"
                );
                tracing::error!(
                    "closing the connection: a frame announces {size} bytes, more than \
                     transport.maxMessageBytes ({max_bytes}); its body is not read"
                );
                outbox.send(error_response(None, error_codes::INVALID_REQUEST, &message));
                break OVERSIZED_EXIT_CODE;
            }
            ReadEvent::Skipped { reason } => tracing::warn!("skipped input: {reason}"),
            ReadEvent::Eof => break 0,
        }
    };
    // After `shutdown` the client asked for a graceful end: let the work it is waiting for
    // finish (requests to the client now fail fast). Otherwise EOF aborts what is in flight.
    // Cancel first, then disconnect: a waiter must see its call's abort, not a lost client.
    if !session.lifecycle.is_shut_down() {
        session.requests.cancel_all();
    }
    session.peer.disconnect();
    while tasks.join_next().await.is_some() {}
    // Every call has settled: MCP servers are reaped and the spill files go.
    session.host.shutdown().await;
    drop(connection);
    drop(session);
    outbox.close();
    let _ = writer.await;
    exit_code
}

fn max_message_bytes(transport: &TransportConfig) -> usize {
    usize::try_from(transport.max_message_bytes).unwrap_or(usize::MAX)
}

/// One incoming JSON-RPC object, fields kept raw (`id: null` is distinct from no id).
#[derive(Deserialize)]
struct Incoming<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

fn present<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(deserializer).map(Some)
}

struct Connection {
    router: Router,
    session: Arc<Session>,
}

/// A concurrent method's work, ending in its reply: spawned once, as the task that also
/// queues the reply, so an answer makes no extra hop between tasks on its way out.
type MethodFuture = std::pin::Pin<Box<dyn std::future::Future<Output = Vec<u8>> + Send>>;

/// What one element of the input produced.
enum Handled {
    /// A reply to send now.
    Reply(Vec<u8>),
    /// A reply that a method's future will produce, for the request with this id (canonical
    /// text), which stays in flight until its reply is queued: `shutdown` waits for that.
    Pending(MethodFuture, String),
    /// Nothing to send (notification or response).
    Nothing,
    /// `exit` with this code.
    Exit(i32),
}

/// A batch element once its method started: a reply, or the task producing it.
enum Batched {
    Reply(Vec<u8>),
    Pending(tokio::task::JoinHandle<Vec<u8>>, String),
}

impl Connection {
    /// Handles one frame; `Some(code)` ends the connection.
    async fn handle(&self, bytes: Vec<u8>, tasks: &mut JoinSet<()>) -> Option<i32> {
        let max_depth = self.session.client().config.transport.max_nesting_depth as usize;
        if nesting_exceeds(&bytes, max_depth) {
            let message = format!(
                "invalid request: JSON nested deeper than transport.maxNestingDepth ({max_depth})"
            );
            self.session.peer.outbox().send(error_response(
                None,
                error_codes::INVALID_REQUEST,
                &message,
            ));
            return None;
        }
        let text = match std::str::from_utf8(&bytes) {
            Ok(text) => text,
            Err(e) => {
                let message = format!("parse error: invalid UTF-8: {e}");
                self.session.peer.outbox().send(error_response(
                    None,
                    error_codes::PARSE_ERROR,
                    &message,
                ));
                return None;
            }
        };
        let outbox = self.session.peer.outbox().clone();
        if text.trim_start().starts_with('[') {
            let elements: Vec<&RawValue> = match parse_json(text) {
                Ok(elements) => elements,
                Err(reply) => {
                    outbox.send(reply);
                    return None;
                }
            };
            if elements.is_empty() {
                outbox.send(error_response(
                    None,
                    error_codes::INVALID_REQUEST,
                    "invalid request: empty batch",
                ));
                return None;
            }
            let mut replies = Vec::new();
            let mut exit = None;
            for element in elements {
                match self.handle_one(element.get()).await {
                    Handled::Reply(reply) => replies.push(Batched::Reply(reply)),
                    // Started now, so the batch's methods run concurrently.
                    Handled::Pending(work, id) => {
                        replies.push(Batched::Pending(tokio::spawn(work), id));
                    }
                    Handled::Nothing => {}
                    Handled::Exit(code) => exit = exit.or(Some(code)),
                }
            }
            if !replies.is_empty() {
                let session = self.session.clone();
                tasks.spawn(async move {
                    let mut parts = Vec::with_capacity(replies.len());
                    let mut answered = Vec::new();
                    for reply in replies {
                        match reply {
                            Batched::Reply(bytes) => parts.push(bytes),
                            Batched::Pending(task, id) => {
                                parts.push(
                                    task.await
                                        .unwrap_or_else(|e| internal_error(&e.to_string())),
                                );
                                answered.push(id);
                            }
                        }
                    }
                    let mut batch = Vec::from(&b"["[..]);
                    for (i, part) in parts.iter().enumerate() {
                        if i > 0 {
                            batch.push(b',');
                        }
                        batch.extend_from_slice(part);
                    }
                    batch.push(b']');
                    session.respond(batch);
                    for id in answered {
                        session.requests.untrack(&id);
                    }
                });
            }
            return exit;
        }
        match self.handle_one(text).await {
            Handled::Reply(reply) => {
                self.session.respond(reply);
                None
            }
            Handled::Pending(work, id) => {
                let session = self.session.clone();
                tasks.spawn(async move {
                    let reply = work.await;
                    session.respond(reply);
                    session.requests.untrack(&id);
                });
                None
            }
            Handled::Nothing => None,
            Handled::Exit(code) => Some(code),
        }
    }

    async fn handle_one(&self, text: &str) -> Handled {
        if !text.trim_start().starts_with('{') {
            return Handled::Reply(match parse_json::<IgnoredAny>(text) {
                Ok(_) => error_response(
                    None,
                    error_codes::INVALID_REQUEST,
                    "invalid request: a message must be a JSON object",
                ),
                Err(reply) => reply,
            });
        }
        let incoming: Incoming = match parse_json(text) {
            Ok(incoming) => incoming,
            Err(reply) => return Handled::Reply(reply),
        };
        if incoming.jsonrpc.map(RawValue::get) != Some("\"2.0\"") {
            let id = incoming.id.filter(|id| valid_id(id));
            return Handled::Reply(error_response(
                id,
                error_codes::INVALID_REQUEST,
                "invalid request: \"jsonrpc\" must be \"2.0\"",
            ));
        }
        let Some(method) = incoming.method else {
            let answers_host = incoming.id.is_some_and(|id| id.get().starts_with("\"dsh:"));
            if incoming.result.is_none() && incoming.error.is_none() && !answers_host {
                // Neither a request nor a response. Its id is not echoed: the client
                // could take the error for the answer to its own request with that id.
                return Handled::Reply(error_response(
                    None,
                    error_codes::INVALID_REQUEST,
                    "invalid request: \"method\" is missing (a response needs \"result\" or \"error\")",
                ));
            }
            // An answer to one of the host's requests, even a malformed one, settles it.
            self.complete_client_request(&incoming);
            return Handled::Nothing;
        };
        let Ok(method) = serde_json::from_str::<String>(method.get()) else {
            let id = incoming.id.filter(|id| valid_id(id));
            return Handled::Reply(error_response(
                id,
                error_codes::INVALID_REQUEST,
                "invalid request: \"method\" must be a string",
            ));
        };
        // LSP clients send `params: null` for parameterless requests such as `shutdown`.
        let params = incoming.params.filter(|p| p.get().trim() != "null");
        if let Some(params) = params
            && !matches!(
                params.get().trim_start().as_bytes().first(),
                Some(b'{' | b'[')
            )
        {
            let id = incoming.id.filter(|id| valid_id(id));
            let message = "invalid request: \"params\" must be an object or an array";
            return Handled::Reply(error_response(id, error_codes::INVALID_REQUEST, message));
        }
        match incoming.id {
            None => self.notification(&method, params),
            Some(id) if !valid_id(id) => Handled::Reply(error_response(
                None,
                error_codes::INVALID_REQUEST,
                "invalid request: \"id\" must be a string, a non-negative integer or null",
            )),
            Some(id) => self.request(id, method, params).await,
        }
    }

    fn notification(&self, method: &str, params: Option<&RawValue>) -> Handled {
        match method {
            "exit" => Handled::Exit(self.session.lifecycle.exit_code()),
            "$/cancelRequest" => {
                let id = params
                    .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
                    .and_then(|p| p.get("id").cloned());
                match id {
                    Some(id) if self.session.requests.cancel(&id.to_string()) => {}
                    Some(id) => tracing::debug!("$/cancelRequest for {id}, which is not in flight"),
                    None => tracing::warn!("$/cancelRequest without an id"),
                }
                Handled::Nothing
            }
            "tools/reportProgress" => {
                match params.map(|p| super::params::from_str(p.get())) {
                    Some(Ok::<dsh_tools_protocol::ReportProgressParams, _>(report)) => {
                        self.session.progress_routes.deliver(report)
                    }
                    Some(Err(e)) => tracing::warn!("tools/reportProgress: {}", e.message()),
                    None => tracing::warn!("tools/reportProgress without params"),
                }
                Handled::Nothing
            }
            "initialized" => Handled::Nothing,
            other => {
                tracing::debug!("ignoring notification {other}");
                Handled::Nothing
            }
        }
    }

    async fn request(
        &self,
        raw_id: &RawValue,
        method: String,
        params: Option<&RawValue>,
    ) -> Handled {
        if let Err(refusal) = self.session.lifecycle.admit(&method) {
            return Handled::Reply(error_response(Some(raw_id), refusal.code, refusal.message));
        }
        self.router.announce(&method, params);
        // Canonical text, so `$/cancelRequest` finds it however the client spelled the id.
        let id_text = serde_json::from_str::<Value>(raw_id.get())
            .map_or_else(|_| raw_id.get().to_string(), |id| id.to_string());
        let id = jsonrpsee_id(raw_id);
        let token = self.session.requests.track(&id_text);
        let mut extensions = Extensions::new();
        extensions.insert(RequestSignal(token));
        let direct = DirectReply::new(serde_json::to_string(&id).unwrap_or_else(|_| "null".into()));
        extensions.insert(direct.clone());
        let Some((dispatch, call)) = self.router.call(&method, id, params, extensions) else {
            self.session.requests.untrack(&id_text);
            let message = format!("method not found: {method:?}");
            return Handled::Reply(error_response(
                Some(raw_id),
                error_codes::METHOD_NOT_FOUND,
                &message,
            ));
        };
        let panicked = id_text.clone();
        let run = async move {
            match AssertUnwindSafe(call).catch_unwind().await {
                Ok(response) => direct.take().unwrap_or_else(|| {
                    String::from(Box::<str>::from(response.into_json())).into_bytes()
                }),
                Err(_) => internal_error_for(&panicked),
            }
        };
        match dispatch {
            Dispatch::Task => {
                // Work starts only while the client keeps up (`backpressure`).
                let outbox = self.session.outbox.clone();
                let gated = async move {
                    outbox.wait_below(WORK_HIGH_WATER).await;
                    run.await
                };
                Handled::Pending(Box::pin(gated), id_text)
            }
            Dispatch::Inline => {
                let reply = run.await;
                self.session.requests.untrack(&id_text);
                Handled::Reply(reply)
            }
        }
    }

    fn complete_client_request(&self, incoming: &Incoming) {
        let Some(id) = incoming
            .id
            .and_then(|id| serde_json::from_str::<Value>(id.get()).ok())
        else {
            tracing::warn!("ignoring a message with neither method nor id");
            return;
        };
        let answer = match (incoming.result, incoming.error) {
            (Some(result), None) => Ok(result.to_owned()),
            (None, Some(error)) => {
                let error: Value = serde_json::from_str(error.get()).unwrap_or(Value::Null);
                Err(PeerError::Remote {
                    code: error
                        .get("code")
                        .and_then(Value::as_i64)
                        .unwrap_or(error_codes::INTERNAL_ERROR.into()),
                    message: error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("malformed error")
                        .to_string(),
                })
            }
            _ => Err(PeerError::Remote {
                code: error_codes::INVALID_REQUEST.into(),
                message: "response must carry exactly one of result or error".into(),
            }),
        };
        if !self.session.peer.complete(&id, answer) {
            tracing::debug!("response for unknown or abandoned request {id}");
        }
    }
}

fn valid_id(id: &RawValue) -> bool {
    match serde_json::from_str::<Value>(id.get()) {
        Ok(Value::String(_) | Value::Null) => true,
        Ok(Value::Number(n)) => n.as_u64().is_some(),
        _ => false,
    }
}

fn jsonrpsee_id(id: &RawValue) -> Id<'static> {
    match serde_json::from_str::<Value>(id.get()) {
        Ok(Value::Number(n)) => n.as_u64().map_or(Id::Null, Id::Number),
        Ok(Value::String(s)) => Id::Str(s.into()),
        _ => Id::Null,
    }
}

/// Parses JSON, answering `-32700` for syntax errors and `-32600` for a wrong shape.
fn parse_json<'a, T: Deserialize<'a>>(text: &'a str) -> Result<T, Vec<u8>> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    deserializer.disable_recursion_limit();
    let parsed =
        T::deserialize(&mut deserializer).and_then(|value| deserializer.end().map(|()| value));
    parsed.map_err(|e| match e.classify() {
        serde_json::error::Category::Syntax
        | serde_json::error::Category::Eof
        | serde_json::error::Category::Io => {
            error_response(None, error_codes::PARSE_ERROR, &format!("parse error: {e}"))
        }
        serde_json::error::Category::Data => error_response(
            None,
            error_codes::INVALID_REQUEST,
            &format!("invalid request: {e}"),
        ),
    })
}

/// A complete error response.
fn error_response(id: Option<&RawValue>, code: i32, message: &str) -> Vec<u8> {
    let id = id
        .and_then(|id| serde_json::from_str::<Value>(id.get()).ok())
        .unwrap_or(Value::Null);
    let response = serde_json::json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } });
    response.to_string().into_bytes()
}

fn internal_error(detail: &str) -> Vec<u8> {
    error_response(
        None,
        error_codes::INTERNAL_ERROR,
        &format!("internal error: {detail}"),
    )
}

fn internal_error_for(id_text: &str) -> Vec<u8> {
    let id = serde_json::from_str::<Value>(id_text).unwrap_or(Value::Null);
    let message = "internal error: the handler panicked";
    serde_json::json!({ "jsonrpc": "2.0", "id": id, "error": { "code": error_codes::INTERNAL_ERROR, "message": message } })
        .to_string()
        .into_bytes()
}
