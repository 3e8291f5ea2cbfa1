//! Garbage and oversized input: every connection ends cleanly (a `400`/`431` or a close,
//! never a hang or a crash), and the proxy keeps serving the next client.

use super::*;

#[tokio::test]
async fn garbage_first_bytes_get_a_clean_answer_and_the_proxy_serves_on() {
    let server = http_server().await;
    let p = proxy(
        &["app.test"],
        &[],
        &format!("app.test=127.0.0.1:{}", server.port),
    )
    .await;
    let inputs: Vec<Vec<u8>> = vec![
        vec![0x00],
        vec![0xff; 100],
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03".to_vec(), // a TLS ClientHello
        b"\x04\x01\x00\x50\x7f\x00\x00\x01\x00".to_vec(),         // SOCKS4
        b"\x05".to_vec(),                                         // SOCKS5, then nothing
        b"\x05\x01\x00\x05\x01\x00\xee".to_vec(),                 // an unknown address type
        b"\x05\x01\x00\x05\x01\x00\x03\x00\x00\x50".to_vec(),     // an empty domain
        b"\x05\x01\x00\x05\x01\x00\x03\x03a b\x00\x50".to_vec(),  // not a host name
        b"\x05\xff".to_vec(),
        b"\r\n\r\n".to_vec(),
        b"GET\r\n\r\n".to_vec(),
        b"CONNECT\r\n\r\n".to_vec(),
        b"CONNECT app.test HTTP/1.1\r\n\r\n".to_vec(),
        b"CONNECT app.test:99999 HTTP/1.1\r\n\r\n".to_vec(),
        b"GET / HTTP/1.1\r\nHost: app.test\r\n\r\n".to_vec(),
        b"GET ftp://app.test/ HTTP/1.1\r\n\r\n".to_vec(),
        b"GET http://app.test:x/ HTTP/1.1\r\n\r\n".to_vec(),
        b"GET http:// HTTP/1.1\r\n\r\n".to_vec(),
        b"GET http://app.test/ HTTP/1.1\r\nBad Header\r\n\r\n".to_vec(),
        b"GET http://app.test/ HTTP/1.1\r\n".to_vec(), // then the client closes
    ];
    for input in inputs {
        let mut stream = TcpStream::connect(p.addr).await.unwrap();
        stream.write_all(&input).await.unwrap();
        stream.shutdown().await.unwrap();
        let answer = read_to_end(&mut stream).await;
        let text = String::from_utf8_lossy(&answer);
        let clean = answer.is_empty()
            || text.starts_with("HTTP/1.1 400 Bad Request\r\n")
            || answer.first() == Some(&5);
        assert!(clean, "{input:?} got {text:?}");
    }
    assert_eq!(server.accepted(), 0);
    let ok = exchange(&p, b"GET http://app.test/ HTTP/1.1\r\n\r\n").await;
    assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
}

#[tokio::test]
async fn a_head_over_64_kib_is_refused_with_431() {
    let p = proxy(&["app.test"], &[], "app.test=127.0.0.1:9").await;
    let mut stream = TcpStream::connect(p.addr).await.unwrap();
    let mut request = b"GET http://app.test/ HTTP/1.1\r\n".to_vec();
    for i in 0..2000 {
        request.extend_from_slice(format!("X-Filler-{i}: {}\r\n", "a".repeat(40)).as_bytes());
    }
    // The proxy answers before the head ends; a write may then fail with a reset.
    let _ = stream.write_all(&request).await;
    let answer = read_to_end(&mut stream).await;
    let text = String::from_utf8_lossy(&answer);
    assert!(
        text.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"),
        "{text}"
    );
}

#[tokio::test]
async fn many_garbage_clients_at_once_leave_the_proxy_serving() {
    let server = echo_server().await;
    let p = proxy(
        &["app.test"],
        &[],
        &format!("app.test=127.0.0.1:{}", server.port),
    )
    .await;
    let mut clients = tokio::task::JoinSet::new();
    for i in 0..64u8 {
        let addr = p.addr;
        clients.spawn(async move {
            let mut stream = TcpStream::connect(addr).await.unwrap();
            let junk: Vec<u8> = (0..200u16)
                .map(|j| (j as u8).wrapping_mul(31).wrapping_add(i))
                .collect();
            let _ = stream.write_all(&junk).await;
            let _ = stream.shutdown().await;
            let _ = read_to_end(&mut stream).await;
        });
    }
    while let Some(done) = clients.join_next().await {
        done.unwrap();
    }
    let mut stream = TcpStream::connect(p.addr).await.unwrap();
    stream
        .write_all(b"CONNECT app.test:443 HTTP/1.1\r\n\r\nping")
        .await
        .unwrap();
    assert_eq!(
        read_head(&mut stream).await,
        "HTTP/1.1 200 Connection Established\r\n\r\n"
    );
    let mut pong = [0u8; 4];
    stream.read_exact(&mut pong).await.unwrap();
    assert_eq!(&pong, b"ping");
}
