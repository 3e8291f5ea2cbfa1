//! One `web_fetch` retrieval: HTTP/1.1 (TLS for `https`) over a connection the egress policy
//! made ([`Egress::open`]: the host and port decided, the name resolved by the host, no
//! address of this machine or the cloud's metadata service), redirects followed by hand so
//! each hop is decided again, the body read up to a cap. Nothing here trusts the page: the
//! head and body are bounded, the whole fetch has one deadline, and TLS is verified against
//! the system's roots (`SSL_CERT_FILE` / `SSL_CERT_DIR` name others).

use crate::egress::Egress;
use crate::egress::policy::Host;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use url::Url;

/// What one fetch brought back.
#[derive(Debug)]
pub struct Fetched {
    /// The URL the body came from (after redirects).
    pub url: Url,
    /// Its HTTP status.
    pub status: u16,
    /// Its `Content-Type`, if any.
    pub content_type: Option<String>,
    /// The body (at most the cap).
    pub body: Vec<u8>,
    /// Whether the body was cut at the cap.
    pub truncated: bool,
}

/// Why a fetch failed, in words the model can act on.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The policy refused a hop (the first or a redirect's).
    #[error("{0}")]
    Blocked(String),
    /// Anything else: no address, no connection, TLS, a malformed answer, the deadline.
    #[error("{0}")]
    Failed(String),
}

/// The bounds of one fetch.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_bytes: u64,
    pub timeout: Duration,
    pub max_redirects: u32,
}

/// Fetches `url` (http or https), following up to `limits.max_redirects` redirects.
pub async fn fetch(egress: &Egress, url: &str, limits: Limits) -> Result<Fetched, FetchError> {
    let mut url = parse(url)?;
    let work = async {
        let mut hops = 0;
        loop {
            let response = request(egress, &url).await?;
            let status = response.status();
            let next = match status.is_redirection() {
                true => redirect_target(&url, &response)?,
                false => None,
            };
            if let Some(next) = next {
                hops += 1;
                if hops > limits.max_redirects {
                    return Err(FetchError::Failed(format!(
                        "more than {} redirects (the last to {next})",
                        limits.max_redirects
                    )));
                }
                url = next;
                continue;
            }
            return read_body(url, response, limits.max_bytes).await;
        }
    };
    tokio::time::timeout(limits.timeout, work)
        .await
        .unwrap_or_else(|_| {
            Err(FetchError::Failed(format!(
                "no complete answer within {} ms",
                limits.timeout.as_millis()
            )))
        })
}

/// An absolute http(s) URL.
fn parse(text: &str) -> Result<Url, FetchError> {
    let url = Url::parse(text.trim())
        .map_err(|e| FetchError::Failed(format!("\"{text}\" is not a URL: {e}")))?;
    match url.scheme() {
        "http" | "https" if url.host_str().is_some() => Ok(url),
        "http" | "https" => Err(FetchError::Failed(format!("\"{text}\" names no host"))),
        other => Err(FetchError::Failed(format!(
            "\"{text}\": only http and https URLs are fetched, not {other}"
        ))),
    }
}

/// The redirect's absolute target, or `None` when a 3xx carries no `Location`.
fn redirect_target(
    from: &Url,
    response: &hyper::Response<Incoming>,
) -> Result<Option<Url>, FetchError> {
    let Some(location) = response.headers().get(hyper::header::LOCATION) else {
        return Ok(None);
    };
    let location = location
        .to_str()
        .map_err(|_| FetchError::Failed("a redirect with an unreadable Location".to_owned()))?;
    let next = from
        .join(location)
        .map_err(|e| FetchError::Failed(format!("a redirect to \"{location}\": {e}")))?;
    parse(next.as_str()).map(Some)
}

/// One GET of `url` on a fresh connection the policy admitted.
async fn request(egress: &Egress, url: &Url) -> Result<hyper::Response<Incoming>, FetchError> {
    let host_text = url.host_str().unwrap_or_default();
    let host = Host::parse(host_text.trim_start_matches('[').trim_end_matches(']'))
        .ok_or_else(|| FetchError::Failed(format!("\"{host_text}\" is not a host name")))?;
    let port = url.port_or_known_default().unwrap_or(80);
    let stream = egress
        .open(&host, port)
        .await
        .map_err(|failure| match failure {
            crate::egress::Failure::Blocked(blocked) => FetchError::Blocked(blocked.message()),
            crate::egress::Failure::Unreachable(why) => FetchError::Failed(why),
        })?;
    let authority = match url.port() {
        Some(port) => format!("{host_text}:{port}"),
        None => host_text.to_owned(),
    };
    let path = match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    };
    let request = hyper::Request::get(path)
        .header(hyper::header::HOST, &authority)
        .header(
            hyper::header::USER_AGENT,
            concat!("dsh-tools/", env!("CARGO_PKG_VERSION")),
        )
        .header(
            hyper::header::ACCEPT,
            "text/html, text/markdown;q=0.9, text/plain;q=0.8, */*;q=0.5",
        )
        .header(hyper::header::ACCEPT_ENCODING, "identity")
        .header(hyper::header::CONNECTION, "close")
        .body(http_body_util::Empty::<bytes::Bytes>::new())
        .map_err(|e| FetchError::Failed(format!("cannot make the request: {e}")))?;
    if url.scheme() == "https" {
        let name = rustls::pki_types::ServerName::try_from(
            host_text
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned(),
        )
        .map_err(|e| FetchError::Failed(format!("\"{host_text}\": {e}")))?;
        let tls = tokio_rustls::TlsConnector::from(tls_config()?)
            .connect(name, stream)
            .await
            .map_err(|e| FetchError::Failed(format!("TLS with {authority} failed: {e}")))?;
        send(tls, request).await
    } else {
        send(stream, request).await
    }
}

/// Sends `request` over `io` (HTTP/1.1) and returns the response head.
async fn send<IO>(
    io: IO,
    request: hyper::Request<http_body_util::Empty<bytes::Bytes>>,
) -> Result<hyper::Response<Incoming>, FetchError>
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::Builder::new()
        .max_buf_size(crate::egress::HEAD_LIMIT.max(8192))
        .handshake(TokioIo::new(io))
        .await
        .map_err(|e| FetchError::Failed(format!("the connection failed: {e}")))?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    sender
        .send_request(request)
        .await
        .map_err(|e| FetchError::Failed(format!("no valid answer: {e}")))
}

/// Reads the body up to `max_bytes` (the rest is dropped with the connection).
async fn read_body(
    url: Url,
    response: hyper::Response<Incoming>,
    max_bytes: u64,
) -> Result<Fetched, FetchError> {
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get(hyper::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let mut body = response.into_body();
    let mut bytes = Vec::new();
    let mut truncated = false;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| FetchError::Failed(format!("the body broke off: {e}")))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        let room =
            usize::try_from(max_bytes.saturating_sub(bytes.len() as u64)).unwrap_or(usize::MAX);
        if data.len() > room {
            bytes.extend_from_slice(&data[..room]);
            truncated = true;
            break;
        }
        bytes.extend_from_slice(&data);
    }
    Ok(Fetched {
        url,
        status,
        content_type,
        body: bytes,
        truncated,
    })
}

/// The TLS client configuration: the system's roots (loaded once), `ring` as the provider.
fn tls_config() -> Result<Arc<rustls::ClientConfig>, FetchError> {
    static CONFIG: OnceLock<Result<Arc<rustls::ClientConfig>, String>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let mut roots = rustls::RootCertStore::empty();
            let loaded = rustls_native_certs::load_native_certs();
            for certificate in loaded.certs {
                let _ = roots.add(certificate);
            }
            if roots.is_empty() {
                return Err("no trusted root certificates were found on this machine".to_owned());
            }
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .map(|builder| {
                    Arc::new(builder.with_root_certificates(roots).with_no_client_auth())
                })
                .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(|e| FetchError::Failed(format!("TLS is unavailable: {e}")))
}
