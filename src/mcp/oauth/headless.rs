//! `--oauth-headless`: the browser step without a browser, for authorization servers that
//! approve without a person (test and CI servers, the conformance suite's): the
//! authorization URL is requested and its redirects followed until one points at the
//! redirect URI, whose URL (with `code` and `state`) is the result. No page is rendered,
//! no form submitted: a server that answers with a page needs a person.

use url::Url;

/// Most redirects followed before giving up.
const MAX_REDIRECTS: usize = 10;

/// Follows `authorization_url`'s redirects to `redirect_uri`; returns the redirect's URL.
pub async fn follow(authorization_url: &str, redirect_uri: &str) -> Result<String, String> {
    // reqwest has no crypto provider of its own (see `McpHost::start`); installing `ring`'s
    // again is a no-op.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| format!("cannot build an HTTP client: {e}"))?;
    let mut at = Url::parse(authorization_url)
        .map_err(|e| format!("the authorization URL is not a URL: {e}"))?;
    for _ in 0..MAX_REDIRECTS {
        let response = client
            .get(at.clone())
            .send()
            .await
            .map_err(|e| format!("requesting {} failed: {e}", shown(&at)))?;
        let status = response.status();
        if !status.is_redirection() {
            return Err(format!(
                "{} answered {status} instead of redirecting back (it needs a person: run without --oauth-headless)",
                shown(&at)
            ));
        }
        let location = response
            .headers()
            .get(http::header::LOCATION)
            .and_then(|value| value.to_str().ok())
            .ok_or_else(|| format!("{} redirected without a Location", shown(&at)))?;
        let next = at
            .join(location)
            .map_err(|e| format!("{} redirected to an invalid URL: {e}", shown(&at)))?;
        if next.as_str().starts_with(redirect_uri) {
            return Ok(next.into());
        }
        at = next;
    }
    Err(format!(
        "the authorization server redirected more than {MAX_REDIRECTS} times"
    ))
}

/// A URL without its query (where the state and code challenge are).
fn shown(url: &Url) -> String {
    let mut url = url.clone();
    url.set_query(None);
    url.into()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    /// An authorization server answering each request with the next of `replies` (a status
    /// line and its headers); returns its base URL.
    async fn server(replies: Vec<String>) -> String {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move {
            for reply in replies {
                let (mut stream, _) = listener.accept().await.unwrap();
                let mut head = [0u8; 4096];
                let _ = stream.read(&mut head).await.unwrap();
                let reply = format!("{reply}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                stream.write_all(reply.as_bytes()).await.unwrap();
            }
        });
        base
    }

    #[tokio::test]
    async fn redirects_are_followed_until_the_redirect_uri() {
        let redirect_uri = "http://127.0.0.1:9/callback";
        let base = server(vec![
            "HTTP/1.1 302 Found\r\nLocation: /consent?step=2".into(),
            format!("HTTP/1.1 303 See Other\r\nLocation: {redirect_uri}?code=c&state=s"),
        ])
        .await;
        let followed = follow(&format!("{base}/authorize?x=1"), redirect_uri).await;
        assert_eq!(followed, Ok(format!("{redirect_uri}?code=c&state=s")));
    }

    #[tokio::test]
    async fn a_page_instead_of_a_redirect_needs_a_person() {
        let base = server(vec!["HTTP/1.1 200 OK\r\nContent-Type: text/html".into()]).await;
        let error = follow(
            &format!("{base}/authorize?state=secret"),
            "http://127.0.0.1:9/callback",
        )
        .await
        .unwrap_err();
        assert_eq!(
            error,
            format!(
                "{base}/authorize answered 200 OK instead of redirecting back (it needs a person: run without --oauth-headless)"
            )
        );
    }
}
