//! Isolates torn down on many threads at once. Every teardown takes a reference to the
//! engine's shared platform and releases it on its own thread; the count of those references
//! must stay exact, or the platform is freed while in use (or never). The host does not
//! serialize teardowns: the engine's count is atomic (vendor/patches/v8x).

#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Barrier};

use deno_core::v8;

use super::support::{cache_home, startup_with_snapshot};
use crate::runtime::js::isolate::FreshIsolate;

const THREADS: usize = 4;
/// Isolates each thread creates and drops, all threads starting together.
const ISOLATES_PER_THREAD: usize = 4;
/// Rounds in which each thread takes references (as a teardown does) and then releases them
/// together with the other threads, so that a count that could lose an update under
/// contention would lose some.
const ROUNDS: usize = 20;
const REFERENCES_PER_ROUND: usize = 10_000;

#[test]
fn concurrent_teardowns_keep_the_platforms_reference_count() {
    cache_home();
    let startup = startup_with_snapshot();
    // The platform exists once the first isolate does.
    std::thread::spawn(move || drop(FreshIsolate::new(64, startup).unwrap()))
        .join()
        .unwrap();
    let platform = v8::V8::get_current_platform();
    let start = Arc::new(Barrier::new(THREADS));
    let threads: Vec<_> = (0..THREADS)
        .map(|_| {
            let start = start.clone();
            std::thread::spawn(move || {
                start.wait();
                for _ in 0..ISOLATES_PER_THREAD {
                    drop(FreshIsolate::new(64, startup).unwrap());
                }
                for _ in 0..ROUNDS {
                    // Taking one holds the engine's global lock; releasing one does not.
                    let taken: Vec<_> = (0..REFERENCES_PER_ROUND)
                        .map(|_| v8::V8::get_current_platform())
                        .collect();
                    start.wait();
                    drop(taken);
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    // The engine's global state holds one reference, this test the other (isolates other
    // tests tear down meanwhile hold theirs briefly: the assertion waits for them).
    platform.assert_use_count_eq(2);
}
