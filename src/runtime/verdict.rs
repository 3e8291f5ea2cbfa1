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
        StopReason::OutputLimit => Err(output_limit(output.cap())),
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

/// Replaces a result whose JSON would push the output past the cap with `output-limit`.
pub(crate) fn within_cap(
    result: Result<Option<serde_json::Value>, RunFailure>,
    output: OutputBudget,
) -> RunOutcome {
    let payload_bytes = match &result {
        Ok(Some(value)) => compact_json_len(value),
        Ok(None) => 0,
        Err(failure) => compact_json_len(&failure.message),
    };
    let result = if output.fits_with(payload_bytes) {
        result
    } else {
        Err(output_limit(output.cap()))
    };
    RunOutcome {
        logs: output.into_logs(),
        result,
    }
}

fn output_limit(cap: u64) -> RunFailure {
    RunFailure::new(
        FailureKind::OutputLimit,
        format!("outer output exceeded {cap} bytes"),
    )
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

    #[test]
    fn failures_that_overflow_the_cap_become_output_limit() {
        let limits = RunLimits {
            compute_ms: 1,
            max_wall_ms: 2,
            max_output_bytes: 10,
            max_depth: 8,
        };
        let mut output = OutputBudget::new(10);
        output.push("abc");
        let outcome = conclude(
            || read_answer("exy", limits.max_depth),
            StopReason::Finished,
            output,
            limits,
        );
        assert_eq!(
            outcome,
            RunOutcome {
                logs: vec!["abc".into()],
                result: Err(RunFailure::new(
                    FailureKind::OutputLimit,
                    "outer output exceeded 10 bytes"
                )),
            }
        );
    }
}
