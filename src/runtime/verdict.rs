//! Turns how a run ended (harness answer, engine error, stop reason) into the model-facing outcome, enforcing the output cap.

use deno_core::error::{CoreError, CoreErrorKind, JsError};

use super::contract::{FailureKind, RunFailure, RunLimits, RunOutcome};
use super::control::StopReason;
use super::output::{OutputBudget, compact_json_len};

/// How the isolate thread saw the program end.
pub(crate) enum Verdict {
    /// The harness settled with its tagged answer.
    Answered(String),
    /// Compiling the program or calling the harness failed (a syntax error, or termination).
    Failed(Box<JsError>),
    /// The event loop reported an uncaught error (an unhandled rejection, a throwing timer).
    LoopFailed(CoreError),
    /// The event loop ran dry while the program was still pending.
    NeverSettled,
    /// The run was stopped before the program settled.
    Stopped,
}

pub(crate) fn conclude(
    verdict: Verdict,
    reason: StopReason,
    terminated: bool,
    output: OutputBudget,
    limits: RunLimits,
    max_heap_mb: u64,
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
        StopReason::Finished => judge(verdict, terminated, max_heap_mb),
    };
    within_cap(result, output)
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

fn judge(
    verdict: Verdict,
    terminated: bool,
    max_heap_mb: u64,
) -> Result<Option<serde_json::Value>, RunFailure> {
    let heap_exceeded = || {
        RunFailure::new(
            FailureKind::WorkerExit,
            format!("heap limit of {max_heap_mb} MiB exceeded"),
        )
    };
    let engine_failure = |error: &JsError| {
        if terminated {
            heap_exceeded()
        } else {
            RunFailure::new(FailureKind::Exception, describe_js_error(error))
        }
    };
    match verdict {
        // Only the heap limit terminates a run that was not stopped; an out-of-memory
        // inside the harness's own settling leaves the program pending, not answered.
        Verdict::NeverSettled | Verdict::Stopped if terminated => Err(heap_exceeded()),
        Verdict::Answered(answer) => read_answer(&answer),
        Verdict::Failed(error) => Err(engine_failure(&error)),
        Verdict::LoopFailed(error) => match &*error.0 {
            CoreErrorKind::Js(error) => Err(engine_failure(error)),
            other => Err(RunFailure::new(
                FailureKind::WorkerExit,
                format!("the isolate failed: {other}"),
            )),
        },
        Verdict::NeverSettled => Err(RunFailure::new(
            FailureKind::WorkerExit,
            "program never settled: it awaits a promise that nothing is left to resolve",
        )),
        Verdict::Stopped => Err(RunFailure::new(FailureKind::WorkerExit, "run stopped")),
    }
}

/// Reads the harness's tagged answer: `v<json>`, `u`, `i` or `e<message>`.
fn read_answer(answer: &str) -> Result<Option<serde_json::Value>, RunFailure> {
    let invalid = || {
        RunFailure::new(
            FailureKind::InvalidOutput,
            "program completion must be lossless JSON",
        )
    };
    if let Some(json) = answer.strip_prefix('v') {
        return serde_json::from_str(json).map(Some).map_err(|_| invalid());
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

/// `<name>: <message>` plus ` at program.ts:<line>:<column>` for the innermost program frame.
pub(crate) fn describe_js_error(error: &JsError) -> String {
    let header = match (&error.name, &error.message) {
        (Some(name), Some(message)) => match (name.is_empty(), message.is_empty()) {
            (true, _) => message.clone(),
            (false, true) => name.clone(),
            (false, false) => format!("{name}: {message}"),
        },
        _ => {
            let text = error.exception_message.as_str();
            text.strip_prefix("Uncaught (in promise) ")
                .or_else(|| text.strip_prefix("Uncaught "))
                .unwrap_or(text)
                .to_owned()
        }
    };
    if error.name.as_deref() == Some("ToolCallError") {
        return header;
    }
    let position = error.frames.iter().find_map(|frame| {
        if frame.file_name.as_deref() != Some(super::isolate::PROGRAM_NAME) {
            return None;
        }
        // The engine counts the wrapper's lines too.
        let line = frame.line_number? - super::isolate::PROGRAM_PREFIX_LINES;
        let column = frame.column_number?;
        (line >= 1).then(|| format!(" at {}:{line}:{column}", super::isolate::PROGRAM_NAME))
    });
    match position {
        Some(position) => header + &position,
        None => header,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(answer: &str, expected: Result<Option<serde_json::Value>, (FailureKind, &str)>) {
        let expected = expected.map_err(|(kind, message)| RunFailure::new(kind, message));
        assert_eq!(read_answer(answer), expected, "answer {answer:?}");
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
        let value = read_answer("v12345678901234567890123").unwrap().unwrap();
        assert_eq!(value.to_string(), "12345678901234567890123");
    }

    #[test]
    fn failures_that_overflow_the_cap_become_output_limit() {
        let limits = RunLimits {
            compute_ms: 1,
            max_wall_ms: 2,
            max_output_bytes: 10,
        };
        let mut output = OutputBudget::new(10);
        output.push("abc");
        let outcome = conclude(
            Verdict::Answered("exy".into()),
            StopReason::Finished,
            false,
            output,
            limits,
            1,
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
