//! The host's memory over many Code Mode runs through the real binary: each run's isolate
//! and thread are destroyed after it, and everything they allocated must go with them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::code::Host;
use serde_json::json;
use std::time::Duration;

/// Runs before the first measurement: the pool's first isolates (made from source while
/// the startup snapshot is being built) are used up and the allocator has its working set.
const WARM_UP: usize = 50;
/// Runs between the two measurements.
const RUNS: usize = 300;
/// What those runs may add to the host's resident memory. Measured on this 2-core VM in a
/// debug build, 300 trivial runs after 50: −1 to +4 MB with every isolate freed; +36 MB when
/// each disposed isolate left about 120 KB behind (v8x as published), +11 MB when only op
/// functions restored from the snapshot were kept (about 40 KB per isolate). 8 MiB catches
/// 28 KB per run.
const BOUND_KIB: u64 = 8 * 1024;
/// Lets the pool finish refilling before a measurement, so no isolate is half made.
const SETTLE: Duration = Duration::from_millis(250);

/// Trivial runs leave the host's resident memory flat. mimalloc is told to return freed
/// memory to the system at once (`MIMALLOC_PURGE_DELAY=0`; by default it keeps it for a
/// second), so resident memory counts what is still allocated, not what the allocator
/// holds on to.
#[test]
fn trivial_runs_leave_the_hosts_memory_flat() {
    let mut host = Host::code_mode_with_env("code", json!({}), &[("MIMALLOC_PURGE_DELAY", "0")]);
    let run = |host: &mut Host, index: usize| {
        let result = host.run_code(&format!("run-{index}"), "return 1");
        assert_eq!(result["value"]["result"], 1, "{result}");
    };
    for index in 0..WARM_UP {
        run(&mut host, index);
    }
    std::thread::sleep(SETTLE);
    let before = host.resident_memory_kib();
    for index in WARM_UP..WARM_UP + RUNS {
        run(&mut host, index);
    }
    std::thread::sleep(SETTLE);
    let after = host.resident_memory_kib();
    let growth = after.saturating_sub(before);
    assert!(
        growth < BOUND_KIB,
        "{RUNS} trivial runs grew the host's resident memory by {growth} KiB \
         ({before} -> {after} KiB), over the bound of {BOUND_KIB} KiB"
    );
    assert_eq!(host.finish(), 0);
}
