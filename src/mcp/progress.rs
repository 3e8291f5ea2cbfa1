//! Progress of calls to ingested servers: rmcp puts a `progressToken` of its own in the
//! `_meta` of every request; while someone listens to a call, each `notifications/progress`
//! the server sends for its token goes to the call's [`Progress`] until the call ends.
//!
//! Reports are routed as the transport reads them ([`Ordered`]), not by rmcp's notification
//! handler: rmcp runs each notification's handler as a task of its own but hands a response
//! straight to its caller, so a server's last report, written just before its result, could
//! reach the call after the result had ended it and be lost.

use crate::tool::Progress;
use parking_lot::Mutex;
use rmcp::model::{JsonRpcMessage, ProgressNotificationParam, ProgressToken, ServerNotification};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

/// The open calls of one server that someone listens to, by token (shared by its
/// connections; each token lives as long as its call).
#[derive(Default)]
pub struct ProgressRoutes {
    open: Mutex<HashMap<ProgressToken, Progress>>,
}

impl ProgressRoutes {
    /// Routes `token`'s reports to `progress` until the returned guard drops; nothing when
    /// nobody listens (the server's reports are then ignored).
    pub fn open(self: &Arc<Self>, token: ProgressToken, progress: &Progress) -> Option<Route> {
        if !progress.is_live() {
            return None;
        }
        self.open.lock().insert(token.clone(), progress.clone());
        Some(Route {
            routes: self.clone(),
            token,
        })
    }

    /// Hands one server report to its call; a finished or unknown call's is ignored.
    pub fn deliver(&self, report: ProgressNotificationParam) {
        let progress = self.open.lock().get(&report.progress_token).cloned();
        match progress {
            Some(progress) => progress.progress(report.progress, report.total, report.message),
            None => tracing::debug!(target: "mcp", "progress for a call that is not running"),
        }
    }
}

/// One open route; dropping it (the call ended) stops its reports.
pub struct Route {
    routes: Arc<ProgressRoutes>,
    token: ProgressToken,
}

impl Drop for Route {
    fn drop(&mut self) {
        self.routes.open.lock().remove(&self.token);
    }
}

/// A client transport that routes each `notifications/progress` when it reads it, before it
/// reads whatever the server wrote next (the call's result among it); the notification then
/// goes on to rmcp as usual.
pub struct Ordered<T> {
    inner: T,
    routes: Arc<ProgressRoutes>,
}

impl<T> Ordered<T> {
    pub fn new(inner: T, routes: Arc<ProgressRoutes>) -> Self {
        Self { inner, routes }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Ordered<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        if let JsonRpcMessage::Notification(notification) = &message
            && let ServerNotification::ProgressNotification(progress) = &notification.notification
        {
            self.routes.deliver(progress.params.clone());
        }
        Some(message)
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::tool::{ExecutionToken, ProgressEvent, ProgressSink, Signal, ToolExecution};
    use rmcp::model::NumberOrString;
    use serde_json::json;
    use std::collections::VecDeque;

    #[test]
    fn a_call_nobody_listens_to_is_not_routed() {
        let routes = Arc::new(ProgressRoutes::default());
        let token = ProgressToken(NumberOrString::Number(1));
        assert!(routes.open(token, &Progress::default()).is_none());
        assert!(routes.open.lock().is_empty());
    }

    /// Collects the reports it is given.
    #[derive(Default)]
    struct Collect(Mutex<Vec<ProgressEvent>>);

    impl ProgressSink for Collect {
        fn report(&self, _: &ToolExecution, event: ProgressEvent) {
            self.0.lock().push(event);
        }
    }

    /// A transport that reads what a server wrote, in order.
    struct Written(VecDeque<RxJsonRpcMessage<RoleClient>>);

    impl Transport<RoleClient> for Written {
        type Error = std::io::Error;

        fn send(
            &mut self,
            _: TxJsonRpcMessage<RoleClient>,
        ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
            std::future::ready(Ok(()))
        }

        async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
            self.0.pop_front()
        }

        async fn close(&mut self) -> Result<(), Self::Error> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn a_report_reaches_its_call_as_it_is_read_before_the_result_written_after_it() {
        let sink = Arc::new(Collect::default());
        let execution = Arc::new(ToolExecution {
            token: ExecutionToken::fresh(),
            call_id: "c".into(),
            name: "mcp__ev__long".into(),
            arguments: Arc::new(json!({})),
            agent: None,
            parent: None,
            signal: Signal::never(),
        });
        let dyn_sink: Arc<dyn ProgressSink> = sink.clone();
        let progress = Progress::new(&execution, Some(&dyn_sink));
        let routes = Arc::new(ProgressRoutes::default());
        let route = routes.open(ProgressToken(NumberOrString::Number(7)), &progress);
        let written = [
            json!({ "jsonrpc": "2.0", "method": "notifications/progress",
                "params": { "progressToken": 7, "progress": 4, "total": 4 } }),
            json!({ "jsonrpc": "2.0", "id": 1, "result": {} }),
        ]
        .map(|message| serde_json::from_value(message).unwrap());
        let mut ordered = Ordered::new(Written(written.into()), routes);
        let first = ordered.receive().await.unwrap();
        assert!(matches!(first, JsonRpcMessage::Notification(_)));
        let report = ProgressEvent::Progress {
            progress: 4.0,
            total: Some(4.0),
            message: None,
        };
        // Routed before anything after it is read, so before the call can see its result.
        assert_eq!(*sink.0.lock(), std::slice::from_ref(&report));
        let second = ordered.receive().await.unwrap();
        assert!(matches!(second, JsonRpcMessage::Response(_)));
        drop(route);
        assert!(ordered.receive().await.is_none());
        assert_eq!(*sink.0.lock(), [report]);
    }
}
