//! Turns how a run ended (the engine's answer, or why it was stopped) into the model-facing
//! outcome, enforcing the output cap. Engine-neutral: each engine judges its own finish
//! (`js::verdict`, the Python run loop) and hands it to [`conclude`].

use super::contract::{FailureKind, RunFailure, RunLimits, RunOutcome};
use super::control::StopReason;
use super::output::{OutputBudget, compact_json_len};

/// What a program that finished (was not stopped) produced, as its engine judged it.
pub(crate) type Finished = Result<Option<serde_json::Value>, RunFailure>;

/// The outcome of a run that ended for `reason`; `finished` is asked only when the program
/// finished on its own.
pub(crate) fn conclude(
    finished: impl FnOnce() -> Finished,
    reason: StopReason,
    output: OutputBudget,
    limits: RunLimits,
) -> RunOutcome {
    let result = match reason {
        StopReason::ComputeBudget => Err(RunFailure::new(
            FailureKind::Timeout,
            format!("compute budget of {} ms exhausted", limits.compute_ms),
        )),
        StopReason::WallBudget => Err(RunFailure::new(
            FailureKind::Timeout,
            format!("wall-clock budget of {} ms exhausted", limits.max_wall_ms),
        )),
        StopReason::Abort => Err(RunFailure::new(FailureKind::Abort, "run aborted")),
        StopReason::OutputLimit => Err(RunFailure::new(
            FailureKind::OutputLimit,
            output_limit_message(output.cap()),
        )),
        StopReason::Shutdown => Err(RunFailure::new(
            FailureKind::WorkerExit,
            "isolate pool shut down",
        )),
        StopReason::Finished => finished(),
    };
    within_cap(result, output)
}

/// A program stopped before it settled (the engine saw the stop first).
pub(crate) fn stopped() -> Finished {
    Err(RunFailure::new(FailureKind::WorkerExit, "run stopped"))
}

/// A run that failed before any isolate was involved (a type-stripping error, an abort while
/// queued), still held to the output cap.
pub(crate) fn early_failure(failure: RunFailure, max_output_bytes: u64) -> RunOutcome {
    within_cap(Err(failure), OutputBudget::new(max_output_bytes))
}

/// Replaces a result whose JSON would push the output past the cap with `output-limit`, and
/// holds an `output-limit` failure's logs and message within the cap together
/// ([`OutputBudget::limited`]).
pub(crate) fn within_cap(
    result: Result<Option<serde_json::Value>, RunFailure>,
    output: OutputBudget,
) -> RunOutcome {
    let over = match &result {
        Err(failure) if failure.kind == FailureKind::OutputLimit => true,
        Ok(Some(value)) => !output.fits_with(crate::json::render_compact(value).len() as u64),
        Ok(None) => false,
        Err(failure) => !output.fits_with(compact_json_len(&failure.message)),
    };
    if !over {
        return RunOutcome {
            logs: output.into_logs(),
            result,
        };
    }
    let message = output_limit_message(output.cap());
    let (logs, message) = output.limited(&message);
    RunOutcome {
        logs,
        result: Err(RunFailure::new(FailureKind::OutputLimit, message)),
    }
}

fn output_limit_message(cap: u64) -> String {
    format!("outer output exceeded {cap} bytes")
}

/// Reads the harness's tagged answer: `v<json>`, `u`, `i` or `e<message>`; the JSON goes
/// through the one lossless entry both engines share, bounded at `max_depth`.
pub(crate) fn read_answer(
    answer: &str,
    max_depth: usize,
) -> Result<Option<serde_json::Value>, RunFailure> {
    let invalid = || {
        RunFailure::new(
            FailureKind::InvalidOutput,
            "program completion must be lossless JSON",
        )
    };
    if let Some(json) = answer.strip_prefix('v') {
        return crate::json::parse_within(json, max_depth)
            .map(Some)
            .map_err(|_| invalid());
    }
    if let Some(message) = answer.strip_prefix('e') {
        return Err(RunFailure::new(FailureKind::Exception, message));
    }
    match answer {
        "u" => Ok(None),
        "i" => Err(invalid()),
        _ => Err(RunFailure::new(
            FailureKind::WorkerExit,
            "the runtime harness gave an unreadable answer",
        )),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(answer: &str, expected: Result<Option<serde_json::Value>, (FailureKind, &str)>) {
        let expected = expected.map_err(|(kind, message)| RunFailure::new(kind, message));
        assert_eq!(read_answer(answer, 8), expected, "answer {answer:?}");
    }

    #[test]
    fn harness_answers_are_read_by_tag() {
        check("v1", Ok(Some(json!(1))));
        check("v{\"a\":[true,null]}", Ok(Some(json!({"a": [true, null]}))));
        check("u", Ok(None));
        check(
            "i",
            Err((
                FailureKind::InvalidOutput,
                "program completion must be lossless JSON",
            )),
        );
        check("eError: x", Err((FailureKind::Exception, "Error: x")));
        check(
            "?",
            Err((
                FailureKind::WorkerExit,
                "the runtime harness gave an unreadable answer",
            )),
        );
    }

    #[test]
    fn big_numbers_keep_their_text() {
        let value = read_answer("v12345678901234567890123", 8).unwrap().unwrap();
        assert_eq!(value.to_string(), "12345678901234567890123");
    }

    /// A failure message that overflows the cap becomes `output-limit`, whose logs and
    /// message together stay within the cap (under a cap this small, the message is cut).
    #[test]
    fn failures_that_overflow_the_cap_become_output_limit() {
        let outcome = |cap: u64, lines: &[&str]| {
            let limits = RunLimits {
                compute_ms: 1,
                max_wall_ms: 2,
                max_output_bytes: cap,
                max_depth: 8,
            };
            let mut output = OutputBudget::new(cap);
            for line in lines {
                output.push(line);
            }
            conclude(
                || read_answer(&format!("e{}", "x".repeat(100)), limits.max_depth),
                StopReason::Finished,
                output,
                limits,
            )
        };
        let limited = |logs: &[&str], message: &str| RunOutcome {
            logs: logs.iter().map(|l| l.to_string()).collect(),
            result: Err(RunFailure::new(FailureKind::OutputLimit, message)),
        };
        assert_eq!(
            outcome(60, &["abc", "defghijklmnopqrstuvwxyz"]),
            limited(
                &["abc", "defghijklmnopqrstu"],
                "outer output exceeded 60 bytes"
            )
        );
        assert_eq!(outcome(10, &["abc"]), limited(&[], "outer "));
    }
}
