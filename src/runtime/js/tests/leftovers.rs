//! What a run leaves behind once its isolate is gone: nothing that holds the waker it was
//! polled with. The isolate thread's tokio runtime lives as long as any clone of that waker,
//! so one kept clone per run is a whole runtime leaked per run (see `harness_call`).

#![allow(clippy::unwrap_used)]

use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use super::support::{LIMITS, TOOLS, TestHost, cache_home, startup_with_snapshot};
use crate::runtime::FailureKind;
use crate::runtime::control::{RunControl, StopReason};
use crate::runtime::js::isolate::{FreshIsolate, Job};

/// A waker that only counts its clones.
struct Counted;

impl Wake for Counted {
    fn wake(self: Arc<Self>) {}
}

/// Runs `code` on a fresh isolate, polled with a counted waker (stopping the run after the
/// first poll when `stop` is set), drops the isolate and answers how the run ended and how
/// many clones of the waker are still alive besides the caller's.
fn clones_left_by(code: &str, stop: bool) -> (Option<FailureKind>, usize) {
    cache_home();
    let startup = startup_with_snapshot();
    let code = code.to_owned();
    std::thread::spawn(move || {
        let mut isolate = FreshIsolate::new(64, startup).unwrap();
        let control = Arc::new(RunControl::new(Box::new(|| {}), LIMITS.max_output_bytes));
        let job = Job {
            code,
            limits: LIMITS,
            tools: TOOLS.iter().map(|name| (*name).to_owned()).collect(),
            host: Arc::new(TestHost::default()),
            control: control.clone(),
            max_heap_mb: 64,
        };
        let counted = Arc::new(Counted);
        let waker = Waker::from(counted.clone());
        let mut context = Context::from_waker(&waker);
        let outcome = {
            let mut run = pin!(isolate.run(job));
            let mut polls = 0;
            loop {
                if let Poll::Ready(outcome) = run.as_mut().poll(&mut context) {
                    break outcome;
                }
                polls += 1;
                if stop && polls == 1 {
                    control.stop(StopReason::Abort);
                }
                assert!(polls < 10_000, "the run never ended");
                std::thread::yield_now();
            }
        };
        drop(isolate);
        drop(waker);
        let kind = outcome.result.err().map(|failure| failure.kind);
        (kind, Arc::strong_count(&counted) - 1)
    })
    .join()
    .unwrap()
}

#[test]
fn a_program_that_never_settles_keeps_no_waker() {
    let (kind, clones) = clones_left_by("await new Promise(() => {})", false);
    assert!(kind.is_some(), "a program that never settles fails");
    assert_eq!(clones, 0);
}

#[test]
fn a_program_stopped_while_awaiting_keeps_no_waker() {
    let (kind, clones) = clones_left_by("await tools.never({})", true);
    assert_eq!(kind, Some(FailureKind::Abort));
    assert_eq!(clones, 0);
}

#[test]
fn a_program_that_settles_keeps_no_waker() {
    let (kind, clones) = clones_left_by("await tools.echo({ a: 1 }); return 1", false);
    assert_eq!(kind, None);
    assert_eq!(clones, 0);
}
