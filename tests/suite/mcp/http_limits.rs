//! The connection limits of `dsh-tools mcp --http`, through the real binary with small caps
//! and timeouts: idle connections past the per-peer and total caps are refused at once
//! while a client with the token is served; a slowloris connection is closed after the
//! header timeout and one that never shows the token after the auth timeout; the accept
//! loop rests instead of spinning when the host is out of file descriptors.

#![allow(clippy::unwrap_used, clippy::print_stderr)]

use crate::support::http::{
    HttpHost, INITIALIZE, closed_within, connect_from, cpu_time, eventually, post_on,
};
use serde_json::json;
use std::net::TcpStream;
use std::time::Duration;

/// How long a refusal or a timeout may take to show on a loaded machine (the timeouts
/// configured here are a fraction of it; without the limits nothing closes at all).
const PROMPTLY: Duration = Duration::from_secs(8);

/// `dsh-tools mcp --http` with `flags`.
fn host(name: &str, flags: &[&str]) -> HttpHost {
    HttpHost::start(name, &json!({}), flags)
}

/// The host's CPU time over a `window`, as a fraction of that window.
fn cpu_share(host: &HttpHost, window: Duration) -> f64 {
    let before = cpu_time(host.pid());
    std::thread::sleep(window);
    (cpu_time(host.pid()) - before).as_secs_f64() / window.as_secs_f64()
}

/// Asserts `stream` was refused: closed (after a 503, or reset) within [`PROMPTLY`].
fn assert_refused(stream: &mut TcpStream, what: &str) {
    let (said, took) = closed_within(stream, PROMPTLY)
        .unwrap_or_else(|| panic!("{what}: the connection was kept open"));
    assert!(
        said.is_empty() || said.starts_with("HTTP/1.1 503 Service Unavailable"),
        "{what}: {said}"
    );
    eprintln!("{what}: refused in {took:?}");
}

/// A connection from `source` that the host admitted and serves (it answers a request
/// with the token), or `None` if it was refused.
fn admitted(source: &str, port: u16, bearer: &str) -> Option<TcpStream> {
    let mut stream = connect_from(source, port);
    let request = format!(
        "POST /elsewhere HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nAuthorization: {bearer}\r\n\r\n{{}}"
    );
    std::io::Write::write_all(&mut stream, request.as_bytes()).ok()?;
    stream.set_read_timeout(Some(PROMPTLY)).ok()?;
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match std::io::Read::read(&mut stream, &mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return None,
        }
    }
    let head = String::from_utf8_lossy(&head);
    head.starts_with("HTTP/1.1 404").then_some(stream)
}

#[test]
fn connections_past_the_caps_are_refused_at_once_while_a_client_with_the_token_is_served() {
    let host = host(
        "http-caps",
        &[
            "--http-max-connections",
            "6",
            "--http-max-connections-per-peer",
            "3",
            "--http-header-timeout-ms",
            "120000",
            "--http-auth-timeout-ms",
            "120000",
        ],
    );
    let bearer = host.bearer();
    // An authenticated keep-alive client, connected before the flood.
    let mut kept = connect_from("127.0.0.1", host.port);
    assert_eq!(post_on(&mut kept, "/elsewhere", Some(&bearer)), 404);
    // One peer holds its three idle connections; its fourth is refused at once.
    let held: Vec<TcpStream> = (0..3)
        .map(|_| connect_from("127.0.0.2", host.port))
        .collect();
    let mut fourth = connect_from("127.0.0.2", host.port);
    assert_refused(&mut fourth, "a fourth connection of one peer");
    // Another peer with the token is served meanwhile.
    let (status, answer) = host.post("/mcp", &[("Authorization", &bearer)], INITIALIZE);
    assert_eq!(status, 200, "{answer}");
    // Two more peers fill the total cap: a new connection from anywhere is refused, the
    // client already connected is still served, and the idle host spends no CPU.
    // (Each is retried until admitted: the seat of the request just served frees itself
    // once the host has seen that connection close, which a loaded machine may delay.)
    let more: Vec<TcpStream> = ["127.0.0.3", "127.0.0.4"]
        .iter()
        .map(|source| {
            eventually("a connection under the total cap to be admitted", || {
                admitted(source, host.port, &bearer)
            })
        })
        .collect();
    let mut past = connect_from("127.0.0.5", host.port);
    assert_refused(&mut past, "a connection past the total cap");
    assert_eq!(post_on(&mut kept, "/elsewhere", Some(&bearer)), 404);
    let share = cpu_share(&host, Duration::from_secs(1));
    eprintln!("host CPU at the cap: {:.1} % of a core", share * 100.0);
    assert!(share < 0.25, "{share}");
    // Once the holders leave, new clients get in again.
    drop(held);
    drop(more);
    eventually("a new connection to be admitted", || {
        let (status, _) = host.post("/mcp", &[("Authorization", &bearer)], INITIALIZE);
        (status == 200).then_some(())
    });
}

#[test]
fn a_slowloris_connection_is_closed_after_the_header_timeout() {
    let host = host(
        "http-slowloris",
        &[
            "--http-header-timeout-ms",
            "300",
            "--http-auth-timeout-ms",
            "120000",
        ],
    );
    let mut slow = connect_from("127.0.0.1", host.port);
    std::io::Write::write_all(
        &mut slow,
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ",
    )
    .unwrap();
    let (_, took) = closed_within(&mut slow, PROMPTLY).expect("the slowloris was kept open");
    eprintln!("slowloris closed after {took:?}");
    assert!(took >= Duration::from_millis(250), "{took:?}");
}

#[test]
fn a_connection_that_never_shows_the_token_is_closed_after_the_auth_timeout() {
    let host = host(
        "http-auth-timeout",
        &[
            "--http-header-timeout-ms",
            "120000",
            "--http-auth-timeout-ms",
            "300",
        ],
    );
    let bearer = host.bearer();
    let mut authenticated = connect_from("127.0.0.1", host.port);
    assert_eq!(
        post_on(&mut authenticated, "/elsewhere", Some(&bearer)),
        404
    );
    // Requests without the token keep it busy, not authenticated.
    let mut anonymous = connect_from("127.0.0.1", host.port);
    assert_eq!(post_on(&mut anonymous, "/mcp", None), 401);
    let (_, took) =
        closed_within(&mut anonymous, PROMPTLY).expect("the unauthenticated connection was kept");
    eprintln!("unauthenticated connection closed after {took:?}");
    // Past the same deadline, the authenticated connection still serves.
    assert_eq!(
        post_on(&mut authenticated, "/elsewhere", Some(&bearer)),
        404
    );
}

#[test]
fn the_accept_loop_rests_while_the_host_is_out_of_file_descriptors() {
    let mut host = host(
        "http-emfile",
        &[
            "--http-max-connections",
            "100000",
            "--http-max-connections-per-peer",
            "100000",
            "--http-header-timeout-ms",
            "120000",
            "--http-auth-timeout-ms",
            "120000",
        ],
    );
    let pid = host.pid();
    let open_fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count() as u64;
    // The hard limit stays where it was; the soft one is set just above what is open.
    let mut current = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: prlimit writes the limits into a live local and reads nothing.
    let read = unsafe {
        libc::prlimit(
            pid as i32,
            libc::RLIMIT_NOFILE,
            std::ptr::null(),
            &mut current,
        )
    };
    assert_eq!(read, 0, "{}", std::io::Error::last_os_error());
    let set = |soft: u64| {
        let new = libc::rlimit {
            rlim_cur: soft,
            rlim_max: current.rlim_max,
        };
        // SAFETY: `new` is a live local that prlimit only reads.
        let done =
            unsafe { libc::prlimit(pid as i32, libc::RLIMIT_NOFILE, &new, std::ptr::null_mut()) };
        assert_eq!(done, 0, "{}", std::io::Error::last_os_error());
    };
    set(open_fds + 4);
    let held: Vec<TcpStream> = (0..24)
        .map(|_| connect_from("127.0.0.1", host.port))
        .collect();
    host.wait_for_line("accepting an HTTP connection failed");
    let share = cpu_share(&host, Duration::from_secs(2));
    eprintln!(
        "host CPU while out of descriptors: {:.1} % of a core",
        share * 100.0
    );
    assert!(share < 0.25, "the accept loop spins: {share}");
    // Given descriptors again, it accepts what was queued and serves.
    set(current.rlim_cur);
    let bearer = host.bearer();
    let (status, answer) = host.post("/mcp", &[("Authorization", &bearer)], INITIALIZE);
    assert_eq!(status, 200, "{answer}");
    drop(held);
}
