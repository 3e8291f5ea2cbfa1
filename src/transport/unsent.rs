//! Bytes queued for a client and not yet written: per connection (the reader's backpressure,
//! the drop of observe-only notifications) and summed over the process, which the output
//! ledger of runs in progress counts with what they hold (`runtime::held`): an answer waiting
//! for a client that does not read is memory as much as the lines it was made of.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Unsent bytes of every connection of the process.
static IN_PROCESS: AtomicUsize = AtomicUsize::new(0);

/// Unsent bytes of every connection of the process.
pub fn unsent_in_process() -> usize {
    IN_PROCESS.load(Ordering::Relaxed)
}

/// One connection's unsent bytes, mirrored in the process's sum.
#[derive(Default)]
pub(super) struct Unsent(AtomicUsize);

impl Unsent {
    pub(super) fn get(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }

    pub(super) fn add(&self, bytes: usize) {
        self.0.fetch_add(bytes, Ordering::Relaxed);
        IN_PROCESS.fetch_add(bytes, Ordering::Relaxed);
    }

    pub(super) fn written(&self, bytes: usize) {
        self.0.fetch_sub(bytes, Ordering::Relaxed);
        IN_PROCESS.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// Nothing will be written any more (the client is gone).
    pub(super) fn clear(&self) {
        IN_PROCESS.fetch_sub(self.0.swap(0, Ordering::Relaxed), Ordering::Relaxed);
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
    fn a_connection_s_bytes_count_in_the_process_sum_until_written_or_cleared() {
        let unsent = Unsent::default();
        unsent.add(100);
        unsent.written(40);
        assert_eq!(unsent.get(), 60);
        // The sum is every live connection's count: never below this one's.
        assert!(unsent_in_process() >= 60);
        unsent.clear();
        assert_eq!(unsent.get(), 0);
    }
}
