//! SIGTERM, SIGINT, SIGHUP (a closed terminal or editor), SIGQUIT and SIGUSR1 as an orderly
//! shutdown: a token that fires on any of them, and a stdin wrapper that reads as EOF from
//! then on (so `serve` shuts down exactly as on EOF, killing what it started instead of
//! dying by the signal's default action and orphaning it).

use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, ReadBuf};
use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

/// The signals that end the host in order.
const TERMINATING: [SignalKind; 5] = [
    SignalKind::terminate(),
    SignalKind::interrupt(),
    SignalKind::hangup(),
    SignalKind::quit(),
    SignalKind::user_defined1(),
];

/// A token cancelled on the first terminating signal (call inside the runtime).
pub fn on_terminate() -> CancellationToken {
    let token = CancellationToken::new();
    for kind in TERMINATING {
        match signal(kind) {
            Ok(mut received) => {
                let fire = token.clone();
                tokio::spawn(async move {
                    tokio::select! {
                        _ = received.recv() => {
                            tracing::info!("termination signal {}: shutting down", kind.as_raw_value());
                            fire.cancel();
                        }
                        () = fire.cancelled() => {}
                    }
                });
            }
            Err(e) => tracing::warn!("cannot watch signal {}: {e}", kind.as_raw_value()),
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
