//! SIGTERM and SIGINT as an orderly shutdown: a token that fires on either, and a stdin
//! wrapper that reads as EOF from then on (so `serve` shuts down exactly as on EOF).

use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, ReadBuf};
use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

/// A token cancelled on the first SIGTERM or SIGINT (call inside the runtime).
pub fn on_terminate() -> CancellationToken {
    let token = CancellationToken::new();
    let fire = token.clone();
    let (term, int) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    );
    match (term, int) {
        (Ok(mut term), Ok(mut int)) => {
            tokio::spawn(async move {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
                tracing::info!("termination signal: shutting down");
                fire.cancel();
            });
        }
        (Err(e), _) | (_, Err(e)) => {
            tracing::warn!("cannot watch termination signals: {e}");
        }
    }
    token
}

/// Reads `inner` until `token` fires, then reports EOF.
pub struct EofOnCancel<R> {
    inner: R,
    cancelled: Pin<Box<WaitForCancellationFutureOwned>>,
    ended: bool,
}

impl<R> EofOnCancel<R> {
    /// Wraps `inner`.
    pub fn new(inner: R, token: CancellationToken) -> Self {
        EofOnCancel {
            inner,
            cancelled: Box::pin(token.cancelled_owned()),
            ended: false,
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for EofOnCancel<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if !self.ended && self.cancelled.as_mut().poll(cx).is_ready() {
            self.ended = true;
        }
        if self.ended {
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}
