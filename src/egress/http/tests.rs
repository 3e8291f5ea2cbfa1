//! The HTTP side's parsing and rewriting: absolute form, authorities, hop-by-hop headers,
//! and no panic on any input.

use super::*;

fn request(method: &str, target: &str, headers: &[(&str, &str)]) -> Request {
    Request {
        method: method.into(),
        target: target.into(),
        version: 1,
        headers: headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.as_bytes().to_vec()))
            .collect(),
    }
}

#[test]
fn absolute_form_splits_authority_and_path() {
    assert_eq!(
        absolute_form("http://a.test:8080/x?y=1"),
        Ok(("a.test:8080", "/x?y=1".to_string()))
    );
    assert_eq!(
        absolute_form("HTTP://a.test"),
        Ok(("a.test", "/".to_string()))
    );
    assert_eq!(
        absolute_form("http://a.test?q"),
        Ok(("a.test", "/?q".to_string()))
    );
    assert_eq!(
        absolute_form("http://[::1]:80/"),
        Ok(("[::1]:80", "/".to_string()))
    );
    assert!(
        absolute_form("https://a.test/")
            .unwrap_err()
            .contains("use CONNECT")
    );
    assert!(
        absolute_form("/index.html")
            .unwrap_err()
            .contains("absolute form")
    );
    assert!(
        absolute_form("http://user:pw@a.test/")
            .unwrap_err()
            .contains("credentials")
    );
}

#[test]
fn authorities_need_a_valid_host_and_port() {
    let h = |s: &str| Host::parse(s).unwrap();
    assert_eq!(
        split_authority("a.test:443", None),
        Some((h("a.test"), 443))
    );
    assert_eq!(split_authority("A.Test", Some(80)), Some((h("a.test"), 80)));
    assert_eq!(split_authority("[::1]:8443", None), Some((h("::1"), 8443)));
    assert_eq!(split_authority("[::1]", Some(80)), Some((h("::1"), 80)));
    for bad in [
        "a.test",
        "a.test:",
        "a.test:0",
        "a.test:65536",
        "a.test:+1",
        "[::1",
        "[::1]x",
        "[::1]:",
        ":443",
        "a b:1",
        "2130706433:80",
    ] {
        assert_eq!(split_authority(bad, None), None, "{bad:?}");
    }
}

#[test]
fn the_forwarded_head_is_origin_form_without_hop_by_hop_headers() {
    let r = request(
        "POST",
        "http://a.test:8080/up",
        &[
            ("Host", "wrong.test"),
            ("Proxy-Connection", "keep-alive"),
            ("Proxy-Authorization", "Basic eA=="),
            ("Connection", "keep-alive, X-Secret"),
            ("X-Secret", "1"),
            ("Keep-Alive", "timeout=5"),
            ("Content-Length", "3"),
            ("Accept", "*/*"),
        ],
    );
    let head = String::from_utf8(origin_head(&r, "a.test:8080", "/up".into())).unwrap();
    assert_eq!(
        head,
        "POST /up HTTP/1.1\r\nHost: a.test:8080\r\nContent-Length: 3\r\nAccept: */*\r\nConnection: close\r\n\r\n"
    );
}

#[test]
fn an_upgrade_keeps_its_connection_header() {
    let r = request(
        "GET",
        "http://a.test/ws",
        &[
            ("Connection", "Upgrade"),
            ("Upgrade", "websocket"),
            ("Sec-WebSocket-Key", "k"),
        ],
    );
    let head = String::from_utf8(origin_head(&r, "a.test", "/ws".into())).unwrap();
    assert_eq!(
        head,
        "GET /ws HTTP/1.1\r\nHost: a.test\r\nUpgrade: websocket\r\nSec-WebSocket-Key: k\r\nConnection: upgrade\r\n\r\n"
    );
}

#[tokio::test]
async fn interim_heads_pass_and_the_final_head_closes() {
    let upstream: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\nContent-Length: 2\r\n\r\nhi";
    let mut from = upstream;
    let mut to = Vec::new();
    assert!(relay_response_head(&mut from, &mut to).await);
    assert_eq!(
        String::from_utf8(to).unwrap(),
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi"
    );
    let mut from: &[u8] = b"SSH-2.0-nope\r\n\r\n";
    let mut to = Vec::new();
    assert!(!relay_response_head(&mut from, &mut to).await);
    assert!(
        String::from_utf8(to)
            .unwrap()
            .starts_with("HTTP/1.1 502 Bad Gateway\r\n")
    );
}

#[test]
fn no_input_makes_the_parsers_panic() {
    // A fixed xorshift stream: the same inputs every run.
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let alphabet = b"[]:@/?.%*-_aZ09\x00\xff\r\n ";
    for _ in 0..20_000 {
        let len = (next() % 24) as usize;
        let bytes: Vec<u8> = (0..len)
            .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
            .collect();
        let text = String::from_utf8_lossy(&bytes);
        let _ = split_authority(&text, Some(80));
        let _ = absolute_form(&text);
        let _ = Host::parse(&text);
        let _ = crate::egress::EgressPolicy::parse(&[text.to_string()], &[], "f");
    }
}

#[tokio::test(start_paused = true)]
async fn a_head_that_does_not_finish_in_time_gets_408() {
    use crate::egress::{EgressPolicy, HEAD_TIMEOUT, TestHosts};
    let policy = EgressPolicy::parse(&["a.test".into()], &[], "sandbox.network").unwrap();
    let egress = Egress::with_test_hosts(policy, TestHosts::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = tokio_util::sync::CancellationToken::new();
    tokio::spawn(std::sync::Arc::clone(&egress).serve(listener, stop.clone()));
    let started = Instant::now();
    let mut client = TcpStream::connect(addr).await.unwrap();
    client
        .write_all(b"GET http://a.test/ HTTP/1.1\r\nHost: a.t")
        .await
        .unwrap();
    // Paused time: the clock jumps to the deadline once everything waits.
    let mut answer = Vec::new();
    client.read_to_end(&mut answer).await.unwrap();
    let text = String::from_utf8_lossy(&answer);
    assert!(
        text.starts_with("HTTP/1.1 408 Request Timeout\r\n"),
        "{text}"
    );
    assert!(started.elapsed() >= HEAD_TIMEOUT);
    stop.cancel();
}
