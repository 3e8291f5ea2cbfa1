//! The Python runtime's hand-tuned durations, in one place, each with the reason for its
//! value: how an interpreter is started (`pool`) and how a run is metered and ended (`run`).

use std::time::Duration;

/// Pause before the pool tries again after an interpreter failed to start: a failure that
/// repeats (a missing or broken `python3`, a sandbox the kernel refuses) must not spin
/// spawning processes, and a transient one is retried before the next run is likely.
pub(super) const RESPAWN_BACKOFF: Duration = Duration::from_millis(500);

/// Longest a refill waits for the runs being driven to end before it prepares their
/// replacement: a spaced run then never shares the CPU with the next run's child (measured
/// 2026-12-07, release over stdio: the refill's fork and dry pass beside a trivial run put
/// 2.8 ms on each side of the program); runs that keep coming are not left without one.
pub(super) const REFILL_DEFERRAL: Duration = Duration::from_millis(50);

/// How long a starting interpreter may take to say it is ready. Generous, because it is
/// never on a run's path (only a booted interpreter is handed out) and a loaded machine can
/// start CPython slowly; bounded, so an interpreter that hangs at boot is replaced.
pub(super) const BOOT_GUARD: Duration = Duration::from_secs(30);

/// Shortest pause between busy-time checks of a run: each check reads
/// `/proc/<pid>/task/*/schedstat`, so a nearly spent budget must not be polled in a spin.
pub(super) const MIN_CHECK_INTERVAL: Duration = Duration::from_millis(10);

/// Longest pause between checks of a run's tree (CPU time and memory): its forked
/// processes may spend every CPU between two checks, and a polled tree (no cgroup) is only
/// stopped at a check when it went past its memory.
pub(super) const MAX_CHECK_INTERVAL: Duration = Duration::from_millis(50);

/// How long a killed interpreter may take to be reaped before the run answers without its
/// exit status: a SIGKILLed process goes at once unless it is in an uninterruptible wait,
/// and the run's answer must not wait on that.
pub(super) const REAP_GRACE: Duration = Duration::from_secs(2);
