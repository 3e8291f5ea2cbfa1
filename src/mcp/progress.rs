//! Progress of calls to ingested servers: rmcp puts a `progressToken` of its own in the
//! `_meta` of every request; while someone listens to a call, each `notifications/progress`
//! the server sends for its token goes to the call's [`Progress`] until the call ends.

use crate::tool::Progress;
use parking_lot::Mutex;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use std::collections::HashMap;
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;

    #[test]
    fn a_call_nobody_listens_to_is_not_routed() {
        let routes = Arc::new(ProgressRoutes::default());
        let token = ProgressToken(NumberOrString::Number(1));
        assert!(routes.open(token, &Progress::default()).is_none());
        assert!(routes.open.lock().is_empty());
    }
}
