//! A test client that spawns the real `dsh-tools` binary and speaks the wire protocol.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// Which framing the client speaks.
#[derive(Clone, Copy, Debug)]
pub enum Framing {
    Lsp,
    Ndjson,
}

/// The host process plus framed stdio.
pub struct Host {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    framing: Framing,
    next_id: u64,
    /// Notifications and host→client requests seen while waiting for responses.
    pub inbox: Vec<Value>,
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
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Host {
            child,
            stdin,
            stdout,
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
        self.stdin.write_all(bytes).unwrap();
        self.stdin.flush().unwrap();
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
        match self.framing {
            Framing::Ndjson => {
                let mut line = String::new();
                (self.stdout.read_line(&mut line).unwrap() > 0)
                    .then(|| serde_json::from_str(&line).unwrap())
            }
            Framing::Lsp => {
                let mut length = None;
                loop {
                    let mut line = String::new();
                    if self.stdout.read_line(&mut line).unwrap() == 0 {
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
                self.stdout.read_exact(&mut body).unwrap();
                Some(serde_json::from_slice(&body).unwrap())
            }
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

    /// Answers a host→client request.
    pub fn answer(&mut self, request: &Value, result: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "id": request["id"], "result": result }));
    }

    /// Closes stdin and returns the exit code.
    pub fn finish(mut self) -> i32 {
        drop(self.stdin);
        self.child.wait().unwrap().code().unwrap_or(-1)
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
