//! The policy and hook wire suites' scripted helpers, on top of the shared test client
//! (`support::wire`): one `tools/execute` driven to its end while every host→client request
//! gets a scripted [`Reply`].

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use super::wire;

pub use wire::{Framing, echo_spec};

use serde_json::{Value, json};
use std::time::Duration;

/// A safety net, not a timing assumption: hook deadlines make single steps long.
const PATIENCE: Duration = Duration::from_secs(120);

/// The shared client plus the numbering of scripted executions.
pub struct Host {
    wire: wire::Host,
    executions: u64,
}

/// How a scripted client answers one host→client request.
#[derive(Clone, Debug)]
pub enum Reply {
    /// A JSON-RPC result.
    Result(Value),
    /// A JSON-RPC error with this code and message.
    Error(i64, String),
    /// No answer at all.
    Silent,
}

wire::wraps_host!(Host => wire::Host);

impl Host {
    /// Spawns `dsh-tools serve --framing <framing>`.
    pub fn spawn(framing: Framing) -> Host {
        Host {
            wire: wire::Host::spawn(framing).patient(PATIENCE),
            executions: 0,
        }
    }

    /// Spawns `dsh-tools serve --framing <framing> <extra…>` (`--config FILE`).
    pub fn serve(framing: Framing, extra: &[&str]) -> Host {
        Host {
            wire: wire::Host::serve(framing, extra).patient(PATIENCE),
            executions: 0,
        }
    }

    /// Spawns and completes `initialize` with the given capabilities and config.
    pub fn initialized(framing: Framing, capabilities: Value, config: Value) -> Host {
        let mut host = Host::spawn(framing);
        host.initialize(capabilities, config);
        host
    }

    /// The next host→client request (one with `method` and `id`), taking it from `inbox` first.
    pub fn next_request(&mut self) -> Value {
        let is_request = |m: &Value| m.get("method").is_some() && m.get("id").is_some();
        if let Some(index) = self.inbox.iter().position(is_request) {
            return self.inbox.remove(index);
        }
        loop {
            let message = self.read().expect("host closed stdout");
            if is_request(&message) {
                return message;
            }
            self.inbox.push(message);
        }
    }

    /// Answers a host→client request with a JSON-RPC error.
    pub fn answer_error(&mut self, request: &Value, code: i64, message: &str) {
        self.send(&json!({ "jsonrpc": "2.0", "id": request["id"],
            "error": { "code": code, "message": message } }));
    }

    /// Sends `tools/execute` under request id `id` without waiting.
    pub fn start_execute(&mut self, id: &str, params: Value) {
        self.send(
            &json!({ "jsonrpc": "2.0", "id": id, "method": "tools/execute", "params": params }),
        );
    }

    /// Runs one `tools/execute`, answering every host→client request with `respond`.
    /// Returns the call's result and the requests the host made, in order.
    pub fn execute(
        &mut self,
        params: Value,
        respond: impl FnMut(&Value) -> Reply,
    ) -> (Value, Vec<Value>) {
        self.executions += 1;
        let id = format!("x{}", self.executions);
        self.start_execute(&id, params);
        let (response, requests) = self.drive(&json!(id), respond);
        (response["result"].clone(), requests)
    }

    /// Reads until the response with `id`, answering host→client requests with `respond`
    /// (notifications go to `inbox`). Returns the response and the requests seen.
    pub fn drive(
        &mut self,
        id: &Value,
        mut respond: impl FnMut(&Value) -> Reply,
    ) -> (Value, Vec<Value>) {
        let mut requests = Vec::new();
        loop {
            let message = self.read().expect("host closed stdout before answering");
            match (message.get("method"), message.get("id")) {
                (None, _) if &message["id"] == id => return (message, requests),
                (Some(_), Some(_)) => {
                    match respond(&message) {
                        Reply::Result(result) => self.answer(&message, result),
                        Reply::Error(code, text) => self.answer_error(&message, code, &text),
                        Reply::Silent => {}
                    }
                    requests.push(message);
                }
                _ => self.inbox.push(message),
            }
        }
    }

    /// Closes stdin (EOF on the host's side) but keeps reading.
    pub fn close_input(&mut self) {
        self.close_stdin();
    }

    /// Everything the host writes from now until it closes stdout (the inbox is left alone).
    pub fn rest(&mut self) -> Vec<Value> {
        std::iter::from_fn(|| self.read()).collect()
    }

    /// Closes stdin and returns the exit code.
    pub fn finish(self) -> i32 {
        self.wire.finish()
    }
}
