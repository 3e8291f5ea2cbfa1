//! Handing an ended isolate thread's freed memory back to the system.
//!
//! mimalloc (the host's allocator, QuickJS's too; v3 as `libmimalloc-sys` builds it) gives a
//! freed page back to its arena and returns it to the system `purge_delay` (1 s) later, and
//! only when a later allocation gets round to purging that arena. An isolate thread frees its
//! whole heap when its isolate is dropped and ends right after, so a program that grew its
//! heap left the host that much larger until some allocation came late enough, which an idle
//! host may never make (measured: 580 MB resident after microtask floods to the 512 MiB
//! limit, still 580 MB idle; 45 MB with this; the soak ended idle at 280 MB for a minute). A
//! forced collection on the thread, once its isolate and event loop are gone, frees its empty
//! pages and purges every arena at once.
//!
//! The collection is not free (about 0.8 ms a run back to back, A/B over stdio), and after
//! an ordinary run there is nothing to give back that the next isolate would not take again.
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
    let last = RESIDENT_AFTER_LAST.load(Ordering::Relaxed);
    if resident().is_some_and(|now| now < last.saturating_add(GROWTH)) {
        return;
    }
    // SAFETY: `mi_collect` has no preconditions; it only walks the allocator's own structures.
    unsafe { libmimalloc_sys::mi_collect(true) };
    RESIDENT_AFTER_LAST.store(resident().unwrap_or(0), Ordering::Relaxed);
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
    fn resident_memory_follows_a_large_allocation() {
        let before = resident().unwrap();
        let mut large = vec![0u8; 64 << 20];
        large.iter_mut().step_by(4096).for_each(|byte| *byte = 1);
        std::hint::black_box(&large);
        let during = resident().unwrap();
        assert!(during >= before + (32 << 20), "{before} -> {during}");
    }
}
