//! One run on one interpreter: sends the program, serves its binding calls through the
//! [`BindingHost`](crate::runtime::BindingHost), keeps its logs under the output cap, meters
//! the CPU time of its whole process tree (its budget leaf, or polled) and its wall time,
//! ends it whole when a budget is past, and kills its process group however the run ends.

use std::os::unix::process::ExitStatusExt;
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use tokio_util::sync::CancellationToken;

use super::frames::{self, ChildFrame};
use super::meter::busy_time;
use super::spawn::Interpreter;
use super::timing::{MAX_CHECK_INTERVAL, MIN_CHECK_INTERVAL, REAP_GRACE};
use crate::process::budget::Exceeded;
use crate::runtime::contract::{FailureKind, LogStream, RunFailure, RunOutcome, RunRequest};
use crate::runtime::control::StopReason;
use crate::runtime::held::{Holding, RECHECK};
use crate::runtime::output::{Admission, OutputBudget};
use crate::runtime::verdict;

/// The bootstrap's exit code when it ran out of memory even to report it.
const OUT_OF_MEMORY_EXIT: i32 = 86;

/// How the interpreter's side of the run ended.
enum End {
    Answered(String),
    Stopped(StopReason),
    /// The frame stream closed (or broke) without an answer.
    Vanished(Option<String>),
    /// The tree went past its memory or process budget.
    Exceeded(Exceeded),
}

/// Runs `request` on `interpreter` (which is consumed: it serves exactly one run).
pub(super) async fn drive(
    mut interpreter: Interpreter,
    request: RunRequest,
    max_heap_mb: u64,
    shutdown: &CancellationToken,
) -> RunOutcome {
    let RunRequest {
        code,
        limits,
        tools,
        host,
        abort,
    } = request;
    let started = Instant::now();
    let pid = interpreter.pid;
    let baseline = busy_time(pid).unwrap_or_default();
    // What the interpreter's tree spent booting, which the run does not pay for.
    let tree_baseline = interpreter.process.tree_busy_time().unwrap_or_default();
    let compute = Duration::from_millis(limits.compute_ms);
    let wall_deadline = started + Duration::from_millis(limits.max_wall_ms);
    // RLIMIT_CPU backstop: the budget rounded up, plus the startup already spent and a second.
    let cpu_seconds = compute.as_secs() + baseline.as_secs() + 2;
    let (to_child, from_child) = match take_pipes(&mut interpreter) {
        Some(pipes) => pipes,
        None => {
            return verdict::early_failure(
                RunFailure::new(FailureKind::WorkerExit, "the interpreter lost its pipes"),
                limits.max_output_bytes,
            );
        }
    };
    let writer = frames::write_frames(to_child);
    let room = frames::Room::new(limits.max_output_bytes);
    let mut reader = frames::read_frames(from_child, limits.max_depth, room.clone());
    let _ = writer.send(frames::start_frame(
        &code,
        cpu_seconds,
        limits.max_depth,
        &tools,
    ));
    let mut output = OutputBudget::new(limits.max_output_bytes);
    // While earlier runs hold too much output, or the client is not reading, the child's
    // output is left unread: its writes block, and waiting costs it no CPU time, so none of
    // its compute budget.
    let holding = Holding::new();
    let mut calls = FuturesUnordered::new();
    let mut next_check = started;
    let end = loop {
        let now = Instant::now();
        if now >= wall_deadline {
            break End::Stopped(StopReason::WallBudget);
        }
        if now >= next_check {
            // Busy time (on a CPU or waiting for one, so a loaded machine does not
            // stretch the budget) of the interpreter, or of its whole tree, forked
            // processes included, whichever is more.
            let own = busy_time(pid).unwrap_or(baseline).saturating_sub(baseline);
            let tree = interpreter
                .process
                .tree_busy_time()
                .unwrap_or(tree_baseline)
                .saturating_sub(tree_baseline);
            let spent = own.max(tree);
            if spent >= compute {
                break End::Stopped(StopReason::ComputeBudget);
            }
            if let Some(exceeded) = interpreter.process.exceeded() {
                break End::Exceeded(exceeded);
            }
            // Busy time grows no faster than wall time per thread; a second thread may
            // double it, so checks come at least twice per remaining budget; forked
            // processes may use every CPU, and memory is read at least this often.
            next_check = now
                + (compute.saturating_sub(spent) / 2).clamp(MIN_CHECK_INTERVAL, MAX_CHECK_INTERVAL);
        }
        let held_back = holding.must_wait() || host.behind();
        let wake = if held_back {
            wall_deadline.min(next_check).min(now + RECHECK)
        } else {
            wall_deadline.min(next_check)
        };
        tokio::select! {
            biased;
            () = abort.cancelled() => break End::Stopped(StopReason::Abort),
            () = shutdown.cancelled() => break End::Stopped(StopReason::Shutdown),
            frame = reader.recv(), if !held_back => match frame {
                Some(ChildFrame::Log { stream, text }) => {
                    if output.push(&text) == Admission::Refused {
                        break End::Stopped(StopReason::OutputLimit);
                    }
                    holding.add(text.len() as u64);
                    room.set(output.remaining());
                    host.log(stream_of(&stream), &text);
                }
                Some(ChildFrame::Call { id, name, args }) => {
                    let call = host.call(&name, args);
                    calls.push(async move { (id, call.await) });
                }
                Some(ChildFrame::Done { answer }) => break End::Answered(answer),
                Some(ChildFrame::Ready) => {}
                Some(ChildFrame::Refused(why)) => break End::Vanished(Some(why)),
                Some(ChildFrame::Garbled(why)) => break End::Vanished(Some(why)),
                Some(ChildFrame::Oversized) => break End::Stopped(StopReason::OutputLimit),
                None => break End::Vanished(None),
            },
            Some((id, result)) = calls.next(), if !calls.is_empty() => {
                let _ = writer.send(frames::result_frame(id, &result));
            }
            () = tokio::time::sleep_until(wake.into()) => {}
        }
    };
    // An OOM kill in the tree (of a forked child, say) fails the run even when the
    // interpreter went on to answer.
    let end = match (end, interpreter.process.exceeded()) {
        (End::Answered(_) | End::Vanished(_), Some(exceeded)) => End::Exceeded(exceeded),
        (end, _) => end,
    };
    interpreter.process.kill();
    drop(calls);
    // Only a run whose interpreter vanished is told by its exit status; the others answer
    // at once, their (already SIGKILLed) interpreter reaped off the run's path.
    let status = if matches!(end, End::Vanished(None)) {
        interpreter.process.kill_and_reap(REAP_GRACE).await
    } else {
        tokio::spawn(async move {
            interpreter.process.kill_and_reap(REAP_GRACE).await;
        });
        None
    };
    match end {
        End::Exceeded(Exceeded::Memory) => {
            verdict::within_cap(Err(heap_exceeded(max_heap_mb)), output)
        }
        End::Exceeded(Exceeded::Pids) => verdict::within_cap(
            Err(RunFailure::new(
                FailureKind::WorkerExit,
                "process limit of the run exceeded",
            )),
            output,
        ),
        End::Answered(answer) if answer == "m" => {
            verdict::within_cap(Err(heap_exceeded(max_heap_mb)), output)
        }
        End::Answered(answer) => verdict::conclude(
            || verdict::read_answer(&answer, limits.max_depth),
            StopReason::Finished,
            output,
            limits,
        ),
        End::Stopped(reason) => verdict::conclude(verdict::stopped, reason, output, limits),
        End::Vanished(why) => {
            let failure = match (why, status) {
                (Some(why), _) => RunFailure::new(
                    FailureKind::WorkerExit,
                    format!("the Python interpreter broke the protocol: {why}"),
                ),
                (None, Some(status)) if status.signal() == Some(libc::SIGXCPU) => RunFailure::new(
                    FailureKind::Timeout,
                    format!("compute budget of {} ms exhausted", limits.compute_ms),
                ),
                (None, Some(status)) if status.code() == Some(OUT_OF_MEMORY_EXIT) => {
                    heap_exceeded(max_heap_mb)
                }
                (None, Some(status)) => match status.signal() {
                    Some(signal) => RunFailure::new(
                        FailureKind::WorkerExit,
                        format!("the Python interpreter was killed by signal {signal}"),
                    ),
                    None => RunFailure::new(
                        FailureKind::WorkerExit,
                        format!("the Python interpreter exited with {status}"),
                    ),
                },
                (None, None) => RunFailure::new(
                    FailureKind::WorkerExit,
                    "the Python interpreter stopped answering",
                ),
            };
            verdict::within_cap(Err(failure), output)
        }
    }
}

fn heap_exceeded(max_heap_mb: u64) -> RunFailure {
    RunFailure::new(
        FailureKind::WorkerExit,
        format!("heap limit of {max_heap_mb} MiB exceeded"),
    )
}

fn take_pipes(
    interpreter: &mut Interpreter,
) -> Option<(
    tokio::net::unix::pipe::Sender,
    tokio::net::unix::pipe::Receiver,
)> {
    Some((interpreter.to_child.take()?, interpreter.from_child.take()?))
}

/// The console method a bootstrap stream name stands for (unknown ones are plain logs).
fn stream_of(name: &str) -> LogStream {
    match name {
        "info" => LogStream::Info,
        "warn" => LogStream::Warn,
        "error" => LogStream::Error,
        "debug" => LogStream::Debug,
        _ => LogStream::Log,
    }
}
