//! `notifications/progress` for an MCP client whose `tools/call` carried
//! `_meta.progressToken`: the call's own progress as is (`progress`, `total`, `message`),
//! and its live output (bash, also of Code Mode sub-calls) and its sub-calls' progress as
//! reports whose `message` is the text and whose `progress` counts on from the last one
//! sent, so it always increases as MCP requires. Reports go out in order on a bounded queue
//! per call (observe-only: a report that does not fit is dropped), all before the result.

use crate::tool::{ProgressEvent, ProgressSink, ToolExecution, progress_ids};
use parking_lot::Mutex;
use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::Peer;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Reports one call may have waiting to be sent before new ones are dropped.
const QUEUED: usize = 1024;

/// The runtime's sink: each listened-to call's reports, to its client.
#[derive(Default)]
pub struct ProgressForwarder {
    calls: Mutex<HashMap<String, Listened>>,
}

/// One call whose client asked for progress.
struct Listened {
    token: ProgressToken,
    queue: mpsc::Sender<ProgressNotificationParam>,
    /// The `progress` of the last report sent.
    last: f64,
}

impl ProgressForwarder {
    /// Sends the reports of the top-level call `call_id` to `peer` as `token`'s until
    /// [`Forwarding::finish`] (or drop).
    pub fn open(
        self: &Arc<Self>,
        call_id: String,
        token: ProgressToken,
        peer: Peer<RoleServer>,
    ) -> Forwarding {
        let (queue, mut queued) = mpsc::channel::<ProgressNotificationParam>(QUEUED);
        let sender = tokio::spawn(async move {
            while let Some(report) = queued.recv().await {
                if peer.notify_progress(report).await.is_err() {
                    return;
                }
            }
        });
        let listened = Listened {
            token,
            queue,
            last: 0.0,
        };
        self.calls.lock().insert(call_id.clone(), listened);
        Forwarding {
            forwarder: self.clone(),
            call_id,
            sender: Some(sender),
        }
    }
}

impl ProgressSink for ProgressForwarder {
    fn report(&self, execution: &ToolExecution, event: ProgressEvent) {
        let (call_id, dispatch) = progress_ids(execution);
        let mut calls = self.calls.lock();
        let Some(call) = calls.get_mut(call_id) else {
            return;
        };
        let (progress, total, message) = match event {
            ProgressEvent::Progress {
                progress,
                total,
                message,
            } if dispatch.is_none() && progress > call.last => (progress, total, message),
            ProgressEvent::Progress {
                progress,
                total,
                message,
            } => {
                let amount = match total {
                    Some(total) => format!("{progress}/{total}"),
                    None => progress.to_string(),
                };
                let text = match message {
                    Some(message) => format!("{}: {amount} {message}", execution.name),
                    None => format!("{}: {amount}", execution.name),
                };
                (call.last + 1.0, None, Some(text))
            }
            ProgressEvent::Output { text, .. } => (call.last + 1.0, None, Some(text)),
        };
        let mut report = ProgressNotificationParam::new(call.token.clone(), progress);
        report.total = total;
        report.message = message;
        // A report that does not fit is dropped: the next one still counts on from it.
        call.last = progress;
        let _ = call.queue.try_send(report);
    }
}

/// One call's forwarding; finishing it sends what is queued before the result goes out.
pub struct Forwarding {
    forwarder: Arc<ProgressForwarder>,
    call_id: String,
    sender: Option<JoinHandle<()>>,
}

impl Forwarding {
    /// Stops taking reports and waits until the queued ones were sent.
    pub async fn finish(mut self) {
        self.forwarder.calls.lock().remove(&self.call_id);
        if let Some(sender) = self.sender.take() {
            let _ = sender.await;
        }
    }
}

impl Drop for Forwarding {
    /// A call dropped unfinished (its client went away) stops its reports too.
    fn drop(&mut self) {
        self.forwarder.calls.lock().remove(&self.call_id);
    }
}
