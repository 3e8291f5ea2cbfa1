//! The Code Mode suites' test client (spawns the real binary); see `tests/support` for the transport suites' one.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

/// How long a read may wait before the test fails instead of hanging: a deadlock guard,
/// never a timing assertion (every test is correct however slow the machine is below it).
const HANG_GUARD: Duration = Duration::from_secs(120);

/// Which framing the client speaks.
#[derive(Clone, Copy, Debug)]
pub enum Framing {
    Lsp,
    Ndjson,
}

/// Both framings, for tests that cover each.
pub const FRAMINGS: [Framing; 2] = [Framing::Lsp, Framing::Ndjson];

/// The host process plus framed stdio.
pub struct Host {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: Receiver<Value>,
    framing: Framing,
    next_id: u64,
    /// Notifications and host→client requests seen while waiting for responses.
    pub inbox: Vec<Value>,
}

impl Host {
    /// Spawns `dsh-tools serve --framing <framing>`.
    pub fn spawn(framing: Framing) -> Host {
        Host::spawn_with(framing, &[])
    }

    /// Spawns `dsh-tools serve --framing <framing> <extra…>`.
    pub fn spawn_with(framing: Framing, extra: &[&str]) -> Host {
        let flag = match framing {
            Framing::Lsp => "lsp",
            Framing::Ndjson => "ndjson",
        };
        let mut child = Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
            .args(["serve", "--framing", flag])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn dsh-tools");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (sender, messages) = channel();
        std::thread::spawn(move || {
            let mut stdout = stdout;
            while let Some(message) = read_message(&mut stdout, framing) {
                if sender.send(message).is_err() {
                    return;
                }
            }
        });
        Host {
            child,
            stdin: Some(stdin),
            messages,
            framing,
            next_id: 0,
            inbox: Vec::new(),
        }
    }

    /// Spawns and completes `initialize` with the given capabilities and config.
    pub fn initialized(framing: Framing, capabilities: Value, config: Value) -> Host {
        let mut host = Host::spawn(framing);
        let result = host.request(
            "initialize",
            json!({ "protocolVersion": "1", "capabilities": capabilities, "config": config }),
        );
        assert_eq!(result["result"]["protocolVersion"], "1", "{result}");
        host
    }

    /// A host that executes client tools, presenting `mode` (`code` or `both`), with `extra`
    /// merged into its config (`tools` and `codeRuntime` objects are merged key by key).
    pub fn code_mode(framing: Framing, mode: &str, extra: Value) -> Host {
        let mut config = json!({ "tools": { "mode": mode } });
        merge(&mut config, extra);
        Host::initialized(framing, json!({ "executeTools": true }), config)
    }

    /// Writes raw bytes.
    pub fn write_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Writes one message in this host's framing.
    pub fn send(&mut self, message: &Value) {
        let text = message.to_string();
        let framed = match self.framing {
            Framing::Lsp => format!("Content-Length: {}\r\n\r\n{text}", text.len()),
            Framing::Ndjson => format!("{text}\n"),
        };
        self.write_raw(framed.as_bytes());
    }

    /// Reads one message (None at EOF); fails the test instead of hanging forever.
    pub fn read(&mut self) -> Option<Value> {
        match self.messages.recv_timeout(HANG_GUARD) {
            Ok(message) => Some(message),
            Err(RecvTimeoutError::Disconnected) => None,
            Err(RecvTimeoutError::Timeout) => {
                panic!(
                    "no message from the host within {HANG_GUARD:?}; inbox: {:#?}",
                    self.inbox
                )
            }
        }
    }

    /// The next message, from `inbox` first.
    pub fn next_message(&mut self) -> Value {
        if !self.inbox.is_empty() {
            return self.inbox.remove(0);
        }
        self.read().expect("host closed stdout")
    }

    /// Sends a request and returns its response; other messages go to `inbox`.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send_request(json!(id), method, params);
        self.response_to(&json!(id))
    }

    /// Sends a request without waiting for its response.
    pub fn send_request(&mut self, id: Value, method: &str, params: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
    }

    /// Reads until the response with `id` arrives.
    pub fn response_to(&mut self, id: &Value) -> Value {
        if let Some(index) = self
            .inbox
            .iter()
            .position(|m| m.get("method").is_none() && &m["id"] == id)
        {
            return self.inbox.remove(index);
        }
        loop {
            let message = self.read().expect("host closed stdout before answering");
            if message.get("method").is_none() && &message["id"] == id {
                return message;
            }
            self.inbox.push(message);
        }
    }

    /// Reads until a message with `method` arrives (taking it from `inbox` first).
    pub fn next_with_method(&mut self, method: &str) -> Value {
        if let Some(index) = self.inbox.iter().position(|m| m["method"] == method) {
            return self.inbox.remove(index);
        }
        loop {
            let message = self.read().expect("host closed stdout");
            if message["method"] == method {
                return message;
            }
            self.inbox.push(message);
        }
    }

    /// Answers a host→client request.
    pub fn answer(&mut self, request: &Value, result: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "id": request["id"], "result": result }));
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
        self.send_request(
            id,
            "tools/execute",
            json!({ "callId": call_id, "name": "run_code",
                "arguments": { "code": code, "description": "a test program" } }),
        );
    }

    /// Runs a program whose sub-calls (if any) the client never has to answer and returns
    /// the wire result of the outer call.
    pub fn run_code(&mut self, call_id: &str, code: &str) -> Value {
        self.next_id += 1;
        let id = json!(self.next_id);
        self.send_run_code(id.clone(), call_id, code);
        let response = self.response_to(&id);
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

    /// The host's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILLs the host (a crash: nothing of it runs any more) and reaps it.
    pub fn crash(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        drop(self.stdin.take());
    }

    /// Closes stdin and returns the exit code.
    pub fn finish(mut self) -> i32 {
        drop(self.stdin.take());
        self.child.wait().unwrap().code().unwrap_or(-1)
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        // A failed test must not leave a host behind.
        if self.stdin.is_some() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Reads one framed message (None at EOF).
fn read_message(stdout: &mut BufReader<ChildStdout>, framing: Framing) -> Option<Value> {
    match framing {
        Framing::Ndjson => {
            let mut line = String::new();
            (stdout.read_line(&mut line).ok()? > 0).then(|| serde_json::from_str(&line).unwrap())
        }
        Framing::Lsp => {
            let mut length = None;
            loop {
                let mut line = String::new();
                if stdout.read_line(&mut line).ok()? == 0 {
                    return None;
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some(value) = line.strip_prefix("Content-Length: ") {
                    length = Some(value.parse::<usize>().unwrap());
                }
            }
            let mut body = vec![0; length.unwrap()];
            stdout.read_exact(&mut body).ok()?;
            Some(serde_json::from_slice(&body).unwrap())
        }
    }
}

/// Merges `over` into `base`, object by object.
pub fn merge(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(base), Value::Object(over)) => {
            for (key, value) in over {
                match base.get_mut(&key) {
                    Some(slot) => merge(slot, value),
                    None => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (slot, value) => *slot = value,
    }
}

/// A DSL echo tool spec executed by the client.
pub fn echo_spec(name: &str) -> Value {
    json!({
        "name": name,
        "description": "Echo the text back.",
        "parameters": { "text": { "type": "string", "required": true } },
        "output": { "schema": { "type": "string" } },
        "concurrencySafe": true
    })
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
