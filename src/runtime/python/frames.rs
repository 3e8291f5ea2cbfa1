//! The private protocol with the interpreter: frames of a 4-byte big-endian length and
//! UTF-8 JSON, read by a task of their own and parsed without recursion.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::pipe;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};

use crate::json;

/// Bytes a frame may hold beyond the output it carries: its JSON envelope (type, id, name).
const FRAME_ENVELOPE_BYTES: u64 = 64 * 1024;

/// What the interpreter says.
#[derive(Debug)]
pub(super) enum ChildFrame {
    Log {
        stream: String,
        text: String,
    },
    Call {
        id: u64,
        name: String,
        args: Value,
    },
    Done {
        answer: String,
    },
    /// The interpreter finished starting and waits for its program.
    Ready,
    /// A fork server's child could not take on its per-run state (`why`): it exited.
    Refused(String),
    /// The stream broke the protocol (`why`); the run ends as `worker-exit`.
    Garbled(String),
    /// A frame declared more bytes than the run's output budget has left: it is never read,
    /// and the run ends as `output-limit`.
    Oversized,
}

/// The run's remaining output budget in bytes, as the run loop last saw it: no frame larger
/// than it (plus an envelope) is ever buffered.
#[derive(Clone)]
pub(super) struct Room(Arc<AtomicU64>);

impl Room {
    pub(super) fn new(bytes: u64) -> Self {
        Self(Arc::new(AtomicU64::new(bytes)))
    }

    pub(super) fn set(&self, bytes: u64) {
        self.0.store(bytes, Ordering::Relaxed);
    }

    fn admits(&self, length: u32) -> bool {
        u64::from(length)
            <= self
                .0
                .load(Ordering::Relaxed)
                .saturating_add(FRAME_ENVELOPE_BYTES)
    }
}

/// Bytes of frames read ahead of the run loop: beyond them the reader leaves the pipe
/// unread, so a run that stops taking frames (its client is not reading, earlier runs hold
/// too much output) holds a few MiB of its program's output, not a channel full of lines.
const READ_AHEAD_BYTES: u32 = 4 << 20;

/// Frames read from the interpreter, each holding its share of the read-ahead until taken.
pub(super) struct Frames {
    receiver: mpsc::Receiver<(ChildFrame, OwnedSemaphorePermit)>,
}

impl Frames {
    /// The next frame; `None` once the stream ended.
    pub(super) async fn recv(&mut self) -> Option<ChildFrame> {
        self.receiver.recv().await.map(|(frame, _read_ahead)| frame)
    }
}

/// Reads frames from `from_child` into a channel until EOF (the channel then closes).
/// The read-ahead bound pushes back on a flooding program through the pipe.
/// Frames nest their payload one level down, so they are parsed at `max_depth + 1`.
pub(super) fn read_frames(mut from_child: pipe::Receiver, max_depth: usize, room: Room) -> Frames {
    let (frames, receiver) = mpsc::channel(64);
    let read_ahead = Arc::new(Semaphore::new(READ_AHEAD_BYTES as usize));
    tokio::spawn(async move {
        loop {
            let (frame, bytes) = match read_frame(&mut from_child, &room).await {
                Ok(Some(body)) => {
                    let bytes = u32::try_from(body.len()).unwrap_or(u32::MAX);
                    (parse(&body, max_depth.saturating_add(1)), bytes)
                }
                Ok(None) => return,
                Err(FrameError::Oversized) => (ChildFrame::Oversized, 0),
                Err(FrameError::Io) => return,
            };
            let Ok(share) = read_ahead
                .clone()
                .acquire_many_owned(bytes.clamp(1, READ_AHEAD_BYTES))
                .await
            else {
                return;
            };
            let last = matches!(frame, ChildFrame::Garbled(_) | ChildFrame::Oversized);
            if frames.send((frame, share)).await.is_err() || last {
                return;
            }
        }
    });
    Frames { receiver }
}

/// How an interpreter's start ended.
pub(super) enum Started {
    Ready,
    /// It said why it cannot serve a run (a fork server's child that could not confine itself).
    Refused(String),
    /// Anything else came, or nothing.
    Broken,
}

/// Waits for the interpreter's `ready` (or `refused`) frame.
pub(super) async fn await_ready(from_child: &mut pipe::Receiver) -> Started {
    let Ok(Some(body)) = read_frame(from_child, &Room::new(4096)).await else {
        return Started::Broken;
    };
    match parse(&body, 1) {
        ChildFrame::Ready => Started::Ready,
        ChildFrame::Refused(why) => Started::Refused(why),
        _ => Started::Broken,
    }
}

/// Why no frame was read.
enum FrameError {
    Oversized,
    /// The pipe broke: the interpreter is gone, which the run notices by the channel closing.
    Io,
}

/// One length-prefixed frame, refused before any of its body is read when its declared
/// length exceeds what `room` admits.
async fn read_frame(
    from_child: &mut pipe::Receiver,
    room: &Room,
) -> Result<Option<Vec<u8>>, FrameError> {
    let length = match from_child.read_u32().await {
        Ok(length) => length,
        Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(_) => return Err(FrameError::Io),
    };
    if !room.admits(length) {
        return Err(FrameError::Oversized);
    }
    let mut body = vec![0; length as usize];
    from_child
        .read_exact(&mut body)
        .await
        .map_err(|_| FrameError::Io)?;
    Ok(Some(body))
}

fn parse(body: &[u8], max_depth: usize) -> ChildFrame {
    let garbled = |why: &str| ChildFrame::Garbled(why.to_owned());
    let Ok(text) = std::str::from_utf8(body) else {
        return garbled("a frame is not UTF-8");
    };
    let Ok(Value::Object(mut frame)) = json::parse_within(text, max_depth) else {
        return garbled("a frame is not a JSON object");
    };
    match take_text(&mut frame, "t").as_deref() {
        Some("log") => match (take_text(&mut frame, "s"), take_text(&mut frame, "text")) {
            (Some(stream), Some(text)) => ChildFrame::Log { stream, text },
            _ => garbled("a log frame lacks its stream or text"),
        },
        Some("ready") => ChildFrame::Ready,
        Some("refused") => ChildFrame::Refused(take_text(&mut frame, "why").unwrap_or_default()),
        Some("done") => match take_text(&mut frame, "answer") {
            Some(answer) => ChildFrame::Done { answer },
            None => garbled("a done frame lacks its answer"),
        },
        Some("call") => {
            let name = take_text(&mut frame, "name");
            let id = frame.get("id").and_then(Value::as_u64);
            match (id, name, frame.remove("args")) {
                (Some(id), Some(name), Some(args)) => ChildFrame::Call { id, name, args },
                _ => garbled("a call frame lacks its id, name or arguments"),
            }
        }
        _ => garbled("a frame has an unknown type"),
    }
}

/// Removes the string member `name` from a frame.
fn take_text(frame: &mut serde_json::Map<String, Value>, name: &str) -> Option<String> {
    match frame.remove(name) {
        Some(Value::String(text)) => Some(text),
        _ => None,
    }
}

/// Writes frames to the interpreter in order from a task of its own, so that a program
/// that stops reading (a hot loop) never blocks the run's host side.
pub(super) fn write_frames(mut to_child: pipe::Sender) -> mpsc::UnboundedSender<String> {
    let (frames, mut receiver) = mpsc::unbounded_channel::<String>();
    tokio::spawn(async move {
        while let Some(frame) = receiver.recv().await {
            let Ok(length) = u32::try_from(frame.len()) else {
                return;
            };
            let mut bytes = Vec::with_capacity(frame.len() + 4);
            bytes.extend_from_slice(&length.to_be_bytes());
            bytes.extend_from_slice(frame.as_bytes());
            if to_child.write_all(&bytes).await.is_err() {
                return;
            }
        }
    });
    frames
}

/// The `start` frame: the program, the CPU-seconds backstop (RLIMIT_CPU), the JSON depth
/// bound the interpreter enforces on arguments and the result, and the names its `tools`
/// object binds.
pub(super) fn start_frame(
    code: &str,
    cpu_seconds: u64,
    max_depth: usize,
    tools: &[String],
) -> String {
    let tools = Value::Array(tools.iter().cloned().map(Value::String).collect());
    format!(
        "{{\"t\":\"start\",\"cpuSeconds\":{cpu_seconds},\"maxDepth\":{max_depth},\"tools\":{},\"code\":{}}}",
        json::render_compact(&tools),
        json::render_compact(&Value::String(code.to_owned()))
    )
}

/// The answer to binding call `id`.
pub(super) fn result_frame(id: u64, result: &Result<Value, String>) -> String {
    match result {
        Ok(value) => format!(
            "{{\"t\":\"result\",\"id\":{id},\"ok\":{}}}",
            json::render_compact(value)
        ),
        Err(message) => format!(
            "{{\"t\":\"result\",\"id\":{id},\"error\":{}}}",
            json::render_compact(&Value::String(message.clone()))
        ),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn describe(frame: ChildFrame) -> String {
        format!("{frame:?}")
    }

    #[test]
    fn frames_parse_or_are_garbled() {
        let check = |body: &str, expected: &str| {
            assert_eq!(describe(parse(body.as_bytes(), 8)), expected, "{body}")
        };
        check(
            r#"{"t":"log","s":"warn","text":"x"}"#,
            r#"Log { stream: "warn", text: "x" }"#,
        );
        check(
            r#"{"t":"call","id":3,"name":"a-b","args":{"n":1}}"#,
            r#"Call { id: 3, name: "a-b", args: Object {"n": Number(1)} }"#,
        );
        check(r#"{"t":"done","answer":"u"}"#, r#"Done { answer: "u" }"#);
        check(
            r#"{"t":"call","id":-1,"name":"a","args":1}"#,
            "Garbled(\"a call frame lacks its id, name or arguments\")",
        );
        check("[1]", "Garbled(\"a frame is not a JSON object\")");
        check(r#"{"t":"x"}"#, "Garbled(\"a frame has an unknown type\")");
    }

    #[test]
    fn host_frames_are_compact_json() {
        assert_eq!(
            start_frame("print(\"é\")\n", 3, 100, &["a-b".to_owned()]),
            "{\"t\":\"start\",\"cpuSeconds\":3,\"maxDepth\":100,\"tools\":[\"a-b\"],\"code\":\"print(\\\"é\\\")\\n\"}"
        );
        assert_eq!(
            result_frame(2, &Ok(json!({"a": [1, null]}))),
            "{\"t\":\"result\",\"id\":2,\"ok\":{\"a\":[1,null]}}"
        );
        assert_eq!(
            result_frame(1, &Err("no".into())),
            "{\"t\":\"result\",\"id\":1,\"error\":\"no\"}"
        );
    }
}
