//! One pool slot: a supervisor thread that keeps one fresh isolate ready, each on its own short-lived thread that runs one job and exits.
//! A run that finds no ready isolate gets a slot of its own made on demand ([`spawn_once`]):
//! the same supervisor and isolate threads, whose one isolate goes straight to that run and
//! which end with it, so no run ever waits for another to finish.
//!
//! Every isolate gets a new OS thread because v8x keeps per-thread state that breaks after a
//! few hundred isolates were created and dropped on the same thread (a later `JsRuntime`
//! fails to bootstrap, and runs before that can crash). A thread is cheap next to an isolate
//! and is paid for while refilling, never on the request path; it also
//! contains a panicking isolate, which the supervisor simply replaces, and an isolate that
//! does not stop within a bound after its run was stopped, which the supervisor gives up
//! (see `terminator`): neither a slot nor the host's exit ever waits on a runaway program.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use tokio::sync::{mpsc, oneshot};

use super::handoff::{Giver, handoff};
use tokio_util::sync::CancellationToken;

use super::isolate::{FreshIsolate, Job};
use super::parking;
use super::reclaim;
use super::snapshot::Startup;
use super::supply::Supply;
use super::terminator::LeftEngine;
use super::timing::{ABANDON_AFTER, PACE, RETRY_PAUSE, WARM_AFTER};
use crate::runtime::contract::RunOutcome;

/// JavaScript gets 1 MiB of stack from the engine; the rest is for the Rust and C frames below
/// it. A binding call is driven inside its op on this thread, pipeline, wire serialization and
/// all, with arguments and results as deep as `transport.maxNestingDepth` (20,000 by default),
/// which serde's recursive serializers need tens of MiB for. The stack is reserved, not
/// committed: only what a run touches costs memory.
pub(crate) const ISOLATE_STACK_BYTES: usize = 128 * 1024 * 1024;

/// A ready isolate, offered to the next run.
pub(crate) struct Ticket {
    /// Wakes the isolate's thread, then gives it the run.
    pub(crate) assign: Giver<Assignment>,
    /// Set once the run's JavaScript is over.
    pub(crate) left: LeftEngine,
    /// Tells the slot to give this isolate's thread up.
    pub(crate) abandon: Abandon,
}

/// What an isolate thread tells its supervisor.
enum SlotEvent {
    /// The thread is ending.
    Ended(Lifetime),
    /// The thread's run was stopped and it has not left JavaScript since: replace it.
    Stuck,
}

/// Asks the slot to replace a stuck isolate thread.
#[derive(Clone)]
pub(crate) struct Abandon(std::sync::mpsc::Sender<SlotEvent>);

impl Abandon {
    pub(crate) fn now(&self) {
        let _ = self.0.send(SlotEvent::Stuck);
    }
}

/// Sends `Ended` when the thread ends, by returning or by unwinding, after handing the memory
/// its isolate freed back to the system (`reclaim`): the thread's last work, off the request
/// path.
struct EndReport {
    events: std::sync::mpsc::Sender<SlotEvent>,
    lifetime: Lifetime,
}

impl Drop for EndReport {
    fn drop(&mut self) {
        reclaim::release_freed_memory();
        let _ = self.events.send(SlotEvent::Ended(self.lifetime));
    }
}

/// A job handed to a ready isolate, with where its outcome goes.
pub(crate) struct Assignment {
    pub(crate) job: Job,
    pub(crate) reply: oneshot::Sender<RunOutcome>,
}

/// What every slot shares with the pool.
#[derive(Clone)]
pub(crate) struct SlotShared {
    pub(crate) max_heap_mb: u64,
    pub(crate) startup: Startup,
    pub(crate) ready: mpsc::Sender<Ticket>,
    pub(crate) supply: Arc<Supply>,
    pub(crate) closed: CancellationToken,
}

/// Reports whether the slot's first isolate could be created.
type Started = std::sync::mpsc::Sender<Result<(), String>>;

/// How one isolate's thread ended.
#[derive(Clone, Copy)]
enum Lifetime {
    /// It ran a job (or could not be built): the slot builds the next one.
    Over,
    /// The pool is closing, or the first isolate could not be built: the slot ends.
    SlotDone,
}

/// Where a slot's ready isolate goes.
enum Offer {
    /// To the pool, for whichever run comes next, isolate after isolate.
    Pool,
    /// To the one run that asked for it; the slot ends after that isolate.
    Once(Option<oneshot::Sender<Ticket>>),
}

/// Starts a slot's supervisor thread.
pub(crate) fn spawn(
    index: usize,
    shared: SlotShared,
    started: Started,
) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name(format!("dsh-slot-{index}"))
        .spawn(move || supervise(&index.to_string(), &shared, Some(started), Offer::Pool))
}

/// Starts a slot that builds one isolate for the run waiting on `ticket` and ends with it. A
/// build failure drops `ticket` unsent.
pub(crate) fn spawn_once(
    shared: SlotShared,
    ticket: oneshot::Sender<Ticket>,
) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("dsh-slot-once".to_owned())
        .spawn(move || supervise("once", &shared, None, Offer::Once(Some(ticket))))
}

fn supervise(name: &str, shared: &SlotShared, mut started: Option<Started>, offer: Offer) {
    let once = matches!(offer, Offer::Once(_));
    // Each isolate thread owns its offer: a thread given up as stuck may still hold one while
    // the next isolate of a warm slot is built.
    let mut offer = Some(offer);
    while !shared.closed.is_cancelled() {
        let first = started.take();
        let reported = first.is_none();
        let isolate_shared = shared.clone();
        let mut isolate_offer = offer.take().unwrap_or(Offer::Pool);
        let (events, reports) = std::sync::mpsc::channel();
        // One isolate, one job: one flag for the thread's whole life.
        let left = LeftEngine::default();
        let thread_left = left.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("dsh-isolate-{name}"))
            .stack_size(ISOLATE_STACK_BYTES)
            .spawn(move || {
                // A panic leaves `Over`: the supervisor builds the next isolate.
                let mut report = EndReport {
                    events: events.clone(),
                    lifetime: Lifetime::Over,
                };
                report.lifetime = live_once(
                    &isolate_shared,
                    first,
                    &mut isolate_offer,
                    &Abandon(events),
                    &thread_left,
                );
            });
        let lifetime = match spawned {
            Ok(thread) => match reports.recv() {
                Ok(SlotEvent::Ended(lifetime)) => {
                    // The thread is past its last use of the engine; joining is immediate.
                    let _ = thread.join();
                    lifetime
                }
                Ok(SlotEvent::Stuck) | Err(_) => {
                    let parked = parking::park(thread, left.clone()).is_ok();
                    tracing::warn!(
                        parked,
                        "an isolate did not stop within {:?} of its run's end; replacing it",
                        ABANDON_AFTER
                    );
                    Lifetime::Over
                }
            },
            Err(error) => {
                tracing::error!(%error, "could not start an isolate thread");
                if !reported || once {
                    // The startup handshake waits for this slot: the pool reports the failure.
                    return;
                }
                std::thread::sleep(RETRY_PAUSE);
                continue;
            }
        };
        if once || matches!(lifetime, Lifetime::SlotDone) {
            return;
        }
    }
}

/// The whole life of one isolate: build it, offer it until a job takes it, run the job, exit.
fn live_once(
    shared: &SlotShared,
    started: Option<Started>,
    offer: &mut Offer,
    abandon: &Abandon,
    left: &LeftEngine,
) -> Lifetime {
    let once = matches!(offer, Offer::Once(_));
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            let message = format!("no event loop for the isolate: {error}");
            return fail_to_build(shared, started, once, message);
        }
    };
    let mut isolate = match FreshIsolate::new(shared.max_heap_mb, shared.startup) {
        Ok(isolate) => isolate,
        Err(message) => return fail_to_build(shared, started, once, message),
    };
    // Declared after the isolate, so the context is detached before the isolate drops.
    let _nudged = left.attach(isolate.handle(), isolate.engine_context());
    if let Some(started) = started {
        let _ = started.send(Ok(()));
    }
    runtime.block_on(async {
        loop {
            let (assign, assigned) = handoff();
            let ticket = Ticket {
                assign,
                left: left.clone(),
                abandon: abandon.clone(),
            };
            // Timed from before the offer is counted, so whoever sees it counted and then waits
            // `WARM_AFTER` finds it old enough to warm up.
            let offered = Instant::now();
            match offer {
                Offer::Pool => {
                    shared.supply.offered();
                    if shared.ready.send(ticket).await.is_err() {
                        shared.supply.withdrawn();
                        return Lifetime::SlotDone;
                    }
                    // What a test waits on before it expects a warm-up (it cannot see `Supply`).
                    tracing::debug!("an isolate is ready for a run");
                }
                Offer::Once(to) => {
                    // Its run went away meanwhile: nobody else wants this isolate.
                    if to.take().is_none_or(|to| to.send(ticket).is_err()) {
                        return Lifetime::SlotDone;
                    }
                    // Logged as a warm one is, so a test counting isolates made ready counts
                    // one per run whichever kind the run got.
                    tracing::debug!("an isolate is ready for a run");
                }
            }
            // Blocking is fine: nothing else runs on this thread's event loop before the job.
            let warm = || {
                if offered.elapsed() >= WARM_AFTER {
                    isolate.warm();
                    shared.supply.warmed_up();
                    tracing::debug!("an isolate warmed up for an anticipated run");
                }
            };
            match assigned.wait(warm) {
                Some(Assignment { job, reply }) => {
                    let outcome = isolate.run(job).await;
                    left.set();
                    let _ = reply.send(outcome);
                    // The isolate is dropped with this thread, after the caller has its answer
                    // and, while another isolate is ready, after that answer has gone out.
                    shared.supply.pace(PACE);
                    return Lifetime::Over;
                }
                // The run that took the ticket went away before using it: offer the isolate again.
                None if !once && !shared.closed.is_cancelled() => {}
                None => return Lifetime::SlotDone,
            }
        }
    })
}

/// `once`: the isolate was made for one waiting run, which fails at once (its ticket is
/// dropped) rather than waiting out a retry.
fn fail_to_build(
    shared: &SlotShared,
    started: Option<Started>,
    once: bool,
    message: String,
) -> Lifetime {
    if let Some(started) = started {
        let _ = started.send(Err(message));
        return Lifetime::SlotDone;
    }
    tracing::error!(%message, "could not build a fresh isolate");
    if once {
        return Lifetime::SlotDone;
    }
    if !shared.closed.is_cancelled() {
        std::thread::sleep(RETRY_PAUSE);
    }
    Lifetime::Over
}
