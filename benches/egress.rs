//! The egress proxy's cost: a 100 MB HTTP download from a local server on 127.0.0.1, fetched
//! directly and through `Egress::serve` (absolute-form HTTP, and a CONNECT tunnel), taken in
//! turns in one run, 5 times each; prints the medians, the ratios (issue 40's target: at
//! most 1.2× direct) and the process's resident memory while the proxy works against its
//! idle value (target: within 16 MB). The server reaches the proxy through the test mapping
//! (`bench.test=127.0.0.1:port`), the one way a loopback server is allowed.
//!
//! Over loopback the transfer is bound by CPU and memory copies, not a wire: the proxy's
//! extra hop (one more read and write of every byte, in user space) shows at full weight
//! here, far more than on a real network link.
//!
//! `cargo bench --bench egress`; `DSH_BENCH_SCALE=0.1` shrinks the download.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use dsh_tools::egress::{Egress, EgressPolicy, TestHosts};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

const BYTES: u64 = 100 * 1000 * 1000;
const ROUNDS: usize = 5;
const RATIO_TARGET: f64 = 1.2;
const RSS_TARGET_MB: f64 = 16.0;

fn main() {
    let scale: f64 = std::env::var("DSH_BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let bytes = (BYTES as f64 * scale) as u64;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run(bytes));
}

async fn run(bytes: u64) {
    let server = serve_download(bytes).await;
    let policy = EgressPolicy::parse(&["bench.test".into()], &[], "sandbox.network").unwrap();
    let hosts = TestHosts::parse(&format!("bench.test=127.0.0.1:{}", server.port())).unwrap();
    let egress = Egress::with_test_hosts(policy, hosts);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy = listener.local_addr().unwrap();
    let stop = CancellationToken::new();
    tokio::spawn(Arc::clone(&egress).serve(listener, stop.clone()));

    // One warm-up of each path, then the idle value.
    fetch(
        server,
        b"GET / HTTP/1.1\r\nHost: bench.test\r\n\r\n".to_vec(),
        bytes,
    )
    .await;
    fetch(
        proxy,
        b"GET http://bench.test/ HTTP/1.1\r\n\r\n".to_vec(),
        bytes,
    )
    .await;
    let idle = rss_kib();
    let peak = Arc::new(AtomicU64::new(idle));
    let sampling = Arc::new(AtomicBool::new(true));
    let sampler = {
        let (peak, sampling) = (Arc::clone(&peak), Arc::clone(&sampling));
        std::thread::spawn(move || {
            while sampling.load(Ordering::Relaxed) {
                peak.fetch_max(rss_kib(), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };

    let (mut direct, mut http, mut tunnel) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        direct.push(
            fetch(
                server,
                b"GET / HTTP/1.1\r\nHost: bench.test\r\n\r\n".to_vec(),
                bytes,
            )
            .await,
        );
        http.push(
            fetch(
                proxy,
                b"GET http://bench.test/ HTTP/1.1\r\nHost: bench.test\r\n\r\n".to_vec(),
                bytes,
            )
            .await,
        );
        let connect =
            b"CONNECT bench.test:443 HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\nHost: bench.test\r\n\r\n";
        tunnel.push(fetch(proxy, connect.to_vec(), bytes).await);
    }
    sampling.store(false, Ordering::Relaxed);
    sampler.join().unwrap();
    stop.cancel();

    let mb = bytes as f64 / 1e6;
    let (d, h, t) = (median(&mut direct), median(&mut http), median(&mut tunnel));
    println!("egress: {mb:.0} MB from 127.0.0.1, {ROUNDS} rounds each, medians");
    println!(
        "  direct              {:>8.1} ms  {:>7.0} MB/s",
        d * 1e3,
        mb / d
    );
    println!(
        "  proxy, HTTP         {:>8.1} ms  {:>7.0} MB/s  {:.2}x direct (target <= {RATIO_TARGET}x)",
        h * 1e3,
        mb / h,
        h / d
    );
    println!(
        "  proxy, CONNECT      {:>8.1} ms  {:>7.0} MB/s  {:.2}x direct (target <= {RATIO_TARGET}x)",
        t * 1e3,
        mb / t,
        t / d
    );
    let delta = (peak.load(Ordering::Relaxed) as f64 - idle as f64) / 1024.0;
    println!(
        "  process RSS: idle {:.1} MB, peak while fetching {:.1} MB: +{delta:.1} MB (target <= {RSS_TARGET_MB} MB)",
        idle as f64 / 1024.0,
        peak.load(Ordering::Relaxed) as f64 / 1024.0
    );
}

/// A server that answers every request with `bytes` bytes and closes.
async fn serve_download(bytes: u64) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let chunk: Arc<[u8]> = vec![b'x'; 64 * 1024].into();
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                continue;
            };
            let _ = stream.set_nodelay(true);
            let chunk = Arc::clone(&chunk);
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {bytes}\r\nConnection: close\r\n\r\n"
                );
                stream.write_all(response.as_bytes()).await.unwrap();
                let mut left = bytes;
                while left > 0 {
                    let n = left.min(chunk.len() as u64) as usize;
                    if stream.write_all(&chunk[..n]).await.is_err() {
                        return;
                    }
                    left -= n as u64;
                }
                let _ = stream.shutdown().await;
            });
        }
    });
    addr
}

/// Sends `request` to `to`, reads to the end; returns the seconds taken. Checks the body.
async fn fetch(to: SocketAddr, request: Vec<u8>, bytes: u64) -> f64 {
    let started = Instant::now();
    let mut stream = TcpStream::connect(to).await.unwrap();
    stream.set_nodelay(true).unwrap();
    stream.write_all(&request).await.unwrap();
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    let mut head = Vec::new();
    loop {
        let n = stream.read(&mut buf).await.unwrap();
        if n == 0 {
            break;
        }
        if head.len() < 512 {
            head.extend_from_slice(&buf[..n.min(512)]);
        }
        total += n as u64;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let text = String::from_utf8_lossy(&head);
    let body_start = text.rfind("\r\n\r\n").map(|i| i + 4).unwrap_or(0);
    let heads = text[..body_start].len() as u64;
    assert!(text.contains("200 OK"), "{text}");
    assert_eq!(total - heads, bytes, "short download: {text}");
    elapsed
}

fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// The process's resident set, in KiB.
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}
