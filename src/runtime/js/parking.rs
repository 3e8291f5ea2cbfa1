//! Parking a runaway isolate thread for good, so an abandoned program burns no CPU.
//!
//! QuickJS polls for termination once per 10,000 calls or loop back-edges and never inside a
//! built-in, so `while (true) JSON.stringify(big)` can run for minutes after its run was
//! stopped. A thread cannot be killed inside a process; it can be made to wait forever: the
//! supervisor of an abandoned isolate signals its thread, and the handler, running on that
//! thread, parks it in `pause()` unless the thread has meanwhile left the run's JavaScript
//! (then it is about to tear its isolate down under the teardown lock and must not stop).
//! The parked thread keeps its isolate's memory (bounded by `maxHeapMb`) until the host
//! exits, and at most [`CAPACITY`] threads are ever parked.

use std::sync::Arc;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};

use nix::sys::pthread::{Pthread, pthread_kill, pthread_self};
use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};

/// The signal that parks a thread; nothing else in the host uses it.
const PARK_SIGNAL: Signal = Signal::SIGURG;
/// Threads that can be marked for parking over the host's life.
pub(crate) const CAPACITY: usize = 64;

/// A thread marked for parking and the flag it sets when its run's JavaScript is over.
struct Mark {
    thread: AtomicU64,
    left: AtomicPtr<AtomicBool>,
}

static MARKS: [Mark; CAPACITY] = [const {
    Mark {
        thread: AtomicU64::new(0),
        left: AtomicPtr::new(std::ptr::null_mut()),
    }
}; CAPACITY];
static INSTALL: Once = Once::new();

/// Parks `thread` forever unless `left` is set by the time it handles the signal. False when
/// every mark is taken or the signal could not be sent.
pub(crate) fn park(thread: Pthread, left: Arc<AtomicBool>) -> bool {
    INSTALL.call_once(install_handler);
    let Some(mark) = MARKS.iter().find(|mark| {
        mark.thread
            .compare_exchange(0, thread, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }) else {
        return false;
    };
    // Leaked on purpose: the handler reads it at any later time, and a parked thread never
    // lets go of its run anyway.
    mark.left
        .store(Arc::into_raw(left).cast_mut(), Ordering::Release);
    pthread_kill(thread, PARK_SIGNAL).is_ok()
}

fn install_handler() {
    let action = SigAction::new(
        SigHandler::Handler(park_if_marked),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    // SAFETY: the handler only loads atomics, compares thread ids and calls `pause`, all
    // async-signal-safe; it replaces the default disposition of SIGURG (ignore), which
    // nothing in the host relies on.
    if let Err(error) = unsafe { sigaction(PARK_SIGNAL, &action) } {
        tracing::error!(%error, "could not install the isolate parking handler");
    }
}

extern "C" fn park_if_marked(_: std::ffi::c_int) {
    let me = pthread_self();
    let Some(mark) = MARKS
        .iter()
        .find(|mark| mark.thread.load(Ordering::Acquire) == me)
    else {
        return;
    };
    let left = mark.left.load(Ordering::Acquire);
    // SAFETY: a non-null pointer came from `Arc::into_raw` and is never freed.
    if !left.is_null() && unsafe { &*left }.load(Ordering::Acquire) {
        return;
    }
    loop {
        nix::unistd::pause();
    }
}
