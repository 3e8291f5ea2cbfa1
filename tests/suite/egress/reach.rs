//! Allowed names reach their servers: HTTP absolute form (rewritten to origin form, request
//! and response bodies streamed), CONNECT and SOCKS5 (tunnels byte for byte). The CONNECT
//! tunnel is proven with a plain TCP echo server: it relays bytes without looking at them,
//! so TLS adds nothing to prove here (`curl.rs` also runs HTTPS with a self-signed cert).

use super::*;

#[tokio::test]
async fn an_allowed_name_is_forwarded_in_origin_form_without_proxy_headers() {
    let server = http_server().await;
    let p = proxy(
        &["app.test"],
        &[],
        &format!("app.test=127.0.0.1:{}", server.port),
    )
    .await;
    let response = exchange(
        &p,
        b"GET http://App.Test:8080/path?q=1 HTTP/1.1\r\nHost: elsewhere.test\r\nProxy-Connection: keep-alive\r\nProxy-Authorization: Basic eDp5\r\nAccept: */*\r\n\r\n",
    )
    .await;
    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
    let (head, seen) = response.split_once("\r\n\r\n").unwrap();
    assert!(head.contains("\r\nConnection: close"), "{head}");
    assert!(!head.contains("Keep-Alive"), "{head}");
    assert_eq!(
        seen,
        "GET /path?q=1 HTTP/1.1\r\nHost: App.Test:8080\r\nAccept: */*\r\nConnection: close\r\n\r\nbody-bytes: 0"
    );
    assert_eq!(p.egress.refusals(), 0);
}

#[tokio::test]
async fn a_request_body_streams_through_in_both_directions() {
    let server = http_server().await;
    let p = proxy(
        &["app.test:80"],
        &[],
        &format!("app.test=127.0.0.1:{}", server.port),
    )
    .await;
    let mut stream = TcpStream::connect(p.addr).await.unwrap();
    let size = 8 * 1024 * 1024;
    let head = format!(
        "POST http://app.test/up HTTP/1.1\r\nHost: app.test\r\nContent-Length: {size}\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    // The answer arrives only after the whole body went through (no full buffering needed).
    let (mut r, mut w) = stream.split();
    let send = async {
        let chunk = vec![7u8; 65536];
        for _ in 0..size / chunk.len() {
            w.write_all(&chunk).await.unwrap();
        }
    };
    let (_, answer) = tokio::join!(send, read_to_end(&mut r));
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.ends_with(&format!("body-bytes: {size}")), "{answer}");
}

#[tokio::test]
async fn connect_tunnels_every_byte_both_ways() {
    let server = echo_server().await;
    let p = proxy(
        &["*.app.test:443"],
        &[],
        &format!("git.app.test=127.0.0.1:{}", server.port),
    )
    .await;
    let mut stream = TcpStream::connect(p.addr).await.unwrap();
    // The first tunnel bytes ride in the same packet as the head.
    stream
        .write_all(
            b"CONNECT git.app.test:443 HTTP/1.1\r\nHost: git.app.test:443\r\n\r\n\x16\x03\x01",
        )
        .await
        .unwrap();
    assert_eq!(
        read_head(&mut stream).await,
        "HTTP/1.1 200 Connection Established\r\n\r\n"
    );
    let every: Vec<u8> = (0..=255u8).cycle().take(300_000).collect();
    let (mut r, mut w) = stream.split();
    let send = async {
        w.write_all(&every).await.unwrap();
        w.shutdown().await.unwrap();
    };
    let (_, back) = tokio::join!(send, read_to_end(&mut r));
    assert_eq!(&back[..3], b"\x16\x03\x01");
    assert!(back[3..] == every[..], "the tunnel changed the bytes");
}

/// A SOCKS5 CONNECT; returns the stream after a success reply, or the reply code.
pub async fn socks_connect(proxy: &Proxy, address: &[u8], port: u16) -> Result<TcpStream, u8> {
    let mut stream = TcpStream::connect(proxy.addr).await.unwrap();
    stream.write_all(&[5, 2, 0x02, 0x00]).await.unwrap();
    let mut method = [0u8; 2];
    stream.read_exact(&mut method).await.unwrap();
    assert_eq!(method, [5, 0]);
    let mut request = vec![5, 1, 0];
    request.extend_from_slice(address);
    request.extend_from_slice(&port.to_be_bytes());
    stream.write_all(&request).await.unwrap();
    let mut reply = [0u8; 10];
    tokio::time::timeout(PATIENCE, stream.read_exact(&mut reply))
        .await
        .unwrap()
        .unwrap();
    assert_eq!((reply[0], reply[2], reply[3]), (5, 0, 1), "{reply:?}");
    if reply[1] == 0 {
        Ok(stream)
    } else {
        Err(reply[1])
    }
}

pub fn domain(name: &str) -> Vec<u8> {
    let mut out = vec![3, name.len() as u8];
    out.extend_from_slice(name.as_bytes());
    out
}

#[tokio::test]
async fn socks5_reaches_an_allowed_name() {
    let server = echo_server().await;
    let p = proxy(
        &["ssh.app.test:22"],
        &[],
        &format!("ssh.app.test=127.0.0.1:{}", server.port),
    )
    .await;
    let mut stream = socks_connect(&p, &domain("ssh.app.test"), 22)
        .await
        .unwrap();
    stream.write_all(b"SSH-2.0-test\r\n").await.unwrap();
    stream.shutdown().await.unwrap();
    assert_eq!(read_to_end(&mut stream).await, b"SSH-2.0-test\r\n");
    // The port is part of the rule.
    assert_eq!(
        socks_connect(&p, &domain("ssh.app.test"), 2222).await.err(),
        Some(2)
    );
    assert_eq!(server.accepted(), 1);
}

#[tokio::test]
async fn socks5_refuses_other_commands_and_methods() {
    let p = proxy(&["app.test"], &[], "app.test=127.0.0.1:9").await;
    // Only username/password offered: no acceptable method.
    let mut stream = TcpStream::connect(p.addr).await.unwrap();
    stream.write_all(&[5, 1, 0x02]).await.unwrap();
    assert_eq!(read_to_end(&mut stream).await, [5, 0xff]);
    // BIND: command not supported.
    let mut stream = TcpStream::connect(p.addr).await.unwrap();
    stream.write_all(&[5, 1, 0, 5, 2, 0]).await.unwrap();
    stream.write_all(&domain("app.test")).await.unwrap();
    stream.write_all(&80u16.to_be_bytes()).await.unwrap();
    let answer = read_to_end(&mut stream).await;
    assert_eq!(answer[..4], [5, 0, 5, 7]);
}
