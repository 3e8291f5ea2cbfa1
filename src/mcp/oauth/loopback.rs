//! The redirect target of the browser step: a listener on `127.0.0.1` (RFC 8252 §7.3, a
//! loopback redirect URI on a port of its own) that answers the authorization server's
//! redirect with a page saying the browser can be closed, and hands the redirect's URL on.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The path the redirect URI names.
const CALLBACK_PATH: &str = "/callback";

/// Largest request head read from a browser.
const MAX_HEAD: usize = 16 * 1024;

/// A bound redirect listener.
pub struct Loopback {
    listener: TcpListener,
    redirect_uri: String,
}

impl Loopback {
    /// Binds a free port on `127.0.0.1`.
    pub async fn bind() -> std::io::Result<Loopback> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        Ok(Loopback {
            listener,
            redirect_uri: format!("http://127.0.0.1:{port}{CALLBACK_PATH}"),
        })
    }

    /// `http://127.0.0.1:PORT/callback`.
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// Waits for the redirect and returns its full URL (with `code` and `state`, or the
    /// authorization server's `error`); other requests (a browser's `favicon.ico`) get a 404.
    pub async fn redirected(&self) -> std::io::Result<String> {
        loop {
            let (mut stream, _) = self.listener.accept().await?;
            let Some(target) = request_target(&mut stream).await else {
                continue;
            };
            if target.split('?').next() != Some(CALLBACK_PATH) {
                respond(&mut stream, "404 Not Found", "Not found.").await;
                continue;
            }
            respond(
                &mut stream,
                "200 OK",
                "dsh-tools received the authorization. You can close this window.",
            )
            .await;
            let base = self.redirect_uri.trim_end_matches(CALLBACK_PATH);
            return Ok(format!("{base}{target}"));
        }
    }
}

/// The request target of a `GET` (its path and query), or `None` for anything else.
async fn request_target(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut chunk = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
        let read = stream.read(&mut chunk).await.ok()?;
        if read == 0 {
            break;
        }
        head.extend_from_slice(&chunk[..read]);
    }
    let line = head.split(|&b| b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?.trim_end();
    let mut parts = line.split(' ');
    match (parts.next(), parts.next()) {
        (Some("GET"), Some(target)) if target.starts_with('/') => Some(target.to_owned()),
        _ => None,
    }
}

async fn respond(stream: &mut TcpStream, status: &str, text: &str) {
    let body = format!("<!doctype html><title>dsh-tools</title><p>{text}</p>\n");
    let reply = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(reply.as_bytes()).await;
    let _ = stream.shutdown().await;
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_redirect_url_is_handed_on_after_other_requests_get_404() {
        let loopback = Loopback::bind().await.unwrap();
        let uri = loopback.redirect_uri().to_owned();
        assert!(uri.starts_with("http://127.0.0.1:") && uri.ends_with("/callback"));
        let addr = uri
            .trim_start_matches("http://")
            .trim_end_matches("/callback")
            .to_owned();
        let browser = tokio::spawn(async move {
            let mut replies = Vec::new();
            for target in ["/favicon.ico", "/callback?code=c1&state=s1"] {
                let mut stream = TcpStream::connect(&addr).await.unwrap();
                let request = format!("GET {target} HTTP/1.1\r\nHost: {addr}\r\n\r\n");
                stream.write_all(request.as_bytes()).await.unwrap();
                let mut reply = String::new();
                stream.read_to_string(&mut reply).await.unwrap();
                replies.push(reply.lines().next().unwrap_or_default().to_owned());
            }
            replies
        });
        let redirected = loopback.redirected().await.unwrap();
        assert_eq!(redirected, format!("{uri}?code=c1&state=s1"));
        assert_eq!(
            browser.await.unwrap(),
            ["HTTP/1.1 404 Not Found", "HTTP/1.1 200 OK"]
        );
    }
}
