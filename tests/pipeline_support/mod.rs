//! The registry and execution wire suites' test client (spawns the real binary).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{RecvTimeoutError, Sender, channel};
use std::time::Duration;

/// How long a host may live before the watchdog kills it, so a hang fails the test (its
/// reads see EOF) instead of blocking the suite.
const WATCHDOG: Duration = Duration::from_secs(120);

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
    stdout: BufReader<ChildStdout>,
    framing: Framing,
    next_id: u64,
    /// Notifications and host→client requests seen while waiting for responses.
    pub inbox: Vec<Value>,
    /// Dropping it (or reaping the child) stands the watchdog down.
    watchdog: Option<Sender<()>>,
    reaped: Arc<AtomicBool>,
}

impl Host {
    /// Spawns `dsh-tools serve --framing <framing>`.
    pub fn spawn(framing: Framing) -> Host {
        Host::spawn_with(framing, &[])
    }

    /// Spawns `dsh-tools serve --framing <framing> <extra...>` (e.g. `--config FILE`).
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
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (watchdog, stand_down) = channel::<()>();
        let reaped = Arc::new(AtomicBool::new(false));
        let (pid, dead) = (child.id(), reaped.clone());
        std::thread::spawn(move || {
            // Only a timeout (not a stand-down) kills, and only our own unreaped child.
            if let Err(RecvTimeoutError::Timeout) = stand_down.recv_timeout(WATCHDOG)
                && !dead.load(Ordering::SeqCst)
            {
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            }
        });
        Host {
            child,
            stdin,
            stdout,
            framing,
            next_id: 0,
            inbox: Vec::new(),
            watchdog: Some(watchdog),
            reaped,
        }
    }

    /// Spawns with a `--config` file holding `file_config`, then initializes.
    pub fn initialized_with_file(
        framing: Framing,
        file_config: &Value,
        capabilities: Value,
        config: Value,
    ) -> Host {
        let path = std::env::temp_dir().join(format!(
            "dsh-tools-test-{}-{}.json",
            std::process::id(),
            NEXT_FILE.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::write(&path, file_config.to_string()).unwrap();
        let mut host = Host::spawn_with(framing, &["--config", path.to_str().unwrap()]);
        let result = host.request(
            "initialize",
            json!({ "protocolVersion": "1", "capabilities": capabilities, "config": config }),
        );
        std::fs::remove_file(&path).unwrap();
        assert_eq!(result["result"]["protocolVersion"], "1", "{result}");
        host
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
        let stdin = self.stdin.as_mut().expect("stdin already closed");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Closes the host's stdin (the client went away) while its output stays readable.
    pub fn close_input(&mut self) {
        drop(self.stdin.take());
    }

    /// Sends a request without waiting; returns its id for `response_to`.
    pub fn start(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = json!(format!("req-{}", self.next_id));
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        id
    }

    /// Removes and returns every inbox message with `method`, in arrival order.
    pub fn drain(&mut self, method: &str) -> Vec<Value> {
        let (taken, kept) = std::mem::take(&mut self.inbox)
            .into_iter()
            .partition(|m| m["method"] == method);
        self.inbox = kept;
        taken
    }

    /// Answers a host→client request with a JSON-RPC error.
    pub fn answer_error(&mut self, request: &Value, code: i64, message: &str) {
        self.send(&json!({ "jsonrpc": "2.0", "id": request["id"],
            "error": { "code": code, "message": message } }));
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
                (self.stdout.read_line(&mut line).unwrap() > 0).then(|| parse(line.as_bytes()))
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
                Some(parse(&body))
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
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        self.reaped.store(true, Ordering::SeqCst);
        drop(self.watchdog.take());
        status.code().unwrap_or(-1)
    }
}

/// Parses one message without serde_json's 128-level limit (tests send deep values).
fn parse(bytes: &[u8]) -> Value {
    use serde::Deserialize;
    let mut json = serde_json::Deserializer::from_slice(bytes);
    json.disable_recursion_limit();
    let value = Value::deserialize(&mut json).unwrap();
    json.end().unwrap();
    value
}

/// Runs `test` on a thread with a large stack: the test client's own serde_json clones,
/// serializes and drops deep values recursively.
pub fn with_big_stack(test: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(test)
        .unwrap()
        .join()
        .unwrap();
}

static NEXT_FILE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

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
