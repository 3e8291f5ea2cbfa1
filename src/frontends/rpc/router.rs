//! The method table as the front end routes it: each method's handler (a jsonrpsee
//! `RpcModule` entry: typed params, error objects) and whether it runs inline or as a task,
//! declared together; plus the hooks that hear of a request as soon as it is read.
//!
//! jsonrpsee's server is not used: it serves HTTP and WebSocket, while this front end reads
//! LSP or NDJSON frames on stdio and sends its own requests to the client on the same
//! stream. So the server loop parses frames and batches itself and calls the module's
//! callbacks directly, with the one connection this process has.

use super::session::Session;
use jsonrpsee::{ConnectionId, Extensions, MethodCallback, MethodResponse, RpcModule};
use jsonrpsee_types::{Id, Params};
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// The only connection of a stdio host.
const CONNECTION: ConnectionId = ConnectionId(0);

/// jsonrpsee's response cap is not applied: responses are bounded by the writer's
/// backpressure and the client by `transport.maxMessageBytes` on what it sends.
const NO_RESPONSE_CAP: usize = usize::MAX;

/// How a method runs relative to the reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dispatch {
    /// Answered before the next message is read: registry mutations and lookups keep
    /// their arrival order.
    Inline,
    /// Spawned as a task that also queues its reply: it may wait on the client, whose
    /// answers must keep flowing through the reader.
    Task,
}

/// Hears of every admitted request as soon as it is read, before its params are parsed or
/// its method runs. It must be cheap and must not change what the request does: it exists
/// for work that can overlap the request's own (Code Mode's isolate warm-up).
pub trait RequestHook: Send + Sync {
    fn on_request(&self, method: &str, params: Option<&RawValue>);
}

/// One routed request's future: the method's response.
pub type Call = Pin<Box<dyn Future<Output = MethodResponse> + Send>>;

/// The routes of one connection.
pub struct Router {
    module: RpcModule<Session>,
    dispatch: HashMap<&'static str, Dispatch>,
    hooks: Vec<Arc<dyn RequestHook>>,
}

impl Router {
    /// An empty table over `session`.
    pub fn new(session: Arc<Session>) -> Self {
        Router {
            module: RpcModule::from_arc(session),
            dispatch: HashMap::new(),
            hooks: Vec::new(),
        }
    }

    /// The module to register a handler in, with how it runs.
    pub fn route(&mut self, name: &'static str, dispatch: Dispatch) -> &mut RpcModule<Session> {
        self.dispatch.insert(name, dispatch);
        &mut self.module
    }

    /// Adds a hook that hears of every request.
    pub fn add_hook(&mut self, hook: Arc<dyn RequestHook>) {
        self.hooks.push(hook);
    }

    /// Tells the hooks of a request just read.
    pub fn announce(&self, method: &str, params: Option<&RawValue>) {
        for hook in &self.hooks {
            hook.on_request(method, params);
        }
    }

    /// Starts `method`'s handler, or `None` for an unknown method.
    pub fn call(
        &self,
        method: &str,
        id: Id<'static>,
        params: Option<&RawValue>,
        extensions: Extensions,
    ) -> Option<(Dispatch, Call)> {
        let dispatch = *self.dispatch.get(method)?;
        let Some(MethodCallback::Async(callback)) = self.module.method(method) else {
            return None;
        };
        let params = Params::new(params.map(RawValue::get)).into_owned();
        let call = callback(id, params, CONNECTION, NO_RESPONSE_CAP, extensions);
        Some((dispatch, call))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::methods;
    use super::*;

    #[tokio::test]
    async fn every_method_of_the_table_declares_how_it_runs() {
        let session = super::super::session::tests::session();
        let router = methods::router(session);
        let mut names: Vec<&str> = router.module.method_names().collect();
        names.sort();
        let mut declared: Vec<&str> = router.dispatch.keys().copied().collect();
        declared.sort();
        assert_eq!(names, declared);
        let tasks: Vec<&str> = declared
            .into_iter()
            .filter(|name| router.dispatch[name] == Dispatch::Task)
            .collect();
        assert_eq!(
            tasks,
            [
                "shutdown",
                "tools/execute",
                "tools/executeBatch",
                "tools/executionMode"
            ]
        );
    }
}
