//! The policy and hook wire suites' scripted test client (spawns the real binary).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

/// A safety net, not a timing assumption: a host silent this long is hung, so the test fails
/// instead of blocking the suite forever.
const HUNG_AFTER: Duration = Duration::from_secs(120);

/// Which framing the client speaks.
#[derive(Clone, Copy, Debug)]
pub enum Framing {
    Lsp,
    Ndjson,
}

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

impl Host {
    /// Spawns `dsh-tools serve --framing <framing>`.
    pub fn spawn(framing: Framing) -> Host {
        let flag = match framing {
            Framing::Lsp => "lsp",
            Framing::Ndjson => "ndjson",
        };
        let mut child = Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
            .args(["serve", "--framing", flag])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn dsh-tools");
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let (sender, messages) = channel();
        std::thread::spawn(move || {
            while let Some(message) = read_frame(&mut stdout, framing) {
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

    /// Reads one message (None at EOF).
    pub fn read(&mut self) -> Option<Value> {
        match self.messages.recv_timeout(HUNG_AFTER) {
            Ok(message) => Some(message),
            Err(RecvTimeoutError::Disconnected) => None,
            Err(RecvTimeoutError::Timeout) => panic!("the host sent nothing for {HUNG_AFTER:?}"),
        }
    }

    /// Sends a request and returns its response; other messages go to `inbox`.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        self.response_to(&json!(id))
    }

    /// Reads until the response with `id` arrives.
    pub fn response_to(&mut self, id: &Value) -> Value {
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

    /// Answers a host→client request.
    pub fn answer(&mut self, request: &Value, result: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "id": request["id"], "result": result }));
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
        self.next_id += 1;
        let id = format!("x{}", self.next_id);
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
        self.stdin = None;
    }

    /// Everything the host writes until it closes stdout.
    pub fn rest(&mut self) -> Vec<Value> {
        std::iter::from_fn(|| self.read()).collect()
    }

    /// Closes stdin and returns the exit code.
    pub fn finish(mut self) -> i32 {
        self.stdin = None;
        self.child.wait().unwrap().code().unwrap_or(-1)
    }
}

impl Drop for Host {
    /// A failed test must not leave the host running.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_frame(stdout: &mut BufReader<ChildStdout>, framing: Framing) -> Option<Value> {
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
