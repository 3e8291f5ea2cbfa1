//! Refusals: a denied name and an unlisted one get `403` with the sentence naming host, port
//! and rule and an `X-Dsh-Tools-Blocked` header (SOCKS5: reply 0x02); an allowed name that
//! the system resolver maps to loopback, an allowed metadata address and IP literals are
//! refused too; no refused connection reaches the server behind it; each refusal is kept
//! for `blocked_since`.

use super::reach::{domain, socks_connect};
use super::*;
use dsh_tools::egress::Blocked;

fn blocked(host: &str, port: u16, why: &str) -> Blocked {
    Blocked {
        host: host.into(),
        port,
        why: why.into(),
    }
}

fn assert_forbidden(response: &str, authority: &str, why: &str) {
    assert!(
        response.starts_with("HTTP/1.1 403 Forbidden\r\n"),
        "{response}"
    );
    assert!(
        response.contains(&format!("\r\nX-Dsh-Tools-Blocked: {authority}\r\n")),
        "{response}"
    );
    assert_eq!(
        body(response),
        format!("network access to {authority} was blocked by the sandbox ({why})\n")
    );
}

#[tokio::test]
async fn denied_and_unlisted_names_are_refused_with_the_rule() {
    let server = echo_server().await;
    let map = format!(
        "evil.example=127.0.0.1:{0},other.example=127.0.0.1:{0}",
        server.port
    );
    let p = proxy(&["*.example"], &["evil.example"], &map).await;
    let mark = p.egress.refusals();

    let r = exchange(&p, b"CONNECT evil.example:443 HTTP/1.1\r\n\r\n").await;
    assert_forbidden(
        &r,
        "evil.example:443",
        "denied by sandbox.network.deny \"evil.example\"",
    );
    let r = exchange(
        &p,
        b"GET http://evil.example/x HTTP/1.1\r\nHost: evil.example\r\n\r\n",
    )
    .await;
    assert_forbidden(
        &r,
        "evil.example:80",
        "denied by sandbox.network.deny \"evil.example\"",
    );
    let r = exchange(&p, b"CONNECT unlisted.test:443 HTTP/1.1\r\n\r\n").await;
    assert_forbidden(&r, "unlisted.test:443", "not in sandbox.network.allow");
    assert_eq!(
        socks_connect(&p, &domain("unlisted.test"), 22).await.err(),
        Some(2)
    );

    assert_eq!(
        server.accepted(),
        0,
        "a refused connection reached the server"
    );
    assert_eq!(p.egress.refusals(), mark + 4);
    assert_eq!(
        p.egress.blocked_since(mark),
        vec![
            blocked(
                "evil.example",
                443,
                "denied by sandbox.network.deny \"evil.example\""
            ),
            blocked(
                "evil.example",
                80,
                "denied by sandbox.network.deny \"evil.example\""
            ),
            blocked("unlisted.test", 443, "not in sandbox.network.allow"),
            blocked("unlisted.test", 22, "not in sandbox.network.allow"),
        ]
    );
    assert_eq!(p.egress.blocked_since(mark + 3).len(), 1);
    // The mapped sibling is allowed: the mapping itself grants nothing, the policy does.
    let mut stream = TcpStream::connect(p.addr).await.unwrap();
    stream
        .write_all(b"CONNECT other.example:443 HTTP/1.1\r\n\r\n")
        .await
        .unwrap();
    assert_eq!(
        read_head(&mut stream).await,
        "HTTP/1.1 200 Connection Established\r\n\r\n"
    );
    stream.write_all(b"hi").await.unwrap();
    let mut back = [0u8; 2];
    stream.read_exact(&mut back).await.unwrap();
    assert_eq!(&back, b"hi");
}

#[tokio::test]
async fn an_allowed_name_the_resolver_maps_to_loopback_is_refused() {
    let server = echo_server().await;
    let p = proxy(&["localhost"], &[], "").await;
    let request = format!("CONNECT localhost:{} HTTP/1.1\r\n\r\n", server.port);
    let r = exchange(&p, request.as_bytes()).await;
    let authority = format!("localhost:{}", server.port);
    let v4 = format!(
        "network access to {authority} was blocked by the sandbox (localhost resolves to a loopback address 127.0.0.1)\n"
    );
    let v6 = v4.replace("127.0.0.1", "::1");
    assert!(body(&r) == v4 || body(&r) == v6, "{r}");
    assert!(
        r.contains(&format!("X-Dsh-Tools-Blocked: {authority}\r\n")),
        "{r}"
    );
    // The same through SOCKS5 and plain HTTP.
    assert_eq!(
        socks_connect(&p, &domain("localhost"), server.port)
            .await
            .err(),
        Some(2)
    );
    let request = format!("GET http://localhost:{}/ HTTP/1.1\r\n\r\n", server.port);
    assert!(
        exchange(&p, request.as_bytes())
            .await
            .starts_with("HTTP/1.1 403 ")
    );
    assert_eq!(server.accepted(), 0, "the host's loopback was reached");
}

#[tokio::test]
async fn the_metadata_address_is_refused_even_when_listed() {
    let p = proxy(&["169.254.169.254", "fd00:ec2::254"], &[], "").await;
    let r = exchange(
        &p,
        b"GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\n\r\n",
    )
    .await;
    assert_forbidden(
        &r,
        "169.254.169.254:80",
        "169.254.169.254 is the cloud metadata address",
    );
    let r = exchange(&p, b"CONNECT [fd00:ec2::254]:80 HTTP/1.1\r\n\r\n").await;
    assert_forbidden(
        &r,
        "[fd00:ec2::254]:80",
        "fd00:ec2::254 is the cloud metadata address",
    );
    assert_eq!(
        socks_connect(&p, &[1, 169, 254, 169, 254], 80).await.err(),
        Some(2)
    );
}

#[tokio::test]
async fn ip_literals_are_refused_unless_listed_and_loopback_ones_always() {
    let server = echo_server().await;
    let p = proxy(&["app.test"], &[], "").await;
    let request = format!("CONNECT 127.0.0.1:{} HTTP/1.1\r\n\r\n", server.port);
    let r = exchange(&p, request.as_bytes()).await;
    assert_forbidden(
        &r,
        &format!("127.0.0.1:{}", server.port),
        "not in sandbox.network.allow",
    );
    assert_eq!(
        socks_connect(&p, &[1, 127, 0, 0, 1], server.port)
            .await
            .err(),
        Some(2)
    );
    let mut v6 = vec![4];
    v6.extend_from_slice(&std::net::Ipv6Addr::LOCALHOST.octets());
    assert_eq!(socks_connect(&p, &v6, server.port).await.err(), Some(2));

    let p = proxy(&["127.0.0.1"], &[], "").await;
    let r = exchange(&p, request.as_bytes()).await;
    assert_forbidden(
        &r,
        &format!("127.0.0.1:{}", server.port),
        "127.0.0.1 is a loopback address",
    );
    // A legacy spelling of 127.0.0.1 is not a host at all, so it is never resolved.
    let r = exchange(
        &p,
        format!("CONNECT 2130706433:{} HTTP/1.1\r\n\r\n", server.port).as_bytes(),
    )
    .await;
    assert!(r.starts_with("HTTP/1.1 400 "), "{r}");
    assert_eq!(server.accepted(), 0, "the host's loopback was reached");
}

#[tokio::test]
async fn a_name_that_does_not_resolve_is_a_502_not_a_refusal() {
    let p = proxy(&["*.invalid"], &[], "").await;
    let r = exchange(&p, b"CONNECT nowhere.invalid:443 HTTP/1.1\r\n\r\n").await;
    assert!(r.starts_with("HTTP/1.1 502 Bad Gateway\r\n"), "{r}");
    assert!(
        body(&r).starts_with("nowhere.invalid could not be resolved"),
        "{r}"
    );
    assert_eq!(p.egress.refusals(), 0);
}
