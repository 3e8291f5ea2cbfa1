//! `tools/listChanged`, coalesced per scope. The registry reports every change (an MCP
//! server's listing of 50,000 tools is 50,000 registrations); the client needs to hear
//! once that a scope's view changed, after the change, so that it lists the final state.
//!
//! A change in a scope that was not announced within [`INTERVAL`] is announced at once.
//! Later changes wait: they are announced together once the scope has been quiet for
//! [`QUIET`], or [`MAX_HOLD`] after the first of them, so a long burst still shows
//! progress, never more than once per [`INTERVAL`]. A response the connection sends first
//! announces what waits ([`ListChanges::flush`]): a request's own change is always
//! announced before its answer, as the protocol promises.

use crate::tool::AgentId;
use crate::transport::Outbox;
use dsh_tools_protocol::ListChangedNotification;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::Notify;
use tokio::time::Instant;

/// Least time between two announcements of one scope (unless a response comes between).
pub const INTERVAL: Duration = Duration::from_millis(50);
/// A waiting announcement goes once its scope saw no change for this long.
pub const QUIET: Duration = Duration::from_millis(50);
/// ... or at the latest this long after the first change it announces.
pub const MAX_HOLD: Duration = Duration::from_secs(1);

/// The connection's `tools/listChanged` announcer. Cheap to clone.
#[derive(Clone)]
pub struct ListChanges(Arc<Inner>);

struct Inner {
    outbox: Outbox,
    /// Runs the timer that sends waiting announcements; none outside a runtime (then every
    /// change is announced at once).
    runtime: Option<tokio::runtime::Handle>,
    state: Mutex<State>,
    /// Whether any announcement waits: responses check it without the lock.
    waiting: AtomicBool,
    /// Wakes the timer when a new announcement starts waiting.
    wake: Notify,
}

#[derive(Default)]
struct State {
    scopes: HashMap<Option<AgentId>, Scope>,
    /// Scopes whose announcement waits, in the order they started waiting.
    order: Vec<Option<AgentId>>,
    timer_running: bool,
}

struct Scope {
    last_sent: Instant,
    waiting: Option<Waiting>,
}

/// Changes not announced yet.
#[derive(Clone, Copy)]
struct Waiting {
    first: Instant,
    last: Instant,
}

impl Scope {
    fn due(&self) -> Option<Instant> {
        let waiting = self.waiting?;
        let settled = (waiting.last + QUIET).min(waiting.first + MAX_HOLD);
        Some(settled.max(self.last_sent + INTERVAL))
    }
}

impl ListChanges {
    /// An announcer writing to `outbox`; call it inside the runtime.
    pub fn new(outbox: Outbox) -> Self {
        ListChanges(Arc::new(Inner {
            outbox,
            runtime: tokio::runtime::Handle::try_current().ok(),
            state: Mutex::new(State::default()),
            waiting: AtomicBool::new(false),
            wake: Notify::new(),
        }))
    }

    /// The registry changed what `scope` sees (callable from any thread).
    pub fn changed(&self, scope: Option<AgentId>) {
        let inner = &self.0;
        let now = Instant::now();
        let mut state = inner.state.lock();
        let Some(runtime) = &inner.runtime else {
            drop(state);
            inner.announce(&scope);
            return;
        };
        match state.scopes.get_mut(&scope) {
            Some(known) if known.waiting.is_some() => {
                if let Some(waiting) = &mut known.waiting {
                    waiting.last = now;
                }
            }
            Some(known) if now < known.last_sent + INTERVAL => {
                known.waiting = Some(Waiting {
                    first: now,
                    last: now,
                });
                state.order.push(scope);
                inner.waiting.store(true, Ordering::Release);
                if state.timer_running {
                    inner.wake.notify_one();
                } else {
                    state.timer_running = true;
                    runtime.spawn(self.clone().timer());
                }
            }
            _ => {
                state.scopes.insert(
                    scope.clone(),
                    Scope {
                        last_sent: now,
                        waiting: None,
                    },
                );
                // Under the lock, so announcements of one scope keep their order.
                inner.announce(&scope);
            }
        }
    }

    /// Announces every waiting change now: called before a response is queued, so the
    /// changes a request made reach the client before its answer.
    pub fn flush(&self) {
        if !self.0.waiting.load(Ordering::Acquire) {
            return;
        }
        let mut state = self.0.state.lock();
        self.0.send_due(&mut state, None);
    }

    /// Sends waiting announcements as they fall due; ends when none waits.
    async fn timer(self) {
        loop {
            let next = {
                let mut state = self.0.state.lock();
                let next = state
                    .order
                    .iter()
                    .filter_map(|scope| state.scopes.get(scope)?.due())
                    .min();
                if next.is_none() {
                    state.timer_running = false;
                }
                next
            };
            let Some(next) = next else {
                return;
            };
            tokio::select! {
                () = tokio::time::sleep_until(next) => {}
                // An earlier deadline may have appeared.
                () = self.0.wake.notified() => {}
            }
            let mut state = self.0.state.lock();
            self.0.send_due(&mut state, Some(Instant::now()));
        }
    }
}

impl Inner {
    /// Sends the waiting announcements due by `now` (all of them for `None`), in the order
    /// they started waiting.
    fn send_due(&self, state: &mut State, now: Option<Instant>) {
        let sent_at = Instant::now();
        let order = std::mem::take(&mut state.order);
        for scope in order {
            let Some(known) = state.scopes.get_mut(&scope) else {
                continue;
            };
            match (now, known.due()) {
                (Some(now), Some(due)) if due > now => state.order.push(scope),
                (_, Some(_)) => {
                    known.waiting = None;
                    known.last_sent = sent_at;
                    self.announce(&scope);
                }
                (_, None) => {}
            }
        }
        self.waiting
            .store(!state.order.is_empty(), Ordering::Release);
    }

    fn announce(&self, scope: &Option<AgentId>) {
        self.outbox.notify(
            "tools/listChanged",
            &ListChangedNotification {
                agent: scope.as_ref().map(ToString::to_string),
            },
        );
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::transport::framing::Framing;
    use tokio::io::AsyncReadExt;

    /// The announcements written once `work` ran and every outbox clone is gone.
    async fn announced(work: impl AsyncFnOnce(&ListChanges)) -> Vec<String> {
        let (output, mut input) = tokio::io::duplex(1 << 20);
        let (outbox, writer) = crate::transport::spawn_writer(output, Framing::Ndjson);
        let changes = ListChanges::new(outbox.clone());
        work(&changes).await;
        drop(changes);
        outbox.close();
        drop(outbox);
        writer.await.unwrap();
        let mut text = String::new();
        input.read_to_string(&mut text).await.unwrap();
        text.lines()
            .map(|line| {
                let message: serde_json::Value = serde_json::from_str(line).unwrap();
                message["params"]["agent"]
                    .as_str()
                    .unwrap_or("*")
                    .to_string()
            })
            .collect()
    }

    fn agent(name: &str) -> Option<AgentId> {
        Some(AgentId::from(name.to_string()))
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_is_announced_at_once_and_again_when_it_settles() {
        let seen = announced(async |changes| {
            for _ in 0..50_000 {
                changes.changed(None);
            }
            changes.changed(agent("a"));
            changes.changed(agent("a"));
            tokio::time::sleep(QUIET * 3).await;
        })
        .await;
        assert_eq!(seen, ["*", "a", "*", "a"]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_long_burst_is_announced_once_per_max_hold() {
        let seen = announced(async |changes| {
            let started = Instant::now();
            // A change every 10 ms for 3.5 s: never quiet for 50 ms.
            while started.elapsed() < MAX_HOLD * 7 / 2 {
                changes.changed(None);
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            tokio::time::sleep(QUIET * 3).await;
        })
        .await;
        // At once, after 1, 2 and 3 s, and once the burst settled.
        assert_eq!(seen.len(), 5, "{seen:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn flush_announces_what_waits_before_a_response() {
        let seen = announced(async |changes| {
            changes.changed(agent("x"));
            changes.changed(agent("c"));
            changes.changed(agent("x"));
            changes.changed(agent("c"));
            changes.flush();
            // Nothing is left to announce later.
            tokio::time::sleep(MAX_HOLD * 2).await;
        })
        .await;
        assert_eq!(seen, ["x", "c", "x", "c"]);
    }

    #[tokio::test(start_paused = true)]
    async fn changes_further_apart_than_the_interval_are_each_announced_at_once() {
        let seen = announced(async |changes| {
            for _ in 0..3 {
                changes.changed(None);
                tokio::time::sleep(INTERVAL).await;
            }
        })
        .await;
        assert_eq!(seen, ["*", "*", "*"]);
    }
}
