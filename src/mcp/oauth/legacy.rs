//! Authorization server metadata as servers of the 2025-03-26 MCP revision publish it: no
//! protected resource metadata, and RFC 8414 metadata at the server's origin whose `issuer`
//! may carry a path (`https://host/oauth`). rmcp holds the issuer to the URL the metadata
//! was found at (RFC 8414 §3.3) and refuses it; clients of that revision took it. Taken
//! here too, but only when the issuer is of that same origin (scheme, host and port), so
//! the party that answered is the one the issuer names.

use rmcp::transport::auth::AuthorizationMetadata;
use url::Url;

/// Whether `received` (the metadata's issuer) is of the origin of `expected` (the issuer
/// rmcp derived from the server's URL).
pub(super) fn same_origin(expected: &str, received: &str) -> bool {
    match (Url::parse(expected), Url::parse(received)) {
        (Ok(expected), Ok(received)) => expected.origin() == received.origin(),
        _ => false,
    }
}

/// The metadata `origin` publishes at `/.well-known/oauth-authorization-server`.
pub(super) async fn metadata_at(origin: &str) -> Result<AuthorizationMetadata, String> {
    let url = Url::parse(origin)
        .and_then(|origin| origin.join("/.well-known/oauth-authorization-server"))
        .map_err(|e| format!("{origin} is not a URL: {e}"))?;
    let failed = |e: reqwest::Error| format!("reading {url}: {e}");
    let response = reqwest::Client::new()
        .get(url.clone())
        .send()
        .await
        .map_err(failed)?
        .error_for_status()
        .map_err(failed)?;
    let body = response.bytes().await.map_err(failed)?;
    serde_json::from_slice(&body)
        .map_err(|e| format!("{url} is not authorization server metadata: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_issuer_of_the_same_origin_is_taken() {
        let origin = "http://localhost:45049/";
        assert!(same_origin(origin, "http://localhost:45049/oauth"));
        assert!(!same_origin(origin, "http://localhost:45050/oauth"));
        assert!(!same_origin(origin, "https://localhost:45049/oauth"));
        assert!(!same_origin(origin, "http://evil.example/oauth"));
        assert!(!same_origin(origin, "not a url"));
    }
}
