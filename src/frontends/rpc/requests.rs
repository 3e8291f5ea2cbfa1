//! The client's requests in flight: their cancellation signals (for `$/cancelRequest`, EOF
//! and `exit`) and a wait for them to drain (for `shutdown`).

use parking_lot::Mutex;
use std::collections::HashMap;
use tokio_util::sync::CancellationToken;

/// Requests in flight, by the canonical text of their id.
#[derive(Default)]
pub struct InFlight {
    tokens: Mutex<HashMap<String, CancellationToken>>,
    settled: tokio::sync::Notify,
}

impl InFlight {
    /// Tracks a request so `$/cancelRequest` can abort it.
    pub fn track(&self, id: &str) -> CancellationToken {
        let token = CancellationToken::new();
        self.tokens.lock().insert(id.to_string(), token.clone());
        token
    }

    /// Stops tracking a finished request.
    pub fn untrack(&self, id: &str) {
        self.tokens.lock().remove(id);
        self.settled.notify_waiters();
    }

    /// Waits until at most `remaining` requests are in flight (`shutdown` counts itself).
    pub async fn drained_to(&self, remaining: usize) {
        loop {
            let settled = self.settled.notified();
            if self.tokens.lock().len() <= remaining {
                return;
            }
            settled.await;
        }
    }

    /// Aborts the request with this id (canonical JSON text of the id).
    pub fn cancel(&self, id: &str) -> bool {
        match self.tokens.lock().get(id) {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// Aborts everything in flight (EOF, exit).
    pub fn cancel_all(&self) {
        for token in self.tokens.lock().values() {
            token.cancel();
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn drained_to_waits_for_the_last_untrack() {
        let requests = std::sync::Arc::new(InFlight::default());
        let token = requests.track("1");
        requests.track("2");
        assert!(requests.cancel("1") && token.is_cancelled());
        assert!(!requests.cancel("3"));
        let waiter = tokio::spawn({
            let requests = requests.clone();
            async move { requests.drained_to(0).await }
        });
        requests.untrack("1");
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished());
        requests.untrack("2");
        waiter.await.unwrap();
    }
}
