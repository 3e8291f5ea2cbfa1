//! The egress proxy's cost: a 100 MB HTTP download from a local server on 127.0.0.1, fetched
//! directly and through `Egress::serve` (absolute-form HTTP, and a CONNECT tunnel), taken in
//! turns in one run; prints the medians, the ratios (issue 40's target: at most 1.2× direct)
//! and the process's resident memory while the proxy works against its idle value (target:
//! within 16 MB). Three servers: one sending as fast as loopback takes it (the case),
//! two paced at 10 and 1 Gbit/s (what a registry or a git host is reached at). The servers
//! reach the proxy through the test mapping (`name=127.0.0.1:port`), the one way a loopback
//! server is allowed.
//!
//! The parties are placed as in use: the proxy on a tokio runtime of its own (the host's),
//! the server and the client on threads of their own doing blocking I/O (a server elsewhere,
//! `curl` in the sandbox), so the proxy's work competes with theirs for the CPUs as it does
//! in use, not for one runtime's worker threads. Over loopback the transfer is bound by CPU
//! and memory copies, not a wire: the proxy's extra hop shows at full weight here, far more
//! than on a real network link.
//!
//! `cargo bench --bench egress`; `DSH_BENCH_SCALE=0.1` shrinks the download.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use dsh_tools::egress::{Egress, EgressPolicy, TestHosts};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

const BYTES: u64 = 100 * 1000 * 1000;
const ROUNDS: usize = 5;
const RATIO_TARGET: f64 = 1.2;
const RSS_TARGET_MB: f64 = 16.0;

/// The links measured: a name the proxy maps to a server, the rate the server sends at
/// (`None`: as fast as loopback takes it) and the rounds taken.
const LINKS: [(&str, Option<f64>, usize); 3] = [
    ("loopback.test", None, ROUNDS),
    ("ten-gbit.test", Some(1.25e9), 3),
    ("one-gbit.test", Some(1.25e8), 3),
];

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

    let servers: Vec<SocketAddr> = LINKS
        .iter()
        .map(|(_, rate, _)| serve_download(bytes, *rate))
        .collect();
    let names: Vec<String> = LINKS.iter().map(|(name, ..)| name.to_string()).collect();
    let mapping: Vec<String> = LINKS
        .iter()
        .zip(&servers)
        .map(|((name, ..), server)| format!("{name}=127.0.0.1:{}", server.port()))
        .collect();
    let policy = EgressPolicy::parse(&names, &[], "sandbox.network").unwrap();
    let hosts = TestHosts::parse(&mapping.join(",")).unwrap();
    let egress = Egress::with_test_hosts(policy, hosts);
    let stop = CancellationToken::new();
    let proxy = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let proxy = listener.local_addr().unwrap();
        tokio::spawn(Arc::clone(&egress).serve(listener, stop.clone()));
        proxy
    });

    // One warm-up of each path, then the idle value.
    let (loopback, server) = (LINKS[0].0, servers[0]);
    fetch(server, &Path::Direct.request(loopback), bytes);
    fetch(proxy, &Path::Http.request(loopback), bytes);
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

    let mb = bytes as f64 / 1e6;
    println!("egress: {mb:.0} MB from a server on 127.0.0.1, paths taken in turns, medians");
    for ((name, rate, rounds), server) in LINKS.iter().zip(&servers) {
        let mut times = [Vec::new(), Vec::new(), Vec::new()];
        for _ in 0..*rounds {
            for (path, times) in Path::ALL.iter().zip(&mut times) {
                let to = if *path == Path::Direct {
                    *server
                } else {
                    proxy
                };
                times.push(fetch(to, &path.request(name), bytes));
            }
        }
        let link = match rate {
            None => "as fast as loopback goes".to_string(),
            Some(rate) => format!("server paced at {:.0} Gbit/s", rate * 8.0 / 1e9),
        };
        println!("{link}, {rounds} rounds:");
        let direct = median(&mut times[0]);
        for (path, times) in Path::ALL.iter().zip(&mut times) {
            let time = median(times);
            let ratio = match path {
                Path::Direct => String::new(),
                _ => format!("  {:.2}x direct (target <= {RATIO_TARGET}x)", time / direct),
            };
            println!(
                "  {:<18}{:>8.1} ms  {:>7.0} MB/s{ratio}",
                path.label(),
                time * 1e3,
                mb / time
            );
        }
    }
    sampling.store(false, Ordering::Relaxed);
    sampler.join().unwrap();
    stop.cancel();
    let delta = (peak.load(Ordering::Relaxed) as f64 - idle as f64) / 1024.0;
    println!(
        "process RSS: idle {:.1} MB, peak while fetching {:.1} MB: +{delta:.1} MB (target <= {RSS_TARGET_MB} MB)",
        idle as f64 / 1024.0,
        peak.load(Ordering::Relaxed) as f64 / 1024.0
    );
}

/// How a download reaches the server.
#[derive(Clone, Copy, PartialEq)]
enum Path {
    Direct,
    Http,
    Connect,
}

impl Path {
    const ALL: [Path; 3] = [Path::Direct, Path::Http, Path::Connect];

    fn label(self) -> &'static str {
        match self {
            Path::Direct => "direct",
            Path::Http => "proxy, HTTP",
            Path::Connect => "proxy, CONNECT",
        }
    }

    /// What the client sends to fetch `/` of `host` this way.
    fn request(self, host: &str) -> Vec<u8> {
        let get = format!("GET / HTTP/1.1\r\nHost: {host}\r\n\r\n");
        match self {
            Path::Direct => get.into_bytes(),
            Path::Http => {
                format!("GET http://{host}/ HTTP/1.1\r\nHost: {host}\r\n\r\n").into_bytes()
            }
            Path::Connect => format!("CONNECT {host}:443 HTTP/1.1\r\n\r\n{get}").into_bytes(),
        }
    }
}

/// A server that answers every request with `bytes` bytes and closes, a thread per
/// connection; with a `rate`, it sends no faster than that many bytes a second (a link
/// slower than loopback, as a server elsewhere is reached).
fn serve_download(bytes: u64, rate: Option<f64>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let chunk: Arc<[u8]> = vec![b'x'; 64 * 1024].into();
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let _ = stream.set_nodelay(true);
            let chunk = Arc::clone(&chunk);
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {bytes}\r\nConnection: close\r\n\r\n"
                );
                stream.write_all(response.as_bytes()).unwrap();
                let (started, mut left) = (Instant::now(), bytes);
                while left > 0 {
                    let n = left.min(chunk.len() as u64) as usize;
                    if stream.write_all(&chunk[..n]).is_err() {
                        return;
                    }
                    left -= n as u64;
                    if let Some(rate) = rate {
                        let due = Duration::from_secs_f64((bytes - left) as f64 / rate);
                        let ahead = due.saturating_sub(started.elapsed());
                        if ahead > Duration::from_millis(1) {
                            std::thread::sleep(ahead);
                        }
                    }
                }
                let _ = stream.shutdown(std::net::Shutdown::Write);
            });
        }
    });
    addr
}

/// Sends `request` to `to`, reads to the end; returns the seconds taken. Checks the body.
fn fetch(to: SocketAddr, request: &[u8], bytes: u64) -> f64 {
    let started = Instant::now();
    let mut stream = TcpStream::connect(to).unwrap();
    stream.set_nodelay(true).unwrap();
    stream.write_all(request).unwrap();
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    let mut head = Vec::new();
    loop {
        let n = stream.read(&mut buf).unwrap();
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
