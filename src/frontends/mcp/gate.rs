//! Who may use `dsh-tools mcp --http`: a request passes with `Authorization: Bearer
//! <token>`, with the bare token in the header named by `--http-token-header` (for clients
//! that can send a fixed header but no bearer scheme), or, with `--http-no-auth-loopback`,
//! from a loopback peer. Tokens are compared in constant time. A refusal is 401 with a
//! `WWW-Authenticate: Bearer` challenge whose `error_description` says what is missing and
//! where the token is to be found, so that a client shows it instead of starting OAuth
//! (there is no authorization server to discover).

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use std::convert::Infallible;
use std::net::IpAddr;

/// Where the token of a server comes from, as the 401 tells a client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenSource {
    /// Generated at startup and printed to stderr.
    Printed,
    /// Read from this environment variable of the server.
    Env(String),
}

/// How `dsh-tools mcp --http` admits requests.
#[derive(Clone, Debug)]
pub struct Gate {
    /// `Bearer <token>`, the whole `Authorization` value expected.
    bearer: Box<[u8]>,
    /// The token alone, expected in `header` when there is one.
    token: Box<[u8]>,
    header: Option<HeaderName>,
    loopback_free: bool,
    source: TokenSource,
}

impl Gate {
    /// Admits `token` as a bearer token, and also bare in `header` when given; loopback
    /// peers without a token too when `loopback_free`.
    pub fn new(
        token: &str,
        source: TokenSource,
        header: Option<HeaderName>,
        loopback_free: bool,
    ) -> Gate {
        Gate {
            bearer: format!("Bearer {token}").into_bytes().into_boxed_slice(),
            token: token.as_bytes().into(),
            header,
            loopback_free,
            source,
        }
    }

    /// Whether loopback peers pass without a token.
    pub fn loopback_free(&self) -> bool {
        self.loopback_free
    }

    /// Whether a request with `headers` from `peer` may pass.
    pub fn admits(&self, headers: &HeaderMap, peer: IpAddr) -> bool {
        if self.loopback_free && peer.is_loopback() {
            return true;
        }
        let bearer = headers
            .get(header::AUTHORIZATION)
            .is_some_and(|value| constant_time_eq(value.as_bytes(), &self.bearer));
        let named = self.header.as_ref().is_some_and(|name| {
            headers
                .get(name)
                .is_some_and(|value| constant_time_eq(value.as_bytes(), &self.token))
        });
        bearer || named
    }

    /// The 401 for a request that did not pass (`headers` tell whether it presented a
    /// token at all).
    pub fn refusal(&self, headers: &HeaderMap) -> Response<BoxBody<Bytes, Infallible>> {
        let presented = headers.contains_key(header::AUTHORIZATION)
            || self
                .header
                .as_ref()
                .is_some_and(|h| headers.contains_key(h));
        let description = self.description(presented);
        let challenge = format!(
            "Bearer realm=\"dsh-tools\", error=\"invalid_token\", error_description=\"{description}\""
        );
        let mut response =
            Response::new(Full::new(Bytes::from(format!("Unauthorized: {description}\n"))).boxed());
        *response.status_mut() = StatusCode::UNAUTHORIZED;
        if let Ok(value) = HeaderValue::from_str(&challenge) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, value);
        }
        response
    }

    /// What the client lacks and where the token is (ASCII without quotes or backslashes,
    /// so that it stays a valid quoted-string).
    fn description(&self, presented: bool) -> String {
        let what = if presented {
            "the token presented is not this server's bearer token"
        } else {
            "a bearer token is required"
        };
        let how = match &self.header {
            Some(name) => format!("send Authorization: Bearer TOKEN or {name}: TOKEN"),
            None => "send Authorization: Bearer TOKEN".to_owned(),
        };
        let source = match &self.source {
            TokenSource::Printed => {
                "TOKEN is the one dsh-tools mcp printed to its stderr at startup (dsh-tools mcp: bearer token ...)".to_owned()
            }
            TokenSource::Env(var) => format!(
                "TOKEN is the value of the environment variable {var} that dsh-tools mcp was started with"
            ),
        };
        let description = format!("{what}; {how}; {source}");
        description.replace(['"', '\\'], "'")
    }
}

/// Equality whose time depends only on the lengths.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(n, v)| (n.parse::<HeaderName>().unwrap(), v.parse().unwrap()))
            .collect()
    }

    const REMOTE: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, 1));
    const LOOPBACK: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

    #[test]
    fn tokens_compare_whole() {
        assert!(constant_time_eq(b"Bearer abc", b"Bearer abc"));
        assert!(!constant_time_eq(b"Bearer abd", b"Bearer abc"));
        assert!(!constant_time_eq(b"Bearer ab", b"Bearer abc"));
        assert!(!constant_time_eq(b"", b"Bearer abc"));
    }

    #[test]
    fn the_bearer_token_or_the_named_header_admits() {
        let gate = Gate::new(
            "abc",
            TokenSource::Printed,
            Some("x-api-key".parse().unwrap()),
            false,
        );
        assert!(gate.admits(&headers(&[("authorization", "Bearer abc")]), REMOTE));
        assert!(gate.admits(&headers(&[("x-api-key", "abc")]), REMOTE));
        assert!(!gate.admits(&headers(&[("x-api-key", "Bearer abc")]), REMOTE));
        assert!(!gate.admits(&headers(&[("x-other", "abc")]), REMOTE));
        assert!(!gate.admits(&headers(&[("authorization", "abc")]), LOOPBACK));
        let plain = Gate::new("abc", TokenSource::Printed, None, false);
        assert!(!plain.admits(&headers(&[("x-api-key", "abc")]), REMOTE));
    }

    #[test]
    fn loopback_peers_pass_only_when_opted_in() {
        let free = Gate::new("abc", TokenSource::Printed, None, true);
        assert!(free.admits(&HeaderMap::new(), LOOPBACK));
        assert!(free.admits(&HeaderMap::new(), "::1".parse().unwrap()));
        assert!(!free.admits(&HeaderMap::new(), REMOTE));
        let strict = Gate::new("abc", TokenSource::Printed, None, false);
        assert!(!strict.admits(&HeaderMap::new(), LOOPBACK));
    }

    #[test]
    fn the_challenge_says_what_is_missing_and_where_the_token_is() {
        let gate = Gate::new("abc", TokenSource::Env("MY_TOKEN".into()), None, false);
        let refused = gate.refusal(&HeaderMap::new());
        assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
        let challenge = refused.headers()[header::WWW_AUTHENTICATE]
            .to_str()
            .unwrap();
        assert!(
            challenge.starts_with("Bearer realm=\"dsh-tools\", error=\"invalid_token\", error_description=\"a bearer token is required;"),
            "{challenge}"
        );
        assert!(challenge.contains("MY_TOKEN"), "{challenge}");
        let wrong = gate.refusal(&headers(&[("authorization", "Bearer nope")]));
        let challenge = wrong.headers()[header::WWW_AUTHENTICATE].to_str().unwrap();
        assert!(
            challenge.contains("is not this server's bearer token"),
            "{challenge}"
        );
    }
}
