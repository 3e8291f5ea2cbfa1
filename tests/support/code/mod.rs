//! The Code Mode suites' helpers, on top of the shared test client (`support::wire`):
//! Code Mode hosts, `run_code` calls and serving `client/executeTool` until a response.

#![allow(dead_code, unused_imports, clippy::unwrap_used, clippy::expect_used)]

use super::wire;

pub mod hostile;

pub use dsh_tools::config::merge;
pub use wire::{Framing, echo_spec};

use serde_json::{Value, json};
use std::time::Duration;

/// A deadlock guard, never a timing assertion: runs under budgets of seconds on a loaded
/// machine must not fail for slowness.
const HANG_GUARD: Duration = Duration::from_secs(120);

/// Both framings, for suites that run everything twice.
pub const FRAMINGS: [Framing; 2] = [Framing::Lsp, Framing::Ndjson];

/// The shared client with Code Mode helpers.
pub struct Host {
    wire: wire::Host,
}

wire::wraps_host!(Host => wire::Host);

impl Host {
    /// Spawns `dsh-tools serve --framing <framing>`.
    pub fn spawn(framing: Framing) -> Host {
        Host::spawn_with(framing, &[])
    }

    /// Spawns `dsh-tools serve --framing <framing> <extra…>`.
    pub fn spawn_with(framing: Framing, extra: &[&str]) -> Host {
        Host {
            wire: wire::Host::serve(framing, extra).patient(HANG_GUARD),
        }
    }

    /// Spawns and completes `initialize` with the given capabilities and config.
    pub fn initialized(framing: Framing, capabilities: Value, config: Value) -> Host {
        let mut host = Host::spawn(framing);
        host.initialize(capabilities, config);
        host
    }

    /// A host that executes client tools, presenting `mode` (`code` or `both`), with `extra`
    /// merged into its config (`tools` and `codeRuntime` objects are merged key by key).
    pub fn code_mode(framing: Framing, mode: &str, extra: Value) -> Host {
        let mut config = json!({ "tools": { "mode": mode } });
        merge(&mut config, extra);
        Host::initialized(framing, json!({ "executeTools": true }), config)
    }

    /// [`Host::code_mode`] over ndjson with `env` added to the host's environment.
    pub fn code_mode_with_env(mode: &str, extra: Value, env: &[(&str, &str)]) -> Host {
        let mut config = json!({ "tools": { "mode": mode } });
        merge(&mut config, extra);
        let args = ["serve", "--framing", "ndjson"];
        let mut host = Host {
            wire: wire::Host::spawn_with_env(&args, Framing::Ndjson, env).patient(HANG_GUARD),
        };
        host.initialize(json!({ "executeTools": true }), config);
        host
    }

    /// The next message, from `inbox` first.
    pub fn next_message(&mut self) -> Value {
        if !self.inbox.is_empty() {
            return self.inbox.remove(0);
        }
        match self.read() {
            Some(message) => message,
            None => panic!("host closed stdout: {}", self.ending()),
        }
    }

    /// Sends a request without waiting for its response.
    pub fn send_request(&mut self, id: Value, method: &str, params: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
    }

    /// Answers a host→client request with a JSON-RPC error.
    pub fn answer_error(&mut self, request: &Value, message: &str) {
        self.send(&json!({ "jsonrpc": "2.0", "id": request["id"],
            "error": { "code": -32000, "message": message } }));
    }

    /// Registers a client tool; panics if the host refuses it.
    pub fn register(&mut self, tool: Value) {
        let response = self.request("tools/register", json!({ "tool": tool }));
        assert!(response["result"]["registration"].is_string(), "{response}");
    }

    /// Sends `run_code` as `tools/execute` with request id `id` and call id `call_id`.
    pub fn send_run_code(&mut self, id: Value, call_id: &str, code: &str) {
        self.send_request(id, "tools/execute", run_code_params(call_id, code));
    }

    /// Runs a program whose sub-calls (if any) the client never has to answer and returns
    /// the wire result of the outer call.
    pub fn run_code(&mut self, call_id: &str, code: &str) -> Value {
        let response = self.request("tools/execute", run_code_params(call_id, code));
        assert!(response.get("result").is_some(), "{response}");
        response["result"].clone()
    }

    /// Reads until the response to `id`, answering every `client/executeTool` with `answer`
    /// (None leaves it unanswered). Returns the response and every other message in arrival
    /// order, the `client/executeTool` requests included.
    pub fn serve_until(
        &mut self,
        id: &Value,
        mut answer: impl FnMut(&Value) -> Option<Result<Value, String>>,
    ) -> (Value, Vec<Value>) {
        let mut transcript = Vec::new();
        loop {
            let message = self.next_message();
            if message.get("method").is_none() && &message["id"] == id {
                return (message, transcript);
            }
            if message["method"] == "client/executeTool" {
                match answer(&message["params"]) {
                    Some(Ok(result)) => self.answer(&message, result),
                    Some(Err(error)) => self.answer_error(&message, &error),
                    None => {}
                }
            }
            transcript.push(message);
        }
    }

    /// SIGKILLs the host (a crash: nothing of it runs any more) and reaps it.
    pub fn crash(self) {
        self.wire.crash();
    }

    /// Closes stdin and returns the exit code.
    pub fn finish(self) -> i32 {
        self.wire.finish()
    }

    /// Closes stdin, then collects the unread output and the exit status.
    pub fn finish_all(self) -> wire::Finished {
        self.wire.finish_all()
    }
}

fn run_code_params(call_id: &str, code: &str) -> Value {
    json!({ "callId": call_id, "name": "run_code",
        "arguments": { "code": code, "description": "a test program" } })
}

/// The `tools:sdk` section of a `tools/prompt` response.
pub fn sdk_of(prompt: &Value) -> String {
    prompt["result"]["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "tools:sdk")
        .map(|s| s["text"].as_str().unwrap().to_owned())
        .unwrap()
}

/// A client tool taking any object and returning any JSON; `safe` says whether calls may
/// overlap (`concurrencySafe`).
pub fn any_spec(name: &str, safe: bool) -> Value {
    json!({
        "name": name,
        "description": "Any arguments, any result.",
        "inputSchema": { "type": "object" },
        "output": { "jsonSchema": {} },
        "concurrencySafe": safe
    })
}

/// The messages of `transcript` with `method`, in order.
pub fn with_method<'a>(transcript: &'a [Value], method: &str) -> Vec<&'a Value> {
    transcript
        .iter()
        .filter(|m| m["method"] == method)
        .collect()
}
