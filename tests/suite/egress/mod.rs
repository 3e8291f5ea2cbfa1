//! Integration tests of `egress`: a proxy served on 127.0.0.1 with local servers behind it
//! (reached through the test mapping), driven by hand-written clients and by `curl`:
//! allowed names reach the servers over HTTP, CONNECT and SOCKS5; denied, unlisted,
//! loopback-resolving, metadata and IP-literal hosts are refused with the documented message
//! and header and never reach a server; garbage gets a clean answer and the proxy serves on.

mod curl;
mod garbage;
mod reach;
mod refusals;

use dsh_tools::egress::{Egress, EgressPolicy, TestHosts};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// How long any one exchange may take before a test fails (not a timing assumption).
pub const PATIENCE: Duration = Duration::from_secs(30);

/// A proxy serving on 127.0.0.1 until dropped.
pub struct Proxy {
    pub addr: SocketAddr,
    pub egress: Arc<Egress>,
    stop: CancellationToken,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

pub async fn proxy(allow: &[&str], deny: &[&str], hosts: &str) -> Proxy {
    let owned = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let policy = EgressPolicy::parse(&owned(allow), &owned(deny), "sandbox.network").unwrap();
    let egress = Egress::with_test_hosts(policy, TestHosts::parse(hosts).unwrap());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = CancellationToken::new();
    tokio::spawn(Arc::clone(&egress).serve(listener, stop.clone()));
    Proxy { addr, egress, stop }
}

/// A server on 127.0.0.1 that counts its connections.
pub struct Server {
    pub port: u16,
    pub accepted: Arc<AtomicUsize>,
    stop: CancellationToken,
}

impl Server {
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn serve_with<F, Fut>(handle: F) -> Server
where
    F: Fn(TcpStream) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let stop = CancellationToken::new();
    let (count, token) = (Arc::clone(&accepted), stop.clone());
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = token.cancelled() => break,
                Ok((stream, _)) = listener.accept() => {
                    count.fetch_add(1, Ordering::SeqCst);
                    tokio::spawn(handle(stream));
                }
            }
        }
    });
    Server {
        port,
        accepted,
        stop,
    }
}

/// Echoes every byte back until the client closes.
pub async fn echo_server() -> Server {
    serve_with(|mut stream| async move {
        let (mut r, mut w) = stream.split();
        let _ = tokio::io::copy(&mut r, &mut w).await;
    })
    .await
}

/// An HTTP server that answers every request with its head as the body (so a test sees
/// what the proxy sent), plus `body-bytes: N` for a request body of `Content-Length` N.
pub async fn http_server() -> Server {
    serve_with(|mut stream| async move {
        let mut buf = Vec::new();
        let head_end = loop {
            if let Some(i) = find(&buf, b"\r\n\r\n") {
                break i + 4;
            }
            let mut chunk = [0u8; 4096];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
        let length: usize = head
            .lines()
            .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap_or(0)))
            .unwrap_or(0);
        let mut got = buf.len() - head_end;
        let mut chunk = vec![0u8; 65536];
        while got < length {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got += n,
            }
        }
        let body = format!("{head}body-bytes: {got}");
        let response = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.write_all(response.as_bytes()).await;
        let _ = stream.shutdown().await;
    })
    .await
}

pub fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Reads until the peer closes, within [`PATIENCE`].
pub async fn read_to_end<R: AsyncRead + Unpin>(stream: &mut R) -> Vec<u8> {
    let mut out = Vec::new();
    let read = tokio::time::timeout(PATIENCE, stream.read_to_end(&mut out)).await;
    assert!(read.is_ok(), "the peer did not close within {PATIENCE:?}");
    out
}

/// Sends `request` to the proxy and returns the whole answer, as text.
pub async fn exchange(proxy: &Proxy, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(proxy.addr).await.unwrap();
    stream.write_all(request).await.unwrap();
    String::from_utf8_lossy(&read_to_end(&mut stream).await).to_string()
}

/// Reads one response head (through the blank line) byte by byte, leaving the rest.
pub async fn read_head(stream: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let n = tokio::time::timeout(PATIENCE, stream.read(&mut byte))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(n, 1, "closed after {:?}", String::from_utf8_lossy(&head));
        head.push(byte[0]);
    }
    String::from_utf8_lossy(&head).to_string()
}

/// The body of a complete `Connection: close` response.
pub fn body(response: &str) -> &str {
    response.split_once("\r\n\r\n").map_or("", |(_, b)| b)
}
