//! A stdio server's stdout as rmcp reads it: one message per line, none longer than
//! [`MAX_MESSAGE`]. rmcp drops a longer line with nothing but a log line, which leaves the
//! call it answered pending forever; here the line's top-level `id` is read as it streams
//! past ([`Envelope`]) and the over-long answer is replaced by a JSON-RPC error for that id,
//! so the call fails at once naming the size, and the server keeps serving. What the line
//! held is never buffered: the part rmcp already took ends with a newline (rmcp ignores an
//! unparsable line) and the rest is only counted.
//!
//! The end of stdout is a signal of its own ([`StdoutWatch`]): a server that closes its
//! stdout but keeps running can answer nothing more, and its supervisor treats it as exited.

use super::envelope::Envelope;
use super::link::Link;
use parking_lot::Mutex;
use rmcp::model::RequestId;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::{Context, Poll, ready};
use tokio::io::{AsyncRead, ReadBuf};
use tokio_util::sync::CancellationToken;

/// The longest message a server may send, newline included: rmcp's own line limit (which
/// the Streamable HTTP client applies to one event too), so that no message this reader
/// passes on is one rmcp would drop.
pub const MAX_MESSAGE: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// What a JSON-RPC error replacing a dropped answer carries in its `data`, so the call can
/// tell it from an error the server sent.
pub const OVERSIZED_KEY: &str = "dshOversizedBytes";

/// How much is read from the pipe at a time.
const CHUNK: usize = 64 * 1024;

/// The end of a server's stdout, and why when the reader ended it.
#[derive(Default)]
pub struct StdoutWatch {
    closed: CancellationToken,
    why: Mutex<Option<String>>,
}

impl StdoutWatch {
    /// Resolves once the server's stdout ended (closed, or given up on by the reader).
    pub async fn closed(&self) {
        self.closed.cancelled().await;
    }

    /// Why the reader stopped reading, when it was not the server closing its stdout.
    pub fn why(&self) -> Option<String> {
        self.why.lock().clone()
    }

    fn close(&self, why: Option<String>) {
        if why.is_some() {
            *self.why.lock() = why;
        }
        self.closed.cancel();
    }
}

/// `R` (a server's stdout) with every message bounded by [`MAX_MESSAGE`].
pub struct BoundedStdout<R> {
    inner: R,
    buf: Box<[u8]>,
    start: usize,
    end: usize,
    /// Bytes of the current line seen so far.
    line: usize,
    /// The current line is over the limit: its bytes are counted, not passed on.
    dropping: bool,
    envelope: Envelope,
    /// Bytes to hand to rmcp before anything else (a newline, a replacement error).
    out: Vec<u8>,
    out_at: usize,
    ended: bool,
    watch: Arc<StdoutWatch>,
    link: Weak<Link>,
}

impl<R: AsyncRead + Unpin> BoundedStdout<R> {
    /// Reads `inner` for `link`'s server; its end is signalled on the returned watch.
    pub fn new(inner: R, link: &Arc<Link>) -> (Self, Arc<StdoutWatch>) {
        let watch = Arc::new(StdoutWatch::default());
        let reader = BoundedStdout {
            inner,
            buf: vec![0; CHUNK].into_boxed_slice(),
            start: 0,
            end: 0,
            line: 0,
            dropping: false,
            envelope: Envelope::default(),
            out: Vec::new(),
            out_at: 0,
            ended: false,
            watch: watch.clone(),
            link: Arc::downgrade(link),
        };
        (reader, watch)
    }

    /// The current line ended: what rmcp gets instead of it, if anything.
    fn dropped(&mut self) {
        let size = self.line;
        let envelope = std::mem::take(&mut self.envelope);
        let (what, replacement) = match (envelope.has_method(), envelope.id()) {
            (false, Some(id)) => (
                format!("answered request {} with", show(&id)),
                Some(replacement(&id, size)),
            ),
            (true, _) => ("sent a request or notification of".to_owned(), None),
            (false, None) => {
                // An answer no call can be matched to: whichever call it answered would
                // wait forever, so the connection is given up (and the server restarted).
                let why = format!(
                    "the server sent a message of {} without a readable id, over the {} limit of one MCP message; the connection was reset",
                    bytes(size),
                    mib(MAX_MESSAGE)
                );
                // The supervisor reports it (with what it did about it).
                self.ended = true;
                self.watch.close(Some(why));
                return;
            }
        };
        self.report(format!(
            "the server {what} {}, over the {} limit of one MCP message; it was dropped",
            bytes(size),
            mib(MAX_MESSAGE)
        ));
        if let Some(replacement) = replacement {
            self.out.extend_from_slice(&replacement);
        }
    }

    fn report(&self, text: String) {
        let Some(link) = self.link.upgrade() else {
            return;
        };
        tracing::warn!(target: "mcp", "[{}] {text}", link.name);
        link.update(|s| s.last_error = Some(text));
    }

    fn end_line(&mut self) {
        self.line = 0;
        self.dropping = false;
        self.envelope = Envelope::default();
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for BoundedStdout<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        loop {
            if this.out_at < this.out.len() {
                let n = (this.out.len() - this.out_at).min(buf.remaining());
                buf.put_slice(&this.out[this.out_at..this.out_at + n]);
                this.out_at += n;
                if this.out_at == this.out.len() {
                    this.out.clear();
                    this.out_at = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.ended {
                return Poll::Ready(Ok(()));
            }
            if this.start == this.end {
                let mut read = ReadBuf::new(&mut this.buf);
                if let Err(e) = ready!(Pin::new(&mut this.inner).poll_read(cx, &mut read)) {
                    this.ended = true;
                    this.watch
                        .close(Some(format!("reading the server's stdout failed: {e}")));
                    return Poll::Ready(Err(e));
                }
                let n = read.filled().len();
                if n == 0 {
                    this.ended = true;
                    this.watch.close(None);
                    continue;
                }
                (this.start, this.end) = (0, n);
            }
            let chunk = &this.buf[this.start..this.end];
            let newline = memchr::memchr(b'\n', chunk);
            let take = newline.map_or(chunk.len(), |at| at + 1);
            if !this.dropping && this.line + take > MAX_MESSAGE {
                this.dropping = true;
                if this.line > 0 {
                    // rmcp holds the line's beginning: end it (an unparsable line is ignored).
                    this.out.push(b'\n');
                }
            }
            if this.dropping {
                this.envelope.feed(&chunk[..take]);
                this.line += take;
                this.start += take;
                if newline.is_some() {
                    this.dropped();
                    this.end_line();
                }
                continue;
            }
            let n = take.min(buf.remaining());
            this.envelope.feed(&chunk[..n]);
            buf.put_slice(&chunk[..n]);
            this.line += n;
            this.start += n;
            if newline.is_some() && n == take {
                this.end_line();
            }
            return Poll::Ready(Ok(()));
        }
    }
}

/// The JSON-RPC error line that answers `id` in place of a dropped `size`-byte answer.
fn replacement(id: &RequestId, size: usize) -> Vec<u8> {
    let message = format!(
        "the answer was {}, over the {} limit of one MCP message, and was dropped",
        bytes(size),
        mib(MAX_MESSAGE)
    );
    let error = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": -32603, "message": message, "data": { OVERSIZED_KEY: size } },
    });
    let mut line = serde_json::to_vec(&error).unwrap_or_default();
    line.push(b'\n');
    line
}

fn show(id: &RequestId) -> String {
    serde_json::to_string(id).unwrap_or_default()
}

/// `17825800 bytes (17.0 MiB)`.
pub fn bytes(size: usize) -> String {
    format!("{size} bytes ({:.1} MiB)", size as f64 / (1024.0 * 1024.0))
}

/// `16 MiB`.
fn mib(size: usize) -> String {
    format!("{} MiB", size / (1024 * 1024))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use dsh_tools_protocol::{McpServerState, McpTransport};
    use tokio::io::AsyncReadExt;

    fn link() -> Arc<Link> {
        Link::new(
            "s",
            McpTransport::Stdio,
            McpServerState::Running,
            Arc::new(tokio::sync::watch::Sender::new(0)),
        )
    }

    /// Everything rmcp would read from `input`, the watch, and the link.
    async fn through(input: Vec<u8>) -> (String, Arc<StdoutWatch>, Arc<Link>) {
        let link = link();
        let (mut reader, watch) = BoundedStdout::new(std::io::Cursor::new(input), &link);
        let mut out = Vec::new();
        reader.read_to_end(&mut out).await.unwrap();
        (String::from_utf8(out).unwrap(), watch, link)
    }

    #[tokio::test]
    async fn lines_within_the_limit_pass_whole() {
        let near = format!(r#"{{"id":2,"result":"{}"}}"#, "y".repeat(MAX_MESSAGE - 30));
        let input = format!("{{\"id\":1,\"result\":{{}}}}\n{near}\n");
        let (out, watch, link) = through(input.clone().into_bytes()).await;
        assert!(out == input, "the lines changed");
        assert!(watch.closed.is_cancelled());
        assert_eq!(watch.why(), None);
        assert_eq!(link.status().last_error, None);
    }

    #[tokio::test]
    async fn an_over_long_answer_becomes_an_error_for_its_id() {
        let huge = format!(
            r#"{{"result":{{"content":[{{"text":"{}"}}]}},"jsonrpc":"2.0","id":7}}"#,
            "x".repeat(MAX_MESSAGE)
        );
        let size = huge.len() + 1;
        let input = format!("{huge}\n{{\"id\":8,\"result\":{{}}}}\n");
        let (out, watch, link) = through(input.into_bytes()).await;
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with(r#"{"result""#) && lines[0].len() <= MAX_MESSAGE);
        let error: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
        assert_eq!(error["id"], 7);
        assert_eq!(error["error"]["data"][OVERSIZED_KEY], size);
        let message = error["error"]["message"].as_str().unwrap();
        assert!(message.contains(&bytes(size)), "{message}");
        assert_eq!(lines[2], r#"{"id":8,"result":{}}"#);
        assert_eq!(watch.why(), None);
        let last_error = link.status().last_error.unwrap();
        assert!(
            last_error.starts_with("the server answered request 7 with ")
                && last_error.contains("over the 16 MiB limit"),
            "{last_error}"
        );
    }

    #[tokio::test]
    async fn an_over_long_answer_without_an_id_ends_the_stream() {
        let input = format!(
            "{{\"result\":\"{}\"}}\n{{\"id\":1}}\n",
            "z".repeat(MAX_MESSAGE)
        );
        let (out, watch, _) = through(input.into_bytes()).await;
        assert!(out.len() <= MAX_MESSAGE + 1 && out.ends_with('\n'));
        assert!(watch.why().unwrap().contains("without a readable id"));
    }
}
