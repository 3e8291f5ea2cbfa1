//! Bytes queued for a client and not yet written: per connection (the reader's backpressure,
//! the drop of observe-only notifications) and, for what someone waits for, summed over the
//! process, which the output ledger of runs in progress counts with what they hold
//! (`runtime::held`): an answer waiting for a client that does not read is memory as much as
//! the lines it was made of. Observe-only notifications are left out of the sum: they are
//! dropped past their own mark, and counting them would slow runs for a slow reader instead.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Unsent bytes that someone waits for (responses, requests, notifications that are not
/// observe-only), summed over every connection of the process.
static IN_PROCESS: AtomicUsize = AtomicUsize::new(0);

/// Unsent bytes someone waits for, over every connection of the process (observe-only
/// notifications, dropped past their own mark instead, are not counted).
pub fn unsent_in_process() -> usize {
    IN_PROCESS.load(Ordering::Relaxed)
}

/// One connection's unsent bytes; the ones someone waits for are mirrored in the process's
/// sum.
#[derive(Default)]
pub(super) struct Unsent {
    all: AtomicUsize,
    awaited: AtomicUsize,
}

impl Unsent {
    pub(super) fn get(&self) -> usize {
        self.all.load(Ordering::Relaxed)
    }

    /// `bytes` more queued; `observed` when they are an observe-only notification.
    pub(super) fn add(&self, bytes: usize, observed: bool) {
        self.all.fetch_add(bytes, Ordering::Relaxed);
        if !observed {
            self.awaited.fetch_add(bytes, Ordering::Relaxed);
            IN_PROCESS.fetch_add(bytes, Ordering::Relaxed);
        }
    }

    /// `bytes` written, `awaited` of them not observe-only.
    pub(super) fn written(&self, bytes: usize, awaited: usize) {
        self.all.fetch_sub(bytes, Ordering::Relaxed);
        self.awaited.fetch_sub(awaited, Ordering::Relaxed);
        IN_PROCESS.fetch_sub(awaited, Ordering::Relaxed);
    }

    /// Nothing will be written any more (the client is gone).
    pub(super) fn clear(&self) {
        self.all.store(0, Ordering::Relaxed);
        IN_PROCESS.fetch_sub(self.awaited.swap(0, Ordering::Relaxed), Ordering::Relaxed);
    }
}

impl Drop for Unsent {
    fn drop(&mut self) {
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_s_awaited_bytes_count_in_the_process_sum_until_written_or_cleared() {
        let unsent = Unsent::default();
        unsent.add(100, false);
        unsent.add(1_000, true);
        unsent.written(40, 40);
        assert_eq!(unsent.get(), 1_060);
        // The sum is every live connection's awaited bytes: never below this one's 60.
        assert!(unsent_in_process() >= 60);
        unsent.clear();
        assert_eq!(unsent.get(), 0);
    }
}
