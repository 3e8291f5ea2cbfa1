//! Handing an ended isolate thread's freed memory back to the system.
//!
//! mimalloc (the host's allocator, QuickJS's too; v3 as `libmimalloc-sys` builds it) gives a
//! freed page back to its arena and returns it to the system only after its `purge_delay`,
//! and only when a later allocation gets round to purging that arena. An isolate thread frees
//! its whole heap when its isolate is dropped and ends right after, so a program that grew
//! its heap (up to the heap limit) left the host that much larger until some allocation came
//! late enough, which an idle host may never make. A forced collection on the thread, once
//! its isolate and event loop are gone, frees its empty pages and purges every arena at once.
//!
//! The collection is not free (it shows in back-to-back runs; `docs/performance.md` has the
//! A/B), and after an ordinary run there is nothing to give back that the next isolate would
//! not take again.
//! So it runs only when the host's resident memory has grown [`GROWTH`] past what it was
//! after the last collection: a large heap, or many runs' worth of drift. (mimalloc's own
//! commit count would be cheaper, but a thread's share reaches it only when the thread ends.)

use std::sync::atomic::{AtomicUsize, Ordering};

/// Growth of resident memory since the last collection that makes the next thread end
/// collect.
const GROWTH: usize = 32 << 20;

/// Resident bytes after the last collection (0 before the first).
static RESIDENT_AFTER_LAST: AtomicUsize = AtomicUsize::new(0);

/// Frees this thread's empty pages and returns every arena's free pages to the system, when
/// resident memory grew [`GROWTH`] since the last time (or cannot be read).
pub(super) fn release_freed_memory() {
    if !due(resident(), RESIDENT_AFTER_LAST.load(Ordering::Relaxed)) {
        return;
    }
    // SAFETY: `mi_collect` has no preconditions; it only walks the allocator's own structures.
    unsafe { libmimalloc_sys::mi_collect(true) };
    RESIDENT_AFTER_LAST.store(resident().unwrap_or(0), Ordering::Relaxed);
}

/// Whether to collect, `now` resident bytes (if they could be read) against `last`'s.
fn due(now: Option<usize>, last: usize) -> bool {
    now.is_none_or(|now| now >= last.saturating_add(GROWTH))
}

/// The process's resident bytes (`/proc/self/statm`: one read, no allocator walk).
fn resident() -> Option<usize> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: usize = statm.split_ascii_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: `sysconf` only reads a configuration value.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * usize::try_from(page).ok()?)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_collection_is_due_after_enough_growth_or_when_memory_cannot_be_read() {
        let mib = 1 << 20;
        assert!(!due(Some(100 * mib), 100 * mib));
        assert!(!due(Some(100 * mib + GROWTH - 1), 100 * mib));
        assert!(due(Some(100 * mib + GROWTH), 100 * mib));
        assert!(!due(Some(10 * mib), 100 * mib), "shrinking is not growth");
        assert!(due(Some(GROWTH), 0), "the first collection");
        assert!(due(None, 100 * mib));
    }

    #[test]
    fn resident_bytes_are_what_the_kernel_reports() {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let kib: usize = status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap();
        let ours = resident().unwrap();
        // Two reads of a live process: other test threads may allocate between them.
        assert!(ours.abs_diff(kib * 1024) < 16 << 20, "{ours} vs {kib} KiB");
        assert!(ours > 1 << 20);
    }
}
