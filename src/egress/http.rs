//! The HTTP side of the proxy: `CONNECT host:port` (a byte-for-byte tunnel) and requests in
//! absolute form (`GET http://host:port/path HTTP/1.1`), forwarded one per connection.
//!
//! A forwarded request is rewritten to origin form with `Host` set from the target (as RFC
//! 9112 asks of a proxy), its hop-by-hop headers dropped (`Connection` and the headers it
//! names, `Keep-Alive`, `Proxy-Connection`, `Proxy-Authorization`, `TE`) and
//! `Connection: close` added; the response head gets `Connection: close` too, and both
//! bodies then stream through untouched (whatever their framing: the connection ends with
//! the response). One request per connection is the simple correct form for a proxy that
//! decides per connection: a client opens a new connection for its next request, and no
//! byte of this one can reach another host. An `Upgrade` (WebSocket) request keeps its
//! `Connection: upgrade` and becomes a tunnel after `101`.

use super::policy::Host;
use super::refusal::{forbidden, response};
use super::splice::move_bytes;
use super::{Egress, Failure, HEAD_LIMIT, HEAD_TIMEOUT, tunnel};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

/// At most this many header fields in one head.
const MAX_HEADERS: usize = 128;

/// A request head, owned.
struct Request {
    method: String,
    target: String,
    /// The minor version: 0 or 1.
    version: u8,
    headers: Vec<(String, Vec<u8>)>,
}

/// Why a head could not be read.
enum HeadError {
    Closed,
    TooLarge,
    Malformed(String),
    Io,
}

/// Serves one HTTP connection: one CONNECT or one forwarded request.
pub(super) async fn serve(egress: &Egress, mut client: TcpStream, deadline: Instant) {
    let mut buf = Vec::with_capacity(4096);
    let head = tokio::time::timeout_at(deadline, read_request(&mut client, &mut buf)).await;
    let (request, len) = match head {
        Ok(Ok(parsed)) => parsed,
        Ok(Err(HeadError::Closed | HeadError::Io)) => return,
        Ok(Err(HeadError::TooLarge)) => {
            let body = format!("the request head is over {} KiB", HEAD_LIMIT / 1024);
            return reply(&mut client, 431, "Request Header Fields Too Large", &body).await;
        }
        Ok(Err(HeadError::Malformed(why))) => {
            return reply(
                &mut client,
                400,
                "Bad Request",
                &format!("not an HTTP request: {why}"),
            )
            .await;
        }
        Err(_) => {
            let body = format!("no request head within {}s", HEAD_TIMEOUT.as_secs());
            return reply(&mut client, 408, "Request Timeout", &body).await;
        }
    };
    let rest = buf.split_off(len);
    if request.method.eq_ignore_ascii_case("CONNECT") {
        connect(egress, client, &request, rest).await;
    } else {
        forward(egress, client, request, rest).await;
    }
}

async fn connect(egress: &Egress, mut client: TcpStream, request: &Request, rest: Vec<u8>) {
    let Some((host, port)) = split_authority(&request.target, None) else {
        let body = format!("CONNECT needs host:port, not {:?}", request.target);
        return reply(&mut client, 400, "Bad Request", &body).await;
    };
    let Some(mut upstream) = open(egress, &mut client, &host, port).await else {
        return;
    };
    let established = b"HTTP/1.1 200 Connection Established\r\n\r\n";
    if client.write_all(established).await.is_err() || upstream.write_all(&rest).await.is_err() {
        return;
    }
    tunnel(client, upstream).await;
}

async fn forward(egress: &Egress, mut client: TcpStream, request: Request, rest: Vec<u8>) {
    let (authority, path) = match absolute_form(&request.target) {
        Ok(parts) => parts,
        Err(why) => return reply(&mut client, 400, "Bad Request", &why).await,
    };
    let Some((host, port)) = split_authority(authority, Some(80)) else {
        let body = format!("{authority:?} is not host[:port]");
        return reply(&mut client, 400, "Bad Request", &body).await;
    };
    let Some(mut upstream) = open(egress, &mut client, &host, port).await else {
        return;
    };
    let head = origin_head(&request, authority, path);
    if upstream.write_all(&head).await.is_err() || upstream.write_all(&rest).await.is_err() {
        return reply(
            &mut client,
            502,
            "Bad Gateway",
            "the upstream closed the connection",
        )
        .await;
    }
    let (client_read, mut client_write) = client.split();
    let (mut upstream_read, upstream_write) = upstream.split();
    let upload = move_bytes(client_read.as_ref(), upstream_write.as_ref());
    let download = async {
        if relay_response_head(&mut upstream_read, &mut client_write).await {
            let _ = move_bytes(upstream_read.as_ref(), client_write.as_ref()).await;
        } else {
            let _ = client_write.shutdown().await;
        }
    };
    // The response ends the exchange: once it is through, a client still sending is cut off.
    tokio::pin!(upload, download);
    tokio::select! {
        _ = &mut upload => download.await,
        () = &mut download => {}
    }
}

/// Connects to `host:port` for the client, or answers it with the refusal or the failure.
async fn open(
    egress: &Egress,
    client: &mut TcpStream,
    host: &Host,
    port: u16,
) -> Option<TcpStream> {
    match egress.open(host, port).await {
        Ok(upstream) => Some(upstream),
        Err(Failure::Blocked(blocked)) => {
            let _ = client.write_all(&forbidden(&blocked)).await;
            let _ = client.shutdown().await;
            None
        }
        Err(Failure::Unreachable(why)) => {
            reply(client, 502, "Bad Gateway", &why).await;
            None
        }
    }
}

async fn reply(client: &mut TcpStream, status: u16, reason: &str, body: &str) {
    let _ = client.write_all(&response(status, reason, "", body)).await;
    let _ = client.shutdown().await;
}

/// Reads until a complete request head is in `buf`; returns it and its length.
async fn read_request(
    client: &mut TcpStream,
    buf: &mut Vec<u8>,
) -> Result<(Request, usize), HeadError> {
    loop {
        let start = buf.len();
        if read_more(client, buf).await? == 0 {
            return Err(HeadError::Closed);
        }
        // Parse at a line end (and on the first bytes, so garbage is answered at once).
        if start == 0 || buf[start.saturating_sub(1)..].contains(&b'\n') {
            let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let mut parsed = httparse::Request::new(&mut headers);
            match parsed.parse(buf) {
                Ok(httparse::Status::Complete(len)) => {
                    let request = Request {
                        method: parsed.method.unwrap_or_default().to_owned(),
                        target: parsed.path.unwrap_or_default().to_owned(),
                        version: parsed.version.unwrap_or(1),
                        headers: owned(parsed.headers),
                    };
                    return Ok((request, len));
                }
                Ok(httparse::Status::Partial) => {}
                Err(httparse::Error::TooManyHeaders) => return Err(HeadError::TooLarge),
                Err(e) => return Err(HeadError::Malformed(e.to_string())),
            }
        }
        if buf.len() >= HEAD_LIMIT {
            return Err(HeadError::TooLarge);
        }
    }
}

/// Appends what is readable to `buf`, never past [`HEAD_LIMIT`].
async fn read_more<R: AsyncRead + Unpin>(
    from: &mut R,
    buf: &mut Vec<u8>,
) -> Result<usize, HeadError> {
    let start = buf.len();
    buf.resize(HEAD_LIMIT.max(start + 1), 0);
    let read = from.read(&mut buf[start..]).await;
    let n = read.as_ref().map_or(0, |n| *n);
    buf.truncate(start + n);
    read.map_err(|_| HeadError::Io)
}

fn owned(headers: &[httparse::Header<'_>]) -> Vec<(String, Vec<u8>)> {
    headers
        .iter()
        .map(|h| (h.name.to_owned(), h.value.to_vec()))
        .collect()
}

/// Splits `http://authority/path?query` into the authority and the origin-form target.
fn absolute_form(target: &str) -> Result<(&str, String), String> {
    let scheme_end = target.find("://");
    let rest = match scheme_end {
        Some(i) if target[..i].eq_ignore_ascii_case("http") => &target[i + 3..],
        Some(_) => {
            return Err(format!(
                "only http:// requests are forwarded ({target:?}); use CONNECT for https"
            ));
        }
        None => {
            return Err(format!(
                "this is a proxy: send the request in absolute form (`GET http://host/path`), not {target:?}"
            ));
        }
    };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    if authority.contains('@') {
        return Err("credentials in the request URL are not forwarded".into());
    }
    let path = if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("/{path}")
    };
    Ok((authority, path))
}

/// `host:port` (`[v6]:port`); without a port `default`, or `None` if a port is required.
pub(super) fn split_authority(text: &str, default: Option<u16>) -> Option<(Host, u16)> {
    let (host, port) = if let Some(v6) = text.strip_prefix('[') {
        let (inside, after) = v6.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => Some(p),
            None if after.is_empty() => None,
            None => return None,
        };
        (&text[..inside.len() + 2], port)
    } else {
        match text.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (text, None),
        }
    };
    let port = match port {
        Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
            p.parse::<u16>().ok()?
        }
        Some(_) => return None,
        None => default?,
    };
    (port != 0).then_some(())?;
    Some((Host::parse(host)?, port))
}

/// The tokens of every `Connection` header, lowercased.
fn connection_tokens(headers: &[(String, Vec<u8>)]) -> Vec<String> {
    headers
        .iter()
        .filter(|(name, _)| name.eq_ignore_ascii_case("connection"))
        .flat_map(|(_, value)| {
            String::from_utf8_lossy(value)
                .split(',')
                .map(|t| t.trim().to_ascii_lowercase())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Whether a header is hop-by-hop (dropped when relaying), given the `Connection` tokens.
fn hop_by_hop(name: &str, tokens: &[String], upgrading: bool) -> bool {
    let name = name.to_ascii_lowercase();
    if matches!(
        name.as_str(),
        "connection"
            | "keep-alive"
            | "proxy-connection"
            | "proxy-authorization"
            | "proxy-authenticate"
            | "te"
    ) {
        return true;
    }
    if name == "upgrade" {
        // Kept only for an upgrade, whether or not `Connection` names it.
        return !upgrading;
    }
    tokens.contains(&name)
}

/// The request as the upstream sees it: origin form, our `Host`, `Connection: close`.
fn origin_head(request: &Request, authority: &str, path: String) -> Vec<u8> {
    let tokens = connection_tokens(&request.headers);
    let upgrading = tokens.iter().any(|t| t == "upgrade")
        && request
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("upgrade"));
    let mut head = format!(
        "{} {path} HTTP/1.{}\r\nHost: {authority}\r\n",
        request.method, request.version
    )
    .into_bytes();
    for (name, value) in &request.headers {
        if name.eq_ignore_ascii_case("host") || hop_by_hop(name, &tokens, upgrading) {
            continue;
        }
        head.extend_from_slice(name.as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value);
        head.extend_from_slice(b"\r\n");
    }
    let connection: &[u8] = if upgrading {
        b"Connection: upgrade\r\n\r\n"
    } else {
        b"Connection: close\r\n\r\n"
    };
    head.extend_from_slice(connection);
    head
}

/// Relays the upstream's response heads: interim ones (`100 Continue`) as they are, the
/// final one with `Connection: close`; a `101` as it is (a tunnel follows). Whatever was
/// read past the head is written after it. `false` if there was no response to relay (the
/// client then got a 502, if nothing had been sent yet).
async fn relay_response_head<R, W>(upstream: &mut R, client: &mut W) -> bool
where
    R: AsyncRead + Unpin,
    W: tokio::io::AsyncWrite + Unpin,
{
    let mut buf = Vec::with_capacity(4096);
    let mut relayed_any = false;
    loop {
        let parsed = loop {
            let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let mut response = httparse::Response::new(&mut headers);
            match response.parse(&buf) {
                Ok(httparse::Status::Complete(len)) => {
                    let code = response.code.unwrap_or(0);
                    let head = if (100..200).contains(&code) {
                        buf[..len].to_vec()
                    } else {
                        final_head(&response)
                    };
                    break Some((code, len, head));
                }
                Ok(httparse::Status::Partial) if buf.len() < HEAD_LIMIT => {}
                _ => break None,
            }
            match read_more(upstream, &mut buf).await {
                Ok(n) if n > 0 => {}
                _ => break None,
            }
        };
        let Some((code, len, head)) = parsed else {
            if !relayed_any {
                let body = "the upstream sent no valid HTTP response";
                let _ = client
                    .write_all(&response(502, "Bad Gateway", "", body))
                    .await;
            }
            return false;
        };
        relayed_any = true;
        if client.write_all(&head).await.is_err() {
            return false;
        }
        buf.drain(..len);
        if code == 101 || !(100..200).contains(&code) {
            return client.write_all(&buf).await.is_ok();
        }
    }
}

/// A final response head with its hop-by-hop headers replaced by `Connection: close`.
fn final_head(response: &httparse::Response<'_, '_>) -> Vec<u8> {
    let headers = owned(response.headers);
    let tokens = connection_tokens(&headers);
    let mut head = format!(
        "HTTP/1.{} {} {}\r\n",
        response.version.unwrap_or(1),
        response.code.unwrap_or(0),
        response.reason.unwrap_or("")
    )
    .into_bytes();
    for (name, value) in &headers {
        if hop_by_hop(name, &tokens, false) {
            continue;
        }
        head.extend_from_slice(name.as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value);
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(b"Connection: close\r\n\r\n");
    head
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
