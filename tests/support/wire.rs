//! A test client that spawns the real `dsh-tools` binary and speaks the wire protocol.
//!
//! Every read is bounded by [`WATCHDOG`]: a host that hangs fails the test instead of
//! blocking it forever. Reads and writes go through helper threads, so a host that stops
//! reading never blocks the test either.

#![allow(
    dead_code,
    unused_macros,
    unused_imports,
    clippy::unwrap_used,
    clippy::expect_used
)]

use serde_json::{Value, json};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Longest wait for any single event (a message, EOF, the process exit).
pub const WATCHDOG: Duration = Duration::from_secs(20);

/// Which framing the client speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    Lsp,
    Ndjson,
}

impl Framing {
    /// Frames `payload` the way a client speaking this framing would.
    pub fn frame(self, payload: &[u8]) -> Vec<u8> {
        match self {
            Framing::Lsp => [
                format!("Content-Length: {}\r\n\r\n", payload.len()).as_bytes(),
                payload,
            ]
            .concat(),
            Framing::Ndjson => [payload, b"\n"].concat(),
        }
    }
}

/// What one bounded read found.
#[derive(Debug, PartialEq)]
pub enum Next {
    Message(Value),
    /// The host closed stdout.
    Eof,
    /// Nothing arrived within the timeout.
    Silent,
}

/// How the process ended: its exit code and whatever it wrote that nobody read.
#[derive(Debug)]
pub struct Finished {
    /// `None` when it was killed by a signal.
    pub code: Option<i32>,
    /// Unread stdout bytes, raw.
    pub stdout: Vec<u8>,
    pub stderr: String,
}

/// The host process plus framed stdio.
pub struct Host {
    child: Option<Child>,
    /// Dropping it closes the host's stdin (after queued writes).
    stdin: Option<Sender<Vec<u8>>>,
    stdout: Receiver<Vec<u8>>,
    stderr: Option<JoinHandle<String>>,
    /// What the host wrote to stderr so far, for waiting on its log lines.
    stderr_so_far: Arc<StderrSoFar>,
    /// Stdout bytes received but not yet parsed.
    buffer: Vec<u8>,
    stdout_closed: bool,
    framing: Framing,
    next_id: u64,
    /// Notifications and host→client requests seen while waiting for responses.
    pub inbox: Vec<Value>,
    /// The exact payload text of every message read, in order, while recording.
    raw: Option<Vec<String>>,
    /// How long a read or the exit may take before the test fails ([`WATCHDOG`] unless
    /// [`Host::patient`] raised it for suites whose single steps may run long).
    patience: Duration,
}

impl Host {
    /// Spawns `dsh-tools serve --framing <framing>`.
    pub fn spawn(framing: Framing) -> Host {
        Host::serve(framing, &[])
    }

    /// Spawns `dsh-tools serve --framing <framing> <extra…>` (e.g. `--config FILE`).
    pub fn serve(framing: Framing, extra: &[&str]) -> Host {
        let flag = match framing {
            Framing::Lsp => "lsp",
            Framing::Ndjson => "ndjson",
        };
        let args: Vec<&str> = ["serve", "--framing", flag]
            .into_iter()
            .chain(extra.iter().copied())
            .collect();
        Host::spawn_with(&args, framing)
    }

    /// Spawns `dsh-tools <args>`; the client speaks (and expects replies in) `speaks`.
    pub fn spawn_with(args: &[&str], speaks: Framing) -> Host {
        Host::spawn_with_env(args, speaks, &[])
    }

    /// [`Host::spawn_with`] with `env` added to the host's environment.
    pub fn spawn_with_env(args: &[&str], speaks: Framing, env: &[(&str, &str)]) -> Host {
        let mut command = Command::new(env!("CARGO_BIN_EXE_dsh-tools"));
        command.args(args).envs(env.iter().copied());
        Host::spawn_command(command, speaks)
    }

    /// Spawns `dsh-tools serve --framing ndjson` with its main thread's stack limited to
    /// `kib` KiB (`ulimit -s`), as a small default stack or a large environment leaves it.
    pub fn serve_on_small_stack(kib: u32) -> Host {
        let mut command = Command::new("sh");
        command.args([
            "-c",
            &format!("ulimit -s {kib} && exec \"$0\" serve --framing ndjson"),
            env!("CARGO_BIN_EXE_dsh-tools"),
        ]);
        Host::spawn_command(command, Framing::Ndjson)
    }

    /// Spawns `command` (the binary, perhaps behind a wrapper that `exec`s it).
    pub fn spawn_command(mut command: Command, speaks: Framing) -> Host {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn dsh-tools");
        let mut stdin = child.stdin.take().unwrap();
        let (stdin_sender, writes) = mpsc::channel::<Vec<u8>>();
        std::thread::spawn(move || {
            for bytes in writes {
                if stdin
                    .write_all(&bytes)
                    .and_then(|()| stdin.flush())
                    .is_err()
                {
                    return;
                }
            }
        });
        let mut stdout = child.stdout.take().unwrap();
        let (chunks, stdout_receiver) = mpsc::channel();
        std::thread::spawn(move || {
            let mut chunk = vec![0; 64 * 1024];
            loop {
                match stdout.read(&mut chunk) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => {
                        if chunks.send(chunk[..n].to_vec()).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let mut stderr = child.stderr.take().unwrap();
        let stderr_so_far = Arc::new(StderrSoFar::default());
        let so_far = stderr_so_far.clone();
        let stderr = std::thread::spawn(move || {
            let mut chunk = vec![0; 64 * 1024];
            loop {
                match stderr.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(n) => so_far.append(&chunk[..n]),
                    Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            so_far.close()
        });
        Host {
            child: Some(child),
            stdin: Some(stdin_sender),
            stdout: stdout_receiver,
            stderr: Some(stderr),
            stderr_so_far,
            buffer: Vec::new(),
            stdout_closed: false,
            framing: speaks,
            next_id: 0,
            inbox: Vec::new(),
            raw: None,
            patience: WATCHDOG,
        }
    }

    /// The same host, failing a test only after `patience` without progress.
    pub fn patient(mut self, patience: Duration) -> Host {
        self.patience = patience;
        self
    }

    /// Spawns and completes `initialize` with the given capabilities and config.
    pub fn initialized(framing: Framing, capabilities: Value, config: Value) -> Host {
        let mut host = Host::spawn(framing);
        host.initialize(capabilities, config);
        host
    }

    /// Completes `initialize`, asserting it succeeded; returns the result.
    pub fn initialize(&mut self, capabilities: Value, config: Value) -> Value {
        let response = self.request(
            "initialize",
            json!({ "protocolVersion": "1", "capabilities": capabilities, "config": config }),
        );
        assert_eq!(response["result"]["protocolVersion"], "1", "{response}");
        response["result"].clone()
    }

    /// The framing this client speaks.
    pub fn framing(&self) -> Framing {
        self.framing
    }

    /// Writes raw bytes (queued; never blocks on a host that stopped reading).
    pub fn write_raw(&mut self, bytes: &[u8]) {
        if let Some(stdin) = &self.stdin {
            // A host that exited is noticed by the next read.
            let _ = stdin.send(bytes.to_vec());
        }
    }

    /// Writes `payload` as one frame in this client's framing, whatever its bytes.
    pub fn send_text(&mut self, payload: &str) {
        let framed = self.framing.frame(payload.as_bytes());
        self.write_raw(&framed);
    }

    /// Writes one message in this host's framing.
    pub fn send(&mut self, message: &Value) {
        self.send_text(&message.to_string());
    }

    /// Closes the host's stdin (EOF once queued writes are written).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Reads one message (None at EOF); fails the test after its patience.
    pub fn read(&mut self) -> Option<Value> {
        let patience = self.patience;
        match self.read_within(patience) {
            Next::Message(message) => Some(message),
            Next::Eof => None,
            Next::Silent => panic!(
                "watchdog: the host sent nothing for {patience:?} (unparsed output: {:?}; inbox: {:#?})",
                String::from_utf8_lossy(&self.buffer),
                self.inbox
            ),
        }
    }

    /// Reads one message, waiting at most `timeout`. Output in the wrong framing fails the
    /// test: replies must use the client's framing.
    pub fn read_within(&mut self, timeout: Duration) -> Next {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(message) = self.parse_buffered() {
                return Next::Message(message);
            }
            if self.stdout_closed {
                assert!(
                    self.buffer.is_empty(),
                    "stdout ended inside a frame: {:?}",
                    String::from_utf8_lossy(&self.buffer)
                );
                return Next::Eof;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stdout.recv_timeout(left) {
                Ok(chunk) => self.buffer.extend_from_slice(&chunk),
                Err(RecvTimeoutError::Disconnected) => self.stdout_closed = true,
                Err(RecvTimeoutError::Timeout) => return Next::Silent,
            }
        }
    }

    /// One complete frame from the buffer, if there is one.
    fn parse_buffered(&mut self) -> Option<Value> {
        let shown = || String::from_utf8_lossy(&self.buffer).into_owned();
        let (start, end) = match self.framing {
            Framing::Ndjson => {
                if let Some(&first) = self.buffer.first() {
                    assert!(
                        first == b'{' || first == b'[',
                        "expected an ndjson line, got {:?}",
                        shown()
                    );
                }
                let newline = self.buffer.iter().position(|&b| b == b'\n')?;
                (0, newline)
            }
            Framing::Lsp => {
                const PREFIX: &[u8] = b"Content-Length: ";
                let seen = self.buffer.len().min(PREFIX.len());
                assert_eq!(
                    self.buffer[..seen],
                    PREFIX[..seen],
                    "expected an LSP frame, got {:?}",
                    shown()
                );
                let header_end = self.buffer.windows(4).position(|w| w == b"\r\n\r\n")?;
                let length: usize = std::str::from_utf8(&self.buffer[PREFIX.len()..header_end])
                    .ok()
                    .and_then(|digits| digits.parse().ok())
                    .unwrap_or_else(|| panic!("bad header in {:?}", shown()));
                let start = header_end + 4;
                if self.buffer.len() < start + length {
                    return None;
                }
                (start, start + length)
            }
        };
        let message = parse(&self.buffer[start..end])
            .unwrap_or_else(|e| panic!("host wrote invalid JSON ({e}): {:?}", shown()));
        if let Some(raw) = &mut self.raw {
            raw.push(String::from_utf8_lossy(&self.buffer[start..end]).into_owned());
        }
        let consumed = match self.framing {
            Framing::Ndjson => end + 1,
            Framing::Lsp => end,
        };
        self.buffer.drain(..consumed);
        Some(message)
    }

    /// Sends a request with the next numeric id and returns its response; other messages
    /// go to `inbox`.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.start(method, params);
        self.response_to(&id)
    }

    /// Sends a request without waiting; returns its id for [`Host::response_to`].
    pub fn start(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = json!(self.next_id);
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        id
    }

    /// Sends a request and answers every host→client request that arrives before its
    /// response with `answer(request)`; returns the response. Notifications go to `inbox`.
    pub fn request_answering(
        &mut self,
        method: &str,
        params: Value,
        mut answer: impl FnMut(&Value) -> Value,
    ) -> Value {
        let id = self.start(method, params);
        loop {
            let message = self.read().expect("host closed stdout before answering");
            if message.get("method").is_none() && message["id"] == id {
                return message;
            }
            if message.get("method").is_some() && message.get("id").is_some() {
                let result = answer(&message);
                self.answer(&message, result);
            } else {
                self.inbox.push(message);
            }
        }
    }

    /// Removes and returns every inbox message with `method`, in arrival order.
    pub fn drain(&mut self, method: &str) -> Vec<Value> {
        let (taken, kept) = std::mem::take(&mut self.inbox)
            .into_iter()
            .partition(|m| m["method"] == method);
        self.inbox = kept;
        taken
    }

    /// Sends a request and returns the exact text of its response's `result` member, as
    /// the host wrote it (for byte-level comparisons).
    pub fn request_raw_result(&mut self, method: &str, params: Value) -> String {
        self.raw = Some(Vec::new());
        let id = self.start(method, params);
        let response = self.response_to(&id);
        let raw = self.raw.take().unwrap_or_default();
        let text = raw
            .iter()
            .find(|text| serde_json::from_str::<Value>(text).ok().as_ref() == Some(&response))
            .unwrap_or_else(|| panic!("no raw text for {response}"));
        let members: std::collections::HashMap<String, Box<serde_json::value::RawValue>> =
            serde_json::from_str(text).unwrap();
        members
            .get("result")
            .unwrap_or_else(|| panic!("not a result: {text}"))
            .get()
            .to_string()
    }

    /// Reads until the response with `id` arrives (taking it from `inbox` first).
    pub fn response_to(&mut self, id: &Value) -> Value {
        let is_it = |message: &Value| message.get("method").is_none() && &message["id"] == id;
        if let Some(index) = self.inbox.iter().position(is_it) {
            return self.inbox.remove(index);
        }
        loop {
            let message = self.read().expect("host closed stdout before answering");
            if is_it(&message) {
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

    /// Every message until stdout closes (the inbox first).
    pub fn read_to_end(&mut self) -> Vec<Value> {
        let mut messages = std::mem::take(&mut self.inbox);
        while let Some(message) = self.read() {
            messages.push(message);
        }
        messages
    }

    /// The host's process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    /// SIGKILLs the host (a crash: nothing of it runs any more) and reaps it.
    pub fn crash(mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        self.stdin = None;
    }

    /// Whether the process is still running (never blocks).
    pub fn is_running(&mut self) -> bool {
        let child = self.child.as_mut().unwrap();
        child.try_wait().unwrap().is_none()
    }

    /// Peak resident memory of the host so far (`VmHWM`, KiB).
    pub fn peak_memory_kib(&self) -> u64 {
        self.status_kib("VmHWM:")
    }

    /// Resident memory of the host now (`VmRSS`, KiB).
    pub fn resident_memory_kib(&self) -> u64 {
        self.status_kib("VmRSS:")
    }

    /// A `kB` field of the host's `/proc/<pid>/status`.
    fn status_kib(&self, field: &str) -> u64 {
        let pid = self.child.as_ref().unwrap().id();
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        status
            .lines()
            .find_map(|line| line.strip_prefix(field))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }

    /// Waits until the host has written `needle` to stderr at least `count` times (a log line
    /// of an event the test must not race, e.g. with `RUST_LOG` at `debug`), failing the
    /// test when that does not happen within the patience or before stderr closes.
    pub fn wait_for_stderr(&self, needle: &str, count: usize) {
        let patience = self.patience;
        if let Err(stderr) = self.stderr_so_far.wait_for(needle, count, patience) {
            panic!("{needle:?} not written {count} times to stderr within {patience:?}:\n{stderr}");
        }
    }

    /// How the host ended, once its stdout closed unexpectedly: its exit status and all it
    /// wrote to stderr, for the failure message.
    pub fn ending(&mut self) -> String {
        let status = self.child.as_mut().map(|child| child.wait());
        let stderr = self
            .stderr
            .take()
            .map(|reader| reader.join().unwrap_or_default())
            .unwrap_or_default();
        format!("{status:?}; stderr:\n{stderr}")
    }

    /// Closes stdin and returns the exit code.
    pub fn finish(self) -> i32 {
        self.finish_all().code.unwrap_or(-1)
    }

    /// Closes stdin, then collects the unread output and the exit status.
    pub fn finish_all(mut self) -> Finished {
        self.close_stdin();
        self.wait_exit()
    }

    /// Waits for the process to exit by itself (stdin stays open until it has), collecting
    /// the unread output.
    pub fn wait_exit(mut self) -> Finished {
        let patience = self.patience;
        let deadline = Instant::now() + patience;
        while !self.stdout_closed {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stdout.recv_timeout(left) {
                Ok(chunk) => self.buffer.extend_from_slice(&chunk),
                Err(RecvTimeoutError::Disconnected) => self.stdout_closed = true,
                Err(RecvTimeoutError::Timeout) => {
                    panic!("watchdog: the host did not close stdout within {patience:?}")
                }
            }
        }
        let mut child = self.child.take().unwrap();
        let pid = child.id();
        let (exited, status) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = exited.send(child.wait());
        });
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(status) = status.recv_timeout(left) else {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("watchdog: the host did not exit within {patience:?}");
        };
        self.stdin = None;
        let stderr = self.stderr.take().unwrap().join().unwrap();
        Finished {
            code: status.unwrap().code(),
            stdout: std::mem::take(&mut self.buffer),
            stderr,
        }
    }
}

/// The host's stderr as read so far, and whether it closed.
#[derive(Default)]
struct StderrSoFar {
    state: Mutex<(Vec<u8>, bool)>,
    grew: Condvar,
}

impl StderrSoFar {
    fn append(&self, bytes: &[u8]) {
        self.state.lock().unwrap().0.extend_from_slice(bytes);
        self.grew.notify_all();
    }

    /// Marks stderr closed; returns all of it.
    fn close(&self) -> String {
        let mut state = self.state.lock().unwrap();
        state.1 = true;
        self.grew.notify_all();
        String::from_utf8_lossy(&state.0).into_owned()
    }

    /// `Err` with the text so far when `needle` did not occur `count` times in time.
    fn wait_for(&self, needle: &str, count: usize, patience: Duration) -> Result<(), String> {
        let deadline = Instant::now() + patience;
        let mut state = self.state.lock().unwrap();
        loop {
            let text = String::from_utf8_lossy(&state.0);
            if text.matches(needle).count() >= count {
                return Ok(());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if state.1 || left.is_zero() {
                return Err(text.into_owned());
            }
            state = self.grew.wait_timeout(state, left).unwrap().0;
        }
    }
}

impl Drop for Host {
    /// A test that failed midway must not leave a host running.
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Writes `contents` to a fresh file named `name` and returns its path.
pub fn temp_file(name: &str, contents: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "dsh-tools-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

/// An error response with id null.
pub fn anonymous_error(code: i64, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": null, "error": { "code": code, "message": message } })
}

/// An error response.
pub fn error_response(id: Value, code: i64, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
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

/// `(error.code, error.data.code, error.message)` of a response that must be an error.
pub fn error_of(response: &Value) -> (i64, String, String) {
    let error = &response["error"];
    let code = error["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("expected an error: {response}"));
    let data_code = error["data"]["code"].as_str().unwrap_or_default();
    let message = error["message"].as_str().unwrap_or_default();
    (code, data_code.to_string(), message.to_string())
}

/// The `registration` a successful register-like response carries.
pub fn registration_of(response: &Value) -> String {
    response["result"]["registration"]
        .as_str()
        .unwrap_or_else(|| panic!("expected a registration: {response}"))
        .to_string()
}

/// Parses one message without serde_json's 128-level limit (tests send deep values; run
/// those on a big stack, see `with_big_stack`).
fn parse(bytes: &[u8]) -> serde_json::Result<Value> {
    use serde::Deserialize;
    let mut json = serde_json::Deserializer::from_slice(bytes);
    json.disable_recursion_limit();
    let value = Value::deserialize(&mut json)?;
    json.end()?;
    Ok(value)
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

/// `Deref`/`DerefMut` from a suite's own client (whose field `wire` holds the shared
/// [`Host`], named by `$shared`) to the shared one, so a suite adds only its own helpers.
macro_rules! wraps_host {
    ($client:ty => $shared:ty) => {
        impl std::ops::Deref for $client {
            type Target = $shared;

            fn deref(&self) -> &$shared {
                &self.wire
            }
        }

        impl std::ops::DerefMut for $client {
            fn deref_mut(&mut self) -> &mut $shared {
                &mut self.wire
            }
        }
    };
}
pub(crate) use wraps_host;
