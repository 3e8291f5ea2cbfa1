//! The control block shared by a run's caller and its isolate thread: who stopped the run, busy-time metering, and the watchdog.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::contract::{RunLimits, RunOutcome};
use super::held::Holding;
use super::output::{Admission, OutputBudget};

/// Why a run was ended from outside its program; the first one recorded wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StopReason {
    ComputeBudget,
    WallBudget,
    Abort,
    OutputLimit,
    Shutdown,
    /// The program settled first: later stop requests change nothing.
    Finished,
}

/// Busy time of the isolate thread: completed stretches plus the one in progress.
#[derive(Debug, Default)]
struct BusyMeter {
    spent: Duration,
    busy_since: Option<Instant>,
}

/// What stopping a run does to its engine (the first stop only).
pub(crate) type OnStop = Box<dyn FnOnce() + Send>;

pub(crate) struct RunControl {
    on_stop: Mutex<Option<OnStop>>,
    reason: OnceLock<StopReason>,
    woken: Notify,
    meter: Mutex<BusyMeter>,
    /// The run's output so far, here rather than on the engine's thread so that the caller
    /// can answer a stopped run with it without waiting for the engine.
    output: Mutex<OutputBudget>,
    /// The output's share of what all runs in progress hold.
    holding: Holding,
}

impl RunControl {
    pub(crate) fn new(on_stop: OnStop, max_output_bytes: u64) -> Self {
        Self {
            on_stop: Mutex::new(Some(on_stop)),
            output: Mutex::new(OutputBudget::new(max_output_bytes)),
            reason: OnceLock::new(),
            woken: Notify::new(),
            meter: Mutex::new(BusyMeter::default()),
            holding: Holding::new(),
        }
    }

    /// Ends the run: stops the engine (for JavaScript: terminates it until it has left)
    /// and wakes an engine that is waiting on the host.
    pub(crate) fn stop(&self, reason: StopReason) {
        if self.reason.set(reason).is_ok() {
            if let Some(on_stop) = self.on_stop.lock().take() {
                on_stop();
            }
            self.woken.notify_one();
        }
    }

    /// Records that the program settled and returns what actually ended the run.
    pub(crate) fn finish(&self) -> StopReason {
        *self.reason.get_or_init(|| StopReason::Finished)
    }

    /// Offers one line of program output to the budget, after waiting (unmetered) while the
    /// runs that started earlier hold too much output (`held`).
    pub(crate) fn push_output(&self, text: &str) -> Admission {
        self.unmetered(|| self.holding.wait_turn(|| self.is_stopped()));
        let admission = self.output.lock().push(text);
        if admission == Admission::Accepted {
            self.holding.add(text.len() as u64);
        }
        admission
    }

    /// The output so far; later lines are refused. Whoever takes it second (the caller's
    /// answer 100 ms after a stop, racing an isolate thread that took it but has not replied)
    /// gets no lines under the same cap, so its failure message is the stop's, not an empty
    /// `output-limit`.
    pub(crate) fn take_output(&self) -> OutputBudget {
        let mut output = self.output.lock();
        let cap = output.cap();
        self.holding.release();
        std::mem::replace(&mut *output, OutputBudget::spent(cap))
    }

    pub(crate) fn is_stopped(&self) -> bool {
        self.reason.get().is_some()
    }

    pub(crate) fn reason(&self) -> Option<StopReason> {
        self.reason.get().copied()
    }

    /// Resolves once `stop` was called (immediately if it already was).
    pub(crate) async fn stopped(&self) {
        if self.is_stopped() {
            return;
        }
        self.woken.notified().await;
    }

    /// Runs `work` on the isolate thread, counting its duration as busy time.
    pub(crate) fn busy<T>(&self, work: impl FnOnce() -> T) -> T {
        self.meter.lock().busy_since = Some(Instant::now());
        let result = work();
        let mut meter = self.meter.lock();
        if let Some(since) = meter.busy_since.take() {
            meter.spent += since.elapsed();
        }
        result
    }

    /// Runs `wait` on the isolate thread without counting it as busy time: waiting for the
    /// host (its client, other runs' output) spends none of the program's compute budget.
    pub(crate) fn unmetered<T>(&self, wait: impl FnOnce() -> T) -> T {
        let paused = {
            let mut meter = self.meter.lock();
            meter
                .busy_since
                .take()
                .inspect(|since| meter.spent += since.elapsed())
        };
        let result = wait();
        if paused.is_some() {
            self.meter.lock().busy_since = Some(Instant::now());
        }
        result
    }

    /// Busy time so far, including a stretch still in progress.
    pub(crate) fn busy_time(&self, now: Instant) -> Duration {
        let meter = self.meter.lock();
        let running = meter
            .busy_since
            .map_or(Duration::ZERO, |since| now.saturating_duration_since(since));
        meter.spent + running
    }
}

/// How long a stopped engine may take to answer before the caller is answered without it
/// (with the output so far): a stopped run's answer never waits on its engine leaving.
const STOP_GRACE: Duration = Duration::from_millis(100);
/// Shortest pause between compute checks, so a nearly spent budget is not polled in a spin.
const MIN_CHECK_INTERVAL: Duration = Duration::from_millis(10);

/// Everything that can end a run from outside the isolate thread.
pub(crate) struct Watch<'a> {
    pub(crate) control: &'a RunControl,
    pub(crate) limits: RunLimits,
    pub(crate) started: Instant,
    pub(crate) abort: &'a CancellationToken,
    pub(crate) shutdown: &'a CancellationToken,
}

impl Watch<'_> {
    /// Waits for the isolate's answer while enforcing the compute and wall budgets, the abort
    /// token and pool shutdown. `None` means the isolate never answered after being stopped.
    pub(crate) async fn answer(
        self,
        reply: &mut tokio::sync::oneshot::Receiver<RunOutcome>,
    ) -> Option<RunOutcome> {
        let compute = Duration::from_millis(self.limits.compute_ms);
        let wall_deadline = self.started + Duration::from_millis(self.limits.max_wall_ms);
        let mut stopped_at: Option<Instant> = None;
        loop {
            let now = Instant::now();
            if stopped_at.is_none() {
                let spent = self.control.busy_time(now);
                if spent >= compute {
                    self.control.stop(StopReason::ComputeBudget);
                } else if now >= wall_deadline {
                    self.control.stop(StopReason::WallBudget);
                }
                if self.control.is_stopped() {
                    stopped_at = Some(now);
                }
            }
            let next_check = match stopped_at {
                Some(at) => at + STOP_GRACE,
                None => {
                    let remaining = compute.saturating_sub(self.control.busy_time(now));
                    wall_deadline.min(now + remaining.max(MIN_CHECK_INTERVAL))
                }
            };
            let watching = stopped_at.is_none();
            tokio::select! {
                biased;
                answer = &mut *reply => return answer.ok(),
                () = self.abort.cancelled(), if watching => self.control.stop(StopReason::Abort),
                () = self.shutdown.cancelled(), if watching => self.control.stop(StopReason::Shutdown),
                () = tokio::time::sleep_until(next_check.into()) => {
                    if stopped_at.is_some() {
                        return None;
                    }
                }
            }
            if stopped_at.is_none() && self.control.is_stopped() {
                stopped_at = Some(Instant::now());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::contract::{FailureKind, RunLimits};
    use crate::runtime::verdict;

    #[test]
    fn output_taken_twice_still_concludes_with_the_stop_reason() {
        let control = RunControl::new(Box::new(|| {}), 4096);
        assert_eq!(control.push_output("before the stop"), Admission::Accepted);
        control.stop(StopReason::ComputeBudget);
        let _taken_by_the_isolate_thread = control.take_output();
        assert_eq!(control.push_output("after"), Admission::Refused);
        let limits = RunLimits {
            compute_ms: 300,
            max_wall_ms: 1000,
            max_output_bytes: 4096,
            max_depth: 64,
        };
        let outcome = verdict::conclude(
            crate::runtime::verdict::stopped,
            StopReason::ComputeBudget,
            control.take_output(),
            limits,
        );
        let failure = outcome.result.err();
        assert_eq!(
            failure.as_ref().map(|f| (f.kind, f.message.as_str())),
            Some((FailureKind::Timeout, "compute budget of 300 ms exhausted"))
        );
    }
}
