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
        };
        let expected = format!("bearer {}", token.to_ascii_lowercase());
        let (upstream, mode) = (proxy.upstream.clone(), proxy.mode.clone());
        let counters = Counters {
            authorized: proxy.authorized.clone(),
            refused: proxy.refused.clone(),
            expire: proxy.expire.clone(),
            expired: proxy.expired.clone(),
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
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut from_client, &mut to_upstream);
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
