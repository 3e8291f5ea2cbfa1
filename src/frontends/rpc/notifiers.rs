//! What the connection tells its client on its own: `tools/result` for every final
//! outcome, Code Mode's dispatch events and live output, in the detail the client chose,
//! and `bash/exited` when an exec session ends.

use super::backpressure::WORK_HIGH_WATER;
use super::convert;
use crate::builtins::bash::session::SessionEvents;
use crate::code_mode::{CodeEvents, DispatchEnd, DispatchStart, stream_name};
use crate::pipeline::hooks::ResultObserver;
use crate::runtime::LogStream;
use crate::tool::{ToolExecution, ToolExecutionResult};
use crate::transport::{OBSERVED_HIGH_WATER, Outbox};
use dsh_tools_protocol::ProviderFormat;
use dsh_tools_protocol::{
    BashExitedNotification, CodeDispatchEvents, CodeDispatchStartNotification,
    CodeDispatchStartSummary, CodeDispatchSummary, CodeLogNotification, DispatchTime,
};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};
use tokio::runtime::RuntimeFlavor;

/// `capabilities.codeDispatchEvents` and `capabilities.resultFormat`, read by the
/// notifiers on every event (set once, at `initialize`, after they were installed).
#[derive(Default)]
pub struct DispatchDetail(AtomicU8, OnceLock<ProviderFormat>);

impl DispatchDetail {
    pub fn set(&self, events: CodeDispatchEvents) {
        self.0.store(events as u8, Ordering::Relaxed);
    }

    /// Every `tools/result` also carries this provider's tool-result block.
    pub fn set_result_format(&self, format: ProviderFormat) {
        let _ = self.1.set(format);
    }

    fn get(&self) -> CodeDispatchEvents {
        match self.0.load(Ordering::Relaxed) {
            x if x == CodeDispatchEvents::Summary as u8 => CodeDispatchEvents::Summary,
            x if x == CodeDispatchEvents::None as u8 => CodeDispatchEvents::None,
            _ => CodeDispatchEvents::Full,
        }
    }
}

/// Sends `tools/result` for every final outcome (a sub-call's only with full dispatch events).
pub struct ResultNotifier {
    pub outbox: Outbox,
    pub detail: Arc<DispatchDetail>,
}

impl ResultObserver for ResultNotifier {
    fn observe(&self, execution: &ToolExecution, result: &ToolExecutionResult) {
        if execution.parent.is_some() && self.detail.get() != CodeDispatchEvents::Full {
            return;
        }
        // `ResultNotification`, written in place: the result is not cloned to be sent.
        let capacity = convert::result_json_capacity(result) + 256;
        self.outbox
            .notify_observed_with(OBSERVED_HIGH_WATER, "tools/result", capacity, |out| {
                out.push_str("{\"execution\":");
                crate::json::append_serialized(out, &convert::execution_ref(execution));
                out.push_str(",\"result\":");
                let shape = self.detail.1.get().map(|format| convert::ResultShape {
                    format: *format,
                    call_id: &execution.call_id,
                    name: &execution.name,
                });
                convert::write_shaped_result_json(out, result, shape);
                out.push('}');
            });
    }
}

/// Sends Code Mode's dispatch events, in the detail the client chose, and live output.
pub struct CodeNotifier {
    pub outbox: Outbox,
    pub detail: Arc<DispatchDetail>,
}

impl CodeEvents for CodeNotifier {
    fn dispatch_start(&self, event: DispatchStart) {
        let DispatchStart {
            id,
            parent,
            name,
            arguments,
            time,
        } = event;
        match self.detail.get() {
            CodeDispatchEvents::Full => self.outbox.notify_observed(
                "tools/codeDispatchStart",
                &CodeDispatchStartNotification {
                    id,
                    parent,
                    name,
                    arguments,
                    time,
                },
            ),
            CodeDispatchEvents::Summary => self.outbox.notify_observed(
                "tools/codeDispatchStart",
                &CodeDispatchStartSummary {
                    id,
                    parent,
                    name,
                    time,
                },
            ),
            CodeDispatchEvents::None => false,
        };
    }

    fn dispatch_end(&self, event: DispatchEnd) {
        match self.detail.get() {
            CodeDispatchEvents::Full => self
                .outbox
                .notify_observed("tools/codeDispatch", &convert::dispatch_notification(event)),
            CodeDispatchEvents::Summary => self.outbox.notify_observed(
                "tools/codeDispatch",
                &CodeDispatchSummary {
                    id: event.id,
                    parent: event.parent,
                    name: event.name,
                    is_error: event.is_error,
                    time: DispatchTime {
                        start: event.time.0,
                        end: event.time.1,
                    },
                },
            ),
            CodeDispatchEvents::None => false,
        };
    }

    fn log(&self, call_id: &str, stream: LogStream, text: &str) {
        // A client this far behind is not reading: a program on a thread of its own (an
        // isolate's, never one of the host's workers) waits before it prints more, so its
        // output stops growing in memory until the client catches up.
        let on_host_worker = tokio::runtime::Handle::try_current()
            .is_ok_and(|runtime| runtime.runtime_flavor() == RuntimeFlavor::MultiThread);
        if !on_host_worker {
            self.outbox.wait_below_blocking(WORK_HIGH_WATER);
        }
        let notification = CodeLogNotification {
            call_id: call_id.to_string(),
            stream: stream_name(stream).into(),
            text: text.into(),
        };
        self.outbox.notify_observed("code/log", &notification);
    }

    fn behind(&self) -> bool {
        self.outbox.queued_bytes() >= WORK_HIGH_WATER
    }
}

/// Sends `bash/exited` when a session the model was given ends.
pub struct ExitNotifier {
    pub outbox: Outbox,
}

impl SessionEvents for ExitNotifier {
    fn exited(&self, exited: &BashExitedNotification) {
        self.outbox.notify("bash/exited", exited);
    }
}
