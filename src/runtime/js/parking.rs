//! Parking a runaway isolate thread, so an abandoned program costs little CPU and still ends.
//!
//! A termination request reaches the engine at its next call or back-edge (`interrupt`), but
//! one built-in call (`new Array(5e6).fill(0)`, `sort` of a large array) can run far past the
//! slot's bound. A thread cannot be killed inside a process; it can be made to wait: the slot
//! hands an abandoned isolate's thread to the dozer, which signals it, and the handler,
//! running on that thread, waits on a futex unless the thread has meanwhile left the run's
//! JavaScript (then it is about to tear its isolate down and must not stop). The dozer lets
//! one parked thread run for [`PARKED_SLICE`] in every [`PARKED_TICK`], requesting
//! termination meanwhile, so together they use at most a twentieth of a core: each finishes its
//! built-in, sees the request, leaves JavaScript and ends, and the dozer joins it. At most
//! [`CAPACITY`] threads are parked at once; a thread that cannot be parked runs on unparked.

use std::collections::VecDeque;
use std::os::unix::thread::JoinHandleExt;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Once, OnceLock};
use std::thread::JoinHandle;
use std::time::Instant;

use nix::sys::pthread::{Pthread, pthread_kill, pthread_self};
use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};
use parking_lot::Mutex;

use super::terminator::LeftEngine;
use super::timing::{PARKED_SLICE, PARKED_TICK, TERMINATE_EVERY};

/// The signal that parks a thread; nothing else in the host uses it.
const PARK_SIGNAL: Signal = Signal::SIGURG;
/// Threads that can be parked at once.
pub(crate) const CAPACITY: usize = 64;

/// A parked thread's entry, read by the signal handler on that thread.
struct Mark {
    /// The parked thread's id; 0 when the mark is free.
    thread: AtomicU64,
    /// Its run's "left JavaScript" flag (from `Arc::into_raw`, reclaimed once it is joined).
    left: AtomicPtr<AtomicBool>,
    /// 1 while the dozer lets the thread run; the handler waits while it is 0.
    running: AtomicU32,
}

static MARKS: [Mark; CAPACITY] = [const {
    Mark {
        thread: AtomicU64::new(0),
        left: AtomicPtr::new(std::ptr::null_mut()),
        running: AtomicU32::new(0),
    }
}; CAPACITY];
static INSTALL: Once = Once::new();
static DOZER: OnceLock<Mutex<Sender<Parked>>> = OnceLock::new();

/// A thread the dozer owns until it ends.
struct Parked {
    mark: &'static Mark,
    thread: JoinHandle<()>,
    left: LeftEngine,
}

/// Parks `thread` (unless its run's JavaScript is over by the time it handles the signal)
/// and lets it run in short slices until it ends. Gives the thread back when every mark is
/// taken or the dozer could not start.
pub(crate) fn park(thread: JoinHandle<()>, left: LeftEngine) -> Result<(), JoinHandle<()>> {
    INSTALL.call_once(install_handler);
    let Some(dozer) = dozer() else {
        return Err(thread);
    };
    let id = thread.as_pthread_t();
    let Some(mark) = MARKS.iter().find(|mark| {
        mark.thread
            .compare_exchange(0, id, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }) else {
        return Err(thread);
    };
    mark.running.store(0, Ordering::Release);
    mark.left
        .store(Arc::into_raw(left.flag()).cast_mut(), Ordering::Release);
    // The thread is not joined before the dozer joins it, so its id stays valid for signals.
    let _ = pthread_kill(id, PARK_SIGNAL);
    left.set_parked();
    if let Err(returned) = dozer.lock().send(Parked { mark, thread, left }) {
        // No dozer: let the thread run on and end by itself.
        let parked = returned.0;
        resume(parked.mark);
        release(parked.mark);
        return Err(parked.thread);
    }
    Ok(())
}

fn dozer() -> Option<&'static Mutex<Sender<Parked>>> {
    if let Some(dozer) = DOZER.get() {
        return Some(dozer);
    }
    let (sender, receiver) = channel();
    let spawned = std::thread::Builder::new()
        .name("dsh-dozer".to_owned())
        .stack_size(256 * 1024)
        .spawn(move || doze(&receiver));
    if let Err(error) = spawned {
        tracing::error!(%error, "could not start the parked-isolate dozer");
        return None;
    }
    Some(DOZER.get_or_init(|| Mutex::new(sender)))
}

/// Gives each parked thread a slice in turn and joins the ones that ended.
fn doze(arrivals: &Receiver<Parked>) {
    let mut parked: VecDeque<Parked> = VecDeque::new();
    loop {
        if parked.is_empty() {
            match arrivals.recv() {
                Ok(thread) => parked.push_back(thread),
                Err(_) => return,
            }
        }
        parked.extend(arrivals.try_iter());
        let tick = Instant::now();
        if let Some(turn) = parked.pop_front() {
            if run_slice(&turn) {
                // Past its run: the thread is tearing its isolate down and ending.
                let _ = turn.thread.join();
                release(turn.mark);
            } else {
                parked.push_back(turn);
            }
        }
        std::thread::sleep(PARKED_TICK.saturating_sub(tick.elapsed()));
    }
}

/// Lets one parked thread run for [`PARKED_SLICE`] while requesting termination; true once it has
/// left JavaScript (then it is not parked again).
fn run_slice(turn: &Parked) -> bool {
    if turn.left.is_set() {
        return true;
    }
    resume(turn.mark);
    let started = Instant::now();
    while started.elapsed() < PARKED_SLICE {
        turn.left.request();
        if turn.left.is_set() {
            return true;
        }
        std::thread::sleep(TERMINATE_EVERY);
    }
    turn.mark.running.store(0, Ordering::Release);
    let _ = pthread_kill(turn.thread.as_pthread_t(), PARK_SIGNAL);
    turn.left.is_set()
}

/// Wakes a parked thread's handler and lets it return.
fn resume(mark: &Mark) {
    mark.running.store(1, Ordering::Release);
    futex_wake(&mark.running);
}

/// Frees a mark whose thread has been joined (no handler can read it any more).
fn release(mark: &Mark) {
    mark.thread.store(0, Ordering::Release);
    let left = mark.left.swap(std::ptr::null_mut(), Ordering::AcqRel);
    if !left.is_null() {
        // SAFETY: the pointer came from `Arc::into_raw` in `park`, and only the handler of
        // the joined thread ever read it.
        drop(unsafe { Arc::from_raw(left) });
    }
}

fn install_handler() {
    let action = SigAction::new(
        SigHandler::Handler(park_if_marked),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    // SAFETY: the handler only loads atomics, compares thread ids and makes futex calls, all
    // async-signal-safe; it replaces the default disposition of SIGURG (ignore), which
    // nothing in the host relies on.
    if let Err(error) = unsafe { sigaction(PARK_SIGNAL, &action) } {
        tracing::error!(%error, "could not install the isolate parking handler");
    }
}

extern "C" fn park_if_marked(_: std::ffi::c_int) {
    let me: Pthread = pthread_self();
    let Some(mark) = MARKS
        .iter()
        .find(|mark| mark.thread.load(Ordering::Acquire) == me)
    else {
        return;
    };
    let left = mark.left.load(Ordering::Acquire);
    // SAFETY: a non-null pointer came from `Arc::into_raw` and is reclaimed only after this
    // thread was joined.
    if left.is_null() || unsafe { &*left }.load(Ordering::Acquire) {
        return;
    }
    while mark.running.load(Ordering::Acquire) == 0 {
        futex_wait(&mark.running, 0);
    }
}

/// Sleeps while `word` holds `expected` (or until a signal or spurious wake).
fn futex_wait(word: &AtomicU32, expected: u32) {
    // SAFETY: FUTEX_WAIT on a valid, aligned u32 with no timeout; a raw system call, so
    // async-signal-safe.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            std::ptr::null::<libc::timespec>(),
        );
    }
}

/// Wakes every waiter on `word`.
fn futex_wake(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE on a valid, aligned u32.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            i32::MAX,
        );
    }
}
