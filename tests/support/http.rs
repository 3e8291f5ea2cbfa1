//! Streamable HTTP pieces of the MCP tests: `@modelcontextprotocol/server-everything` in
//! its `streamableHttp` mode on a free loopback port, and a tiny loopback proxy in front of
//! it that requires a bearer token (401 otherwise), can answer HTML instead, and can be
//! pointed at a restarted server.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use super::mcp::{PATIENCE, installed};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A port nothing listens on right now (bound, then released).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `server-everything` over Streamable HTTP; killed on drop.
pub struct Everything {
    child: Child,
    /// Its port on loopback.
    pub port: u16,
}

impl Everything {
    /// Starts it on a free port and returns once it listens.
    pub fn start() -> Everything {
        let port = free_port();
        let mut child = Command::new("node")
            .arg(installed(
                "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
            ))
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        loop {
            line.clear();
            assert!(
                stderr.read_line(&mut line).unwrap() > 0,
                "server-everything exited before listening"
            );
            if line.contains("listening on port") {
                break;
            }
        }
        // Keep draining its stderr so it never blocks on a full pipe.
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        Everything { child, port }
    }

    /// Its endpoint.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// Kills it (SIGKILL) and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Everything {
    fn drop(&mut self) {
        self.kill();
    }
}

/// What the proxy does with an authorized request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Forward it to the upstream port.
    Forward,
    /// Answer an HTML page with status 200 (a login page, a misconfigured gateway).
    Html,
}

/// A loopback proxy requiring `Authorization: Bearer <token>`; every request gets its own
/// upstream connection (`Connection: close`), so each one is checked.
pub struct Proxy {
    /// Its port on loopback.
    pub port: u16,
    upstream: Arc<AtomicU16>,
    mode: Arc<Mutex<Mode>>,
    /// Requests forwarded (or answered) with the right token.
    pub authorized: Arc<AtomicUsize>,
    /// Requests refused with 401.
    pub refused: Arc<AtomicUsize>,
    expire: Arc<AtomicBool>,
    /// Requests answered 404 by [`Proxy::expire_next_session`].
    pub expired: Arc<AtomicUsize>,
    /// Forwarded requests whose body holds `notifications/cancelled`.
    pub cancellations: Arc<AtomicUsize>,
}

impl Proxy {
    /// Listens on a free loopback port, forwarding to `upstream` on loopback.
    pub fn start(token: &str, upstream: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let proxy = Proxy {
            port: listener.local_addr().unwrap().port(),
            upstream: Arc::new(AtomicU16::new(upstream)),
            mode: Arc::new(Mutex::new(Mode::Forward)),
            authorized: Arc::default(),
            refused: Arc::default(),
            expire: Arc::default(),
            expired: Arc::default(),
            cancellations: Arc::default(),
        };
        let expected = format!("bearer {}", token.to_ascii_lowercase());
        let (upstream, mode) = (proxy.upstream.clone(), proxy.mode.clone());
        let counters = Counters {
            authorized: proxy.authorized.clone(),
            refused: proxy.refused.clone(),
            expire: proxy.expire.clone(),
            expired: proxy.expired.clone(),
            cancellations: proxy.cancellations.clone(),
        };
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let expected = expected.clone();
                let port = upstream.load(Ordering::SeqCst);
                let mode = *mode.lock().unwrap();
                let counters = counters.clone();
                std::thread::spawn(move || {
                    let _ = serve(client, &expected, port, mode, &counters);
                });
            }
        });
        proxy
    }

    /// Its endpoint.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// Points it at another upstream port.
    pub fn set_upstream(&self, port: u16) {
        self.upstream.store(port, Ordering::SeqCst);
    }

    /// Answers the next request of an established session 404 (the server forgot it).
    pub fn expire_next_session(&self) {
        self.expire.store(true, Ordering::SeqCst);
    }

    /// Changes what it does with authorized requests.
    pub fn set_mode(&self, mode: Mode) {
        *self.mode.lock().unwrap() = mode;
    }
}

/// The proxy's shared counters and switches.
#[derive(Clone)]
struct Counters {
    authorized: Arc<AtomicUsize>,
    refused: Arc<AtomicUsize>,
    expire: Arc<AtomicBool>,
    expired: Arc<AtomicUsize>,
    cancellations: Arc<AtomicUsize>,
}

/// One client connection: its first request head is checked, rewritten to close the
/// upstream connection after the response, and piped both ways.
fn serve(
    mut client: TcpStream,
    expected: &str,
    port: u16,
    mode: Mode,
    counters: &Counters,
) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if client.read(&mut byte)? == 0 {
            return Ok(());
        }
        head.push(byte[0]);
    }
    let text = String::from_utf8_lossy(&head).into_owned();
    let length: u64 = text
        .lines()
        .find_map(|line| {
            let line = line.to_ascii_lowercase();
            line.strip_prefix("content-length:")
                .and_then(|n| n.trim().parse().ok())
        })
        .unwrap_or(0);
    let allowed = text.lines().any(|line| {
        line.to_ascii_lowercase()
            .strip_prefix("authorization:")
            .is_some_and(|value| value.trim() == expected)
    });
    let in_session = text.starts_with("POST")
        && text
            .lines()
            .any(|line| line.to_ascii_lowercase().starts_with("mcp-session-id:"));
    let expire = allowed && in_session && counters.expire.swap(false, Ordering::SeqCst);
    if !allowed || mode == Mode::Html || expire {
        // Read the body first: closing on unread data would reset the connection.
        std::io::copy(&mut (&mut client).take(length), &mut std::io::sink())?;
    }
    if expire {
        counters.expired.fetch_add(1, Ordering::SeqCst);
        client.write_all(
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        )?;
        return Ok(());
    }
    if !allowed {
        counters.refused.fetch_add(1, Ordering::SeqCst);
        client.write_all(
            b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        )?;
        return Ok(());
    }
    counters.authorized.fetch_add(1, Ordering::SeqCst);
    if mode == Mode::Html {
        let page = "<!doctype html><html><body>Please sign in</body></html>";
        let answer = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
            page.len()
        );
        client.write_all(answer.as_bytes())?;
        return Ok(());
    }
    let mut rewritten: Vec<String> = text
        .trim_end()
        .lines()
        .filter(|line| !line.to_ascii_lowercase().starts_with("connection:"))
        .map(str::to_owned)
        .collect();
    rewritten.push("Connection: close".to_owned());
    let mut upstream = match TcpStream::connect(("127.0.0.1", port)) {
        Ok(upstream) => upstream,
        Err(_) => {
            client.write_all(
                b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            )?;
            return Ok(());
        }
    };
    upstream.write_all(format!("{}\r\n\r\n", rewritten.join("\r\n")).as_bytes())?;
    let (mut from_client, mut to_upstream) = (client.try_clone()?, upstream.try_clone()?);
    let cancellations = counters.cancellations.clone();
    std::thread::spawn(move || {
        // The request body, scanned for cancellations on the way (a client sends each
        // notification in a POST of its own).
        let mut body = Vec::new();
        let mut chunk = [0u8; 8192];
        while let Ok(read) = from_client.read(&mut chunk) {
            if read == 0 || to_upstream.write_all(&chunk[..read]).is_err() {
                break;
            }
            body.extend_from_slice(&chunk[..read]);
        }
        if String::from_utf8_lossy(&body).contains("notifications/cancelled") {
            cancellations.fetch_add(1, Ordering::SeqCst);
        }
        let _ = to_upstream.shutdown(Shutdown::Write);
    });
    let _ = std::io::copy(&mut upstream, &mut client);
    let _ = client.shutdown(Shutdown::Both);
    Ok(())
}

/// Polls `check` until it returns `Some`, within the tests' patience.
pub fn eventually<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = std::time::Instant::now() + PATIENCE;
    loop {
        if let Some(found) = check() {
            return found;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "gave up waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// `dsh-tools mcp --http 127.0.0.1:0` with a config, its stderr read line by line.
pub struct HttpHost {
    child: Child,
    /// Its port on loopback.
    pub port: u16,
    /// The bearer token it printed.
    pub token: String,
    lines: std::sync::mpsc::Receiver<String>,
    /// Every stderr line read so far.
    pub seen: Vec<String>,
}

impl HttpHost {
    /// Starts it with `config` and `extra` arguments; returns once it listens.
    pub fn start(name: &str, config: &serde_json::Value, extra: &[&str]) -> HttpHost {
        HttpHost::start_with_env(name, config, extra, &[])
    }

    /// [`HttpHost::start`] with `env` added to the host's environment (logging at
    /// `debug`, so that a test sees every line a secret could leak into).
    pub fn start_with_env(
        name: &str,
        config: &serde_json::Value,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> HttpHost {
        let config = super::mcp::config_file(name, config);
        let mut child = Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
            .args(["mcp", "--http", "127.0.0.1:0", "--log-level", "debug"])
            .arg("--config")
            .arg(&config)
            .args(extra)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let (sender, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut host = HttpHost {
            child,
            port: 0,
            token: String::new(),
            lines,
            seen: Vec::new(),
        };
        // A token from `--http-token-env` is not printed: it is the variable's value.
        let from_env = extra
            .iter()
            .position(|arg| *arg == "--http-token-env")
            .and_then(|at| env.iter().find(|(name, _)| Some(name) == extra.get(at + 1)));
        host.token = match from_env {
            Some((_, token)) => (*token).to_owned(),
            None => {
                let token_line = host.wait_for_line("dsh-tools mcp: bearer token ");
                token_line.rsplit(' ').next().unwrap().to_owned()
            }
        };
        let listening = host.wait_for_line("dsh-tools mcp: listening on http://127.0.0.1:");
        let port = listening.rsplit(':').next().unwrap();
        host.port = port.trim_end_matches("/mcp").parse().unwrap();
        host
    }

    /// Its endpoint.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// The first stderr line (seen before or arriving within the patience) containing
    /// `needle`.
    pub fn wait_for_line(&mut self, needle: &str) -> String {
        if let Some(line) = self.seen.iter().find(|line| line.contains(needle)) {
            return line.clone();
        }
        let deadline = std::time::Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no stderr line with {needle:?}: {:?}", self.seen));
            self.seen.push(line.clone());
            if line.contains(needle) {
                return line;
            }
        }
    }

    /// Runs `tests/mcp-servers/http_client_check.py` with `spec` (its url and token added).
    pub fn python(&self, spec: serde_json::Value) -> serde_json::Value {
        self.python_script("http_client_check.py", spec)
    }

    /// Runs the Python client script `tests/mcp-servers/<script>` with `spec` (its url and
    /// token added) and returns the JSON it printed.
    pub fn python_script(&self, script: &str, mut spec: serde_json::Value) -> serde_json::Value {
        spec["url"] = self.url().into();
        spec["token"] = self.token.clone().into();
        python_script(script, &spec)
    }

    /// One raw HTTP/1.1 POST to `path` with `headers`; (status, response head and body).
    pub fn post(&self, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        let mut request = format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
            self.port,
            body.len()
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(body);
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        let status = answer
            .split(' ')
            .nth(1)
            .and_then(|code| code.parse().ok())
            .unwrap_or(0);
        (status, answer)
    }

    /// Sends SIGTERM and returns its exit code once it exited (within the patience).
    pub fn terminate(&mut self) -> Option<i32> {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
        eventually("the host to exit", || self.child.try_wait().unwrap()).code()
    }

    /// `Authorization: Bearer <its token>`.
    pub fn bearer(&self) -> String {
        format!("Bearer {}", self.token)
    }
}

impl Drop for HttpHost {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the Python client script `tests/mcp-servers/<script>` with `spec` and returns the
/// JSON it printed.
pub fn python_script(script: &str, spec: &serde_json::Value) -> serde_json::Value {
    let output = Command::new(installed(".venv/bin/python"))
        .arg(installed(script))
        .arg(spec.to_string())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "client failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// An MCP `initialize` request body.
pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// A blocking connection to `port` on loopback from the source address `source` (any of
/// 127.0.0.0/8, so that one test can be many peers).
pub fn connect_from(source: &str, port: u16) -> TcpStream {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .unwrap();
    let stream = runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind(format!("{source}:0").parse().unwrap()).unwrap();
        socket.connect(([127, 0, 0, 1], port).into()).await.unwrap()
    });
    let stream = stream.into_std().unwrap();
    stream.set_nonblocking(false).unwrap();
    stream
}

/// Waits (at most `within`) for the server to close `stream`: `Some(what it sent first,
/// how long it took)`, or `None` if it was still open at the end.
pub fn closed_within(
    stream: &mut TcpStream,
    within: std::time::Duration,
) -> Option<(String, std::time::Duration)> {
    let started = std::time::Instant::now();
    let mut seen = Vec::new();
    let mut chunk = [0u8; 1024];
    loop {
        let left = within.saturating_sub(started.elapsed());
        if left.is_zero() {
            return None;
        }
        stream.set_read_timeout(Some(left)).unwrap();
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(read) => seen.extend_from_slice(&chunk[..read]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(_) => return None,
        }
    }
    Some((
        String::from_utf8_lossy(&seen).into_owned(),
        started.elapsed(),
    ))
}

/// One keep-alive HTTP/1.1 POST to `path` on an open `stream` (with `Authorization:
/// <authorization>` when given) and its status, the response read to its `Content-Length`.
pub fn post_on(stream: &mut TcpStream, path: &str, authorization: Option<&str>) -> u16 {
    let auth = authorization
        .map(|value| format!("Authorization: {value}\r\n"))
        .unwrap_or_default();
    let request =
        format!("POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n{auth}\r\n{{}}");
    stream.write_all(request.as_bytes()).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(stream.read(&mut byte).unwrap(), 1, "closed mid-response");
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let length: u64 = head
        .lines()
        .find_map(|line| {
            line.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .and_then(|n| n.trim().parse().ok())
        })
        .unwrap_or(0);
    std::io::copy(&mut (&mut *stream).take(length), &mut std::io::sink()).unwrap();
    head.split(' ').nth(1).unwrap().parse().unwrap()
}

/// CPU time (user + system) `pid` has used so far.
pub fn cpu_time(pid: u32) -> std::time::Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    // After `pid (comm)`: state is field 3, utime 14 and stime 15 (1-based).
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // SAFETY: sysconf only reads a constant.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as u64;
    std::time::Duration::from_millis(ticks * 1000 / per_second)
}

impl HttpHost {
    /// Its pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// A one-page HTTP server on the host's 127.0.0.1 that answers every connection with `page`;
/// returns its port.
pub fn serve_page(page: &'static str) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut head = [0u8; 4096];
            let _ = stream.read(&mut head);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                page.len()
            );
        }
    });
    port
}
