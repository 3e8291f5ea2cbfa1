//! Live progress of a running call: output as it arrives and `progress / total` reports,
//! handed to whoever listens (a front end) while the call runs. Observe-only: a body never
//! waits on it, and with nobody listening every report is a no-op the body can skip
//! building (`is_live`).

use super::ToolExecution;
use std::fmt;
use std::sync::Arc;

/// Which stream a piece of live output came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputStream {
    Stdout,
    Stderr,
}

impl OutputStream {
    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            OutputStream::Stdout => "stdout",
            OutputStream::Stderr => "stderr",
        }
    }
}

/// One live report of a running call.
#[derive(Clone, Debug, PartialEq)]
pub enum ProgressEvent {
    /// Output text as it arrived (already coalesced by the source).
    Output { stream: OutputStream, text: String },
    /// How far the call is; `total` when it is known.
    Progress {
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
}

/// Receives the live reports of every call of a runtime (a front end's notifier). Called on
/// the reporting task: it must not block.
pub trait ProgressSink: Send + Sync + 'static {
    /// One report of `execution`.
    fn report(&self, execution: &ToolExecution, event: ProgressEvent);

    /// Whether output `execution` reported now would be sent. When not, a source may leave
    /// output out before building a report of it, and say how much with `output_skipped`.
    fn wants_output(&self, _execution: &ToolExecution) -> bool {
        true
    }

    /// `bytes` of `execution`'s output its source left out, told before its next output.
    fn output_skipped(&self, _execution: &ToolExecution, _bytes: usize) {}
}

/// A body's handle for reporting live progress of its call. Cheap to clone.
#[derive(Clone, Default)]
pub struct Progress {
    target: Option<(Arc<ToolExecution>, Arc<dyn ProgressSink>)>,
}

impl Progress {
    /// The handle of `execution`, reporting to `sink` (none: reports go nowhere).
    pub(crate) fn new(
        execution: &Arc<ToolExecution>,
        sink: Option<&Arc<dyn ProgressSink>>,
    ) -> Self {
        Progress {
            target: sink.map(|sink| (execution.clone(), sink.clone())),
        }
    }

    /// Whether anyone listens: a source may skip reading and coalescing when not.
    pub fn is_live(&self) -> bool {
        self.target.is_some()
    }

    /// Whether output reported now would be sent (nobody listening: no).
    pub fn wants_output(&self) -> bool {
        self.target
            .as_ref()
            .is_some_and(|(execution, sink)| sink.wants_output(execution))
    }

    /// Tells the listener that `bytes` of output were left out (see `wants_output`).
    pub fn output_skipped(&self, bytes: usize) {
        if let Some((execution, sink)) = &self.target {
            sink.output_skipped(execution, bytes);
        }
    }

    /// Reports output text.
    pub fn output(&self, stream: OutputStream, text: String) {
        self.report(ProgressEvent::Output { stream, text });
    }

    /// Reports how far the call is.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        self.report(ProgressEvent::Progress {
            progress,
            total,
            message,
        });
    }

    /// Reports one event.
    pub fn report(&self, event: ProgressEvent) {
        if let Some((execution, sink)) = &self.target {
            sink.report(execution, event);
        }
    }
}

impl fmt::Debug for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Progress")
            .field("live", &self.is_live())
            .finish()
    }
}

/// The `callId` a front end knows a call by, and the sub-call's own id when the call is a
/// Code Mode sub-call (`<callId>:code:<n>`, the `dispatchId`).
pub fn progress_ids(execution: &ToolExecution) -> (&str, Option<&str>) {
    let id = &*execution.call_id;
    match execution.parent.and(id.rsplit_once(":code:")) {
        Some((outer, _)) => (outer, Some(id)),
        None => (id, None),
    }
}
