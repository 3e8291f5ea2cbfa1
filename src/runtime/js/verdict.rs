//! How the isolate thread saw a program end, judged into the engine-neutral outcome:
//! engine errors described with the program's own line and column, termination by the heap
//! limit told apart from a program that never settled.

use deno_core::error::{CoreErrorKind, JsError};

use super::isolate::{PROGRAM_NAME, PROGRAM_PREFIX_LINES};
use crate::runtime::contract::{FailureKind, RunFailure};
use crate::runtime::verdict::{Finished, read_answer};

/// How the isolate thread saw the program end.
pub(crate) enum Verdict {
    /// The harness settled with its tagged answer.
    Answered(String),
    /// Compiling the program or calling the harness failed (a syntax error, or termination).
    Failed(Box<JsError>),
    /// The event loop reported an uncaught error (an unhandled rejection, a throwing timer).
    LoopFailed(deno_core::error::CoreError),
    /// The event loop ran dry while the program was still pending.
    NeverSettled,
    /// The run was stopped before the program settled.
    Stopped,
}

pub(super) fn judge(
    verdict: Verdict,
    terminated: bool,
    max_heap_mb: u64,
    max_depth: usize,
) -> Finished {
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
        // Only the heap limit terminates a run that was not stopped; whatever the harness
        // managed to answer while the heap ran out (an out-of-memory it caught), the run
        // failed by the heap limit.
        Verdict::Answered(_) | Verdict::NeverSettled | Verdict::Stopped if terminated => {
            Err(heap_exceeded())
        }
        Verdict::Answered(answer) => read_answer(&answer, max_depth),
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
        Verdict::Stopped => crate::runtime::verdict::stopped(),
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
        if frame.file_name.as_deref() != Some(PROGRAM_NAME) {
            return None;
        }
        // The engine counts the wrapper's lines too.
        let line = frame.line_number? - PROGRAM_PREFIX_LINES;
        let column = frame.column_number?;
        (line >= 1).then(|| format!(" at {}:{line}:{column}", PROGRAM_NAME))
    });
    match position {
        Some(position) => header + &position,
        None => header,
    }
}
