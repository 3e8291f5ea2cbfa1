//! The JavaScript engine's hand-tuned durations, in one place, each with the reason for its
//! value. The modules that use them (`handoff`, `supply`, `slot`, `terminator`, `parking`)
//! say what each wait is for; here is why it is as long as it is. What these values were
//! measured against is in `docs/performance.md`.

use std::time::Duration;

/// How long a woken isolate thread waits awake for its job before it sleeps again
/// (`handoff`). Long enough to cover stripping and setting up a typical program, so the job
/// meets an awake thread; short enough that the spin costs nothing noticeable when a large
/// program takes longer and the thread goes back to sleep.
pub(crate) const AWAKE_FOR: Duration = Duration::from_micros(500);

/// How long a finished slot may put off its teardown and refill while another isolate is
/// ready (`supply`). Long enough for the run's answer to be written and read before the
/// teardown takes a core; short enough that a burst of runs finds the pool refilled. Pacing
/// ends at once when a run takes the last ready isolate, so no run waits for it.
pub(crate) const PACE: Duration = Duration::from_millis(5);

/// An isolate that has sat ready at least this long warms up when a run is anticipated
/// (`slot`). An isolate used moments ago still has warm caches, and back to back a warm-up
/// would only take a core from the refills; after this long idle, its caches have gone cold
/// enough that warming pays for itself (`cargo bench --bench isolate` shows the curve).
pub(crate) const WARM_AFTER: Duration = Duration::from_millis(5);

/// Pause before a slot tries again after an isolate could not be created (`slot`): a
/// failure that repeats (out of memory, a broken snapshot) must not spin a core, and a
/// transient one is retried well before a person would notice.
pub(crate) const RETRY_PAUSE: Duration = Duration::from_millis(100);

/// How long a stopped isolate may take to leave JavaScript before its slot is replaced and
/// its thread parked (`terminator`, `slot`). A termination request takes effect at the next
/// call or back-edge, which a program reaches almost at once; only one long built-in call
/// (`sort`, `fill`, `JSON.stringify` of a large value) takes longer, and such a thread should
/// stop holding a slot and a core.
pub(crate) const ABANDON_AFTER: Duration = Duration::from_millis(200);

/// Pause between termination requests (`terminator`, and `parking` during a parked thread's
/// slice): short, because deno_core cancels the engine's terminating state once the
/// exception reaches it, and a program that re-arms a microtask drain should run only
/// briefly before the next request.
pub(crate) const TERMINATE_EVERY: Duration = Duration::from_millis(1);

/// After this long a stopped isolate that is neither out of JavaScript nor parked is
/// considered wedged where termination cannot reach it, and the terminator stops asking
/// (`terminator`). Ten minutes, the default `codeRuntime.maxWallMs`: far beyond any single
/// built-in call, so only a thread that requests can no longer help stops receiving them.
pub(crate) const TERMINATE_GIVE_UP: Duration = Duration::from_secs(600);

/// How long one parked thread runs each time its turn comes (`parking`): enough for a
/// built-in in progress to make headway toward its end (and the termination check after
/// it) ...
pub(crate) const PARKED_SLICE: Duration = Duration::from_millis(5);

/// ... and how often a parked thread gets its turn, round robin (`parking`). One slice per
/// tick keeps all parked threads together at a twentieth of one core (issue 37: no thread
/// of a stopped run above 5 % of a core), so abandoned programs cannot starve the runs that
/// matter, yet each one still ends.
pub(crate) const PARKED_TICK: Duration = Duration::from_millis(100);
