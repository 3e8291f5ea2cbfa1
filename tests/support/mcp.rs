//! Shared pieces of the MCP tests: where `.ci/setup` installed the real servers, server
//! configs, an in-process host, and the process-tree helpers of the no-orphan tests.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use dsh_tools::ToolRuntime;
use dsh_tools::code_mode::CodeMode;
use dsh_tools::mcp::McpHost;
use dsh_tools::tool::{ToolExecutionInput, ToolExecutionResult};
use dsh_tools_protocol::{HostConfig, McpServerState, McpServerStatus, PresentationMode};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Generous bound on anything a test waits for (servers start in well under a second).
pub const PATIENCE: Duration = Duration::from_secs(60);

/// `tests/mcp-servers/<rest>`, asserting `.ci/setup` installed it.
pub fn installed(rest: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp-servers")
        .join(rest);
    assert!(
        path.exists(),
        "{} is missing: run `bash .ci/setup` first",
        path.display()
    );
    path.to_string_lossy().into_owned()
}

/// `@modelcontextprotocol/server-everything` (npm) over stdio.
pub fn everything() -> Value {
    json!({ "command": "node", "args": [installed("node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "stdio"] })
}

/// `@modelcontextprotocol/server-filesystem` (npm) confined to `root`.
pub fn filesystem(root: &str) -> Value {
    json!({ "command": "node", "args": [installed("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"), root] })
}

/// `mcp-server-time` (PyPI).
pub fn time() -> Value {
    json!({ "command": installed(".venv/bin/mcp-server-time"), "args": ["--local-timezone", "UTC"] })
}

/// The fixture server with extra flags.
pub fn fixture(flags: &[&str]) -> Value {
    let mut args = vec![installed("fixture_server.py")];
    args.extend(flags.iter().map(|f| f.to_string()));
    json!({ "command": installed(".venv/bin/python"), "args": args })
}

/// A fresh scratch directory under the target dir.
pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "{name}-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A runtime (in `mode`) with `servers` ingested; every first attempt has settled.
pub struct Host {
    pub runtime: Arc<ToolRuntime>,
    pub code: Arc<CodeMode>,
    pub mcp: McpHost,
}

impl Host {
    pub async fn start(mode: PresentationMode, servers: Value) -> Host {
        let config: HostConfig = dsh_tools::config::parse(json!({
            "tools": { "mode": mode },
            "mcpServers": servers
        }))
        .unwrap();
        let runtime = ToolRuntime::new(&config);
        let code = CodeMode::install(&runtime, config.code_runtime.clone()).unwrap();
        let mcp = McpHost::new();
        mcp.start(runtime.registry(), &config.mcp_servers, &config.sandbox);
        tokio::time::timeout(PATIENCE, mcp.ready()).await.unwrap();
        Host { runtime, code, mcp }
    }

    /// Runs one top-level call.
    pub async fn call(&self, name: &str, arguments: Value) -> ToolExecutionResult {
        self.runtime
            .execute(ToolExecutionInput::new("call", name, arguments))
            .await
    }

    /// Runs a Code Mode program.
    pub async fn run(&self, code: &str) -> ToolExecutionResult {
        self.call(
            "run_code",
            json!({ "code": code, "description": "test program" }),
        )
        .await
    }

    /// The status of `server`.
    pub fn status(&self, server: &str) -> McpServerStatus {
        self.mcp
            .status()
            .into_iter()
            .find(|s| s.server == server)
            .unwrap()
    }

    /// Waits until `server`'s status satisfies `condition`.
    pub async fn wait_for(&self, server: &str, condition: impl Fn(&McpServerStatus) -> bool) {
        let waited = tokio::time::timeout(
            PATIENCE,
            self.mcp.wait_for(|all| {
                all.iter()
                    .find(|s| s.server == server)
                    .is_some_and(&condition)
            }),
        )
        .await;
        assert!(waited.is_ok(), "gave up waiting: {:?}", self.status(server));
    }

    /// Waits until `server` runs.
    pub async fn running(&self, server: &str) {
        self.wait_for(server, |s| s.state == McpServerState::Running)
            .await;
    }

    /// Names of registered tools of `server`, from the registry itself.
    pub fn registered(&self, server: &str) -> Vec<String> {
        let prefix = format!("mcp__{server}__");
        self.runtime
            .registry()
            .visible(None)
            .iter()
            .map(|t| t.definition.name.to_string())
            .filter(|n| n.starts_with(&prefix))
            .collect()
    }
}

/// The value of a success, or the message of a failure, for whole-value assertions.
pub fn outcome(result: &ToolExecutionResult) -> Result<Value, String> {
    match result.value() {
        Some(value) => Ok(value.clone()),
        None => Err(result.error().unwrap().message.clone()),
    }
}

/// Every live process (pid → (parent pid, command line)).
pub fn processes() -> BTreeMap<u32, (u32, String)> {
    let mut table = BTreeMap::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`; comm may contain anything, so split after the last ')'.
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
            continue;
        };
        let mut fields = after.split(' ');
        let state = fields.next().unwrap_or("");
        let parent = fields.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        let command = std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|raw| String::from_utf8_lossy(&raw).replace('\0', " "))
            .unwrap_or_default();
        table.insert(pid, (parent, format!("[{state}] {command}")));
    }
    table
}

/// Every descendant of `root` (children, grandchildren, ...), with its command line.
pub fn descendants(root: u32) -> Vec<(u32, String)> {
    let table = processes();
    let mut found = Vec::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for (pid, (ppid, command)) in &table {
            if *ppid == parent {
                found.push((*pid, command.clone()));
                frontier.push(*pid);
            }
        }
    }
    found
}

/// Which of `pids` still exist (zombies included: an unreaped child is a leak too).
pub fn still_alive(pids: &[(u32, String)]) -> Vec<(u32, String)> {
    let table = processes();
    pids.iter()
        .filter(|(pid, _)| table.contains_key(pid))
        .cloned()
        .collect()
}

/// The pid of this process's descendant whose command line contains `needle`.
pub fn descendant_running(needle: &str) -> u32 {
    descendants(std::process::id())
        .into_iter()
        .find(|(_, command)| command.contains(needle))
        .map(|(pid, _)| pid)
        .unwrap_or_else(|| panic!("no descendant runs {needle}"))
}

/// This process's descendants whose environment holds `entry` (`KEY=value`).
pub fn descendants_with_env(entry: &str) -> Vec<(u32, String)> {
    descendants(std::process::id())
        .into_iter()
        .filter(|(pid, _)| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .map(|raw| raw.split(|b| *b == 0).any(|e| e == entry.as_bytes()))
                .unwrap_or(false)
        })
        .collect()
}

/// The pid of the one descendant whose environment holds `entry`.
pub fn descendant_with_env(entry: &str) -> u32 {
    let found = descendants_with_env(entry);
    assert_eq!(found.len(), 1, "{entry}: {found:?}");
    found[0].0
}

/// A wrapper (installed innermost) that announces every dispatch, so a test can abort a
/// call it knows has reached its body.
pub struct DispatchProbe(pub Arc<tokio::sync::Notify>);

impl dsh_tools::pipeline::hooks::ExecuteWrapper for DispatchProbe {
    fn wrap(
        &self,
        dispatch: dsh_tools::pipeline::hooks::Dispatch,
        next: dsh_tools::pipeline::Next,
    ) -> futures::future::BoxFuture<'static, dsh_tools::pipeline::hooks::DispatchOutcome> {
        self.0.notify_one();
        next.run(dispatch)
    }
}

impl Host {
    /// Installs a [`DispatchProbe`] and returns what it notifies.
    pub fn probe_dispatches(&self) -> Arc<tokio::sync::Notify> {
        let notify = Arc::new(tokio::sync::Notify::new());
        self.runtime
            .add_wrapper(i32::MAX, None, Arc::new(DispatchProbe(notify.clone())));
        notify
    }
}

/// The real `dsh-tools` binary speaking ndjson on piped stdio, for wire and lifecycle tests.
pub struct Binary {
    pub child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    next_id: u64,
    /// Notifications seen while waiting for responses.
    pub inbox: Vec<Value>,
}

/// Writes `config` (a `HostConfig` JSON) to a scratch file and returns its path.
pub fn config_file(name: &str, config: &Value) -> PathBuf {
    let path = scratch(name).join("config.json");
    std::fs::write(&path, config.to_string()).unwrap();
    path
}

/// Runs the official Python MCP client (`tests/mcp-servers/client_check.py`) against
/// `dsh-tools mcp --mode <mode> --config <config>` with `request` (its `calls`, and
/// `resources` to read) and returns its report.
pub fn python_client(name: &str, mode: &str, config: &Value, request: Value) -> Value {
    let config = config_file(name, config);
    let mut spec = json!({
        "command": env!("CARGO_BIN_EXE_dsh-tools"),
        "args": ["mcp", "--mode", mode, "--config", config.to_str().unwrap()],
    });
    for (key, value) in request.as_object().unwrap() {
        spec[key] = value.clone();
    }
    super::http::python_script("client_check.py", &spec)
}

impl Binary {
    /// Spawns `dsh-tools <args>` with stderr discarded.
    pub fn spawn(args: &[&str]) -> Binary {
        Binary::spawn_with_env(args, &[])
    }

    /// [`Binary::spawn`] with `env` added to the host's environment.
    pub fn spawn_with_env(args: &[&str], env: &[(&str, &str)]) -> Binary {
        Binary::spawn_command(
            std::process::Command::new(env!("CARGO_BIN_EXE_dsh-tools")),
            args,
            env,
        )
    }

    /// `command` (a `dsh-tools` binary, set up as the caller likes) run like [`Binary::spawn`].
    pub fn spawn_command(
        command: std::process::Command,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Binary {
        Binary::spawn_command_with(command, args, env, std::process::Stdio::null())
    }

    /// [`Binary::spawn_with_env`] with stderr piped, for the test to read (`child.stderr`).
    pub fn spawn_reading_stderr(args: &[&str], env: &[(&str, &str)]) -> Binary {
        let command = std::process::Command::new(env!("CARGO_BIN_EXE_dsh-tools"));
        Binary::spawn_command_with(command, args, env, std::process::Stdio::piped())
    }

    fn spawn_command_with(
        mut command: std::process::Command,
        args: &[&str],
        env: &[(&str, &str)],
        stderr: std::process::Stdio,
    ) -> Binary {
        use std::process::Stdio;
        command
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr);
        // A freshly copied binary is "busy" while another test's fork, not yet exec'd,
        // still holds the copy's write descriptor: that ends within moments.
        let mut attempts = 0;
        let mut child = loop {
            match command.spawn() {
                Err(error) if error.raw_os_error() == Some(26) && attempts < 200 => {
                    attempts += 1;
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                spawned => break spawned.unwrap(),
            }
        };
        let stdin = child.stdin.take();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        Binary {
            child,
            stdin,
            stdout,
            next_id: 0,
            inbox: Vec::new(),
        }
    }

    /// `dsh-tools serve --framing ndjson`, initialized with `config`.
    pub fn serve(config: Value) -> Binary {
        Binary::serve_with_env(config, &[])
    }

    /// [`Binary::serve`] with `env` added to the host's environment.
    pub fn serve_with_env(config: Value, env: &[(&str, &str)]) -> Binary {
        Binary::spawn_with_env(&["serve", "--framing", "ndjson"], env).initialized(config)
    }

    /// Sends `initialize` with `config` and checks the answer.
    pub fn initialized(mut self, config: Value) -> Binary {
        let host = &mut self;
        let answer = host.request(
            "initialize",
            json!({ "protocolVersion": "1", "config": config }),
        );
        assert_eq!(answer["result"]["protocolVersion"], "1", "{answer}");
        self
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn send(&mut self, message: &Value) {
        use std::io::Write;
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(format!("{message}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    fn read(&mut self) -> Option<Value> {
        use std::io::BufRead;
        let mut line = String::new();
        (self.stdout.read_line(&mut line).unwrap() > 0)
            .then(|| serde_json::from_str(&line).unwrap())
    }

    /// The first notification `method`, from `inbox` (taken out) or read next (what comes
    /// before it goes to `inbox`).
    pub fn notified(&mut self, method: &str) -> Value {
        if let Some(index) = self.inbox.iter().position(|m| m["method"] == method) {
            return self.inbox.remove(index);
        }
        loop {
            let message = self.read().expect("host closed stdout before notifying");
            if message["method"] == method && message.get("id").is_none() {
                return message;
            }
            self.inbox.push(message);
        }
    }

    /// Sends a request and returns its response; other messages go to `inbox`.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = json!(self.next_id);
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let message = self.read().expect("host closed stdout before answering");
            if message.get("method").is_none() && message["id"] == id {
                return message;
            }
            self.inbox.push(message);
        }
    }

    /// [`request`](Self::request), answering each request the host makes meanwhile with
    /// `answer`'s result; returns the response and those requests.
    pub fn request_answering(
        &mut self,
        method: &str,
        params: Value,
        mut answer: impl FnMut(&Value) -> Value,
    ) -> (Value, Vec<Value>) {
        self.next_id += 1;
        let id = json!(self.next_id);
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        let mut asked = Vec::new();
        loop {
            let message = self.read().expect("host closed stdout before answering");
            match (message.get("method"), message.get("id")) {
                (None, _) if message["id"] == id => return (message, asked),
                (Some(_), Some(request_id)) => {
                    let result = answer(&message);
                    let reply = json!({ "jsonrpc": "2.0", "id": request_id, "result": result });
                    self.send(&reply);
                    asked.push(message);
                }
                _ => self.inbox.push(message),
            }
        }
    }

    /// Polls `mcp/status` until `condition` holds (servers start in the background).
    pub fn wait_for_status(
        &mut self,
        condition: impl Fn(&[McpServerStatus]) -> bool,
    ) -> Vec<McpServerStatus> {
        let deadline = std::time::Instant::now() + PATIENCE;
        loop {
            let answer = self.request("mcp/status", json!({}));
            let status: Vec<McpServerStatus> =
                serde_json::from_value(answer["result"].clone()).unwrap();
            if condition(&status) {
                return status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "gave up waiting: {status:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Opens agent `py` in Python Code Mode and runs `return 1` in it, which leaves a warm
    /// interpreter behind (the pool refills after each run).
    pub fn warm_a_python_interpreter(&mut self) {
        self.request("agents/open", json!({ "agent": "py" }));
        self.request(
            "tools/presentAs",
            json!({ "agent": "py", "mode": "code", "language": "python" }),
        );
        let ran = self.request(
            "tools/execute",
            json!({ "callId": "p", "name": "run_code", "agent": "py",
                    "arguments": { "code": "return 1", "description": "warm up" } }),
        );
        assert_eq!(ran["result"]["isError"], false, "{ran}");
    }

    /// Closes stdin (EOF).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Waits (bounded) for the process to exit and returns its exit code.
    pub fn wait(&mut self) -> Option<i32> {
        let deadline = std::time::Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the host did not exit"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Binary {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether every server is running.
pub fn all_running(status: &[McpServerStatus]) -> bool {
    status.iter().all(|s| s.state == McpServerState::Running)
}

/// `tests/mcp-servers/structured_server.py`: `forecast`, structuredContent without an
/// outputSchema.
pub fn structured() -> Value {
    json!({ "command": installed(".venv/bin/python"), "args": [installed("structured_server.py")] })
}

/// `tests/mcp-servers/hostile_server.py` (breaks its transport on request) with `flags`.
pub fn hostile(flags: &[&str]) -> Value {
    let mut args = vec![installed("hostile_server.py")];
    args.extend(flags.iter().map(|f| f.to_string()));
    json!({ "command": installed(".venv/bin/python"), "args": args })
}

/// SIGKILLs a process unless dropped within its deadline, so that a test of a call that
/// must not hang fails (the host's stdout closes) instead of hanging.
pub struct Watchdog(Option<std::sync::mpsc::Sender<()>>);

impl Watchdog {
    /// Arms it for `pid`.
    pub fn arm(pid: u32, after: Duration) -> Watchdog {
        let (disarm, disarmed) = std::sync::mpsc::channel::<()>();
        std::thread::spawn(move || {
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = disarmed.recv_timeout(after) {
                let pid = nix::unistd::Pid::from_raw(pid as i32);
                let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
            }
        });
        Watchdog(Some(disarm))
    }
}
