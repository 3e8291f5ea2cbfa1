//! A `url` server's endpoint: its headers with `${VAR}` (and `${VAR:-default}`) expanded from the host's
//! environment and its bearer token, resolved once when its supervisor starts, the rmcp
//! Streamable HTTP transport built from them for each connection, and the redaction that
//! keeps those values out of every log line, status and error.

use super::oauth::{Authorized, Browser, ServerAuth, Settings};
use crate::config::expand::expand;
use dsh_tools_protocol::McpServerConfig;
use http::{HeaderName, HeaderValue};
use rmcp::service::ClientInitializeError;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransportConfig, StreamableHttpError,
};
use rmcp::transport::{DynamicTransportError, StreamableHttpClientTransport};
use std::collections::HashMap;
use std::sync::Arc;

/// Shortest secret that is redacted wherever it appears (shorter values, such as `1`,
/// would blank unrelated text and say little anyway).
const MIN_REDACTED: usize = 4;

/// What the host sends to one remote server.
#[derive(Clone)]
pub struct Remote {
    url: String,
    bearer: Option<String>,
    headers: HashMap<HeaderName, HeaderValue>,
    secrets: Vec<String>,
    /// Its `oauth` settings, the client secret expanded.
    settings: Settings,
    /// OAuth, for a server configured without credentials of its own.
    oauth: Option<ServerAuth>,
    /// The OAuth client once authorized (kept across reconnections).
    authorized: Arc<tokio::sync::Mutex<Option<Authorized>>>,
}

impl Remote {
    /// Resolves `config`'s headers and token with `env` (the host's environment); the
    /// error names the header or variable, never a value.
    pub fn resolve(
        config: &McpServerConfig,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Remote, String> {
        let url = config.url.clone().unwrap_or_default();
        let mut secrets = Vec::new();
        let mut headers = HashMap::new();
        for (name, template) in &config.headers {
            let value = expand(template, &env).map_err(|var| {
                format!("header \"{name}\" references the unset environment variable {var}")
            })?;
            let header = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("\"{name}\" is not a valid HTTP header name"))?;
            let parsed = HeaderValue::from_str(&value)
                .map_err(|_| format!("header \"{name}\" is not a valid HTTP header value"))?;
            if header == http::header::AUTHORIZATION
                && let Some(token) = value.strip_prefix("Bearer ")
            {
                secrets.push(token.to_owned());
            }
            secrets.push(value);
            headers.insert(header, parsed);
        }
        let bearer = match &config.bearer_token_env {
            Some(var) => {
                let token = env(var).filter(|token| !token.is_empty()).ok_or_else(|| {
                    format!("bearerTokenEnv: the environment variable {var} is unset or empty")
                })?;
                if HeaderValue::from_str(&format!("Bearer {token}")).is_err() {
                    return Err(format!(
                        "bearerTokenEnv: {var} does not hold a valid HTTP header value"
                    ));
                }
                secrets.push(token.clone());
                Some(token)
            }
            None => None,
        };
        let mut settings = Settings::default();
        if let Some(oauth) = &config.oauth {
            settings.client_id = oauth.client_id.clone();
            settings.client_metadata_url = oauth.client_metadata_url.clone();
            settings.scopes = oauth.scopes.clone();
            if let Some(template) = &oauth.client_secret {
                let secret = expand(template, &env).map_err(|var| {
                    format!("oauth.clientSecret references the unset environment variable {var}")
                })?;
                secrets.push(secret.clone());
                settings.client_secret = Some(secret);
            }
        }
        secrets.retain(|secret| secret.len() >= MIN_REDACTED);
        // Longest first, so a value containing another is replaced whole.
        secrets.sort_by_key(|secret| std::cmp::Reverse(secret.len()));
        Ok(Remote {
            url,
            bearer,
            headers,
            secrets,
            settings,
            oauth: None,
            authorized: Arc::default(),
        })
    }

    /// Lets server `name` authorize with OAuth when a 401 asks for it, unless it was
    /// configured with a token or an `Authorization` header of its own; its browser steps
    /// go to `browser`.
    pub fn with_oauth(mut self, name: &str, browser: Arc<Browser>) -> Remote {
        if self.bearer.is_none() && !self.headers.contains_key(&http::header::AUTHORIZATION) {
            let settings = self.settings.clone();
            self.oauth = Some(ServerAuth::new(name, &self.url, settings, browser));
        }
        self
    }

    /// The server's OAuth state, when it may use OAuth.
    pub fn oauth(&self) -> Option<&ServerAuth> {
        self.oauth.as_ref()
    }

    /// The OAuth client of this server: the one authorized earlier in this process, else
    /// one with the tokens saved by an earlier run, else `None`.
    pub async fn authorized(&self) -> Option<Authorized> {
        let oauth = self.oauth.as_ref()?;
        let mut authorized = self.authorized.lock().await;
        if authorized.is_none() {
            *authorized = oauth.saved().await;
        }
        authorized.clone()
    }

    /// Keeps `client` for this server's later connections.
    pub async fn set_authorized(&self, client: Authorized) {
        *self.authorized.lock().await = Some(client);
    }

    /// A fresh transport sending `client`'s OAuth token.
    pub fn authorized_transport(
        &self,
        client: Authorized,
    ) -> StreamableHttpClientTransport<Authorized> {
        StreamableHttpClientTransport::with_client(client, self.config())
    }

    /// A fresh transport (one per connection: rmcp keeps the session id inside it and
    /// re-initializes on its own when the server reports the session expired).
    pub fn transport(&self) -> StreamableHttpClientTransport<reqwest::Client> {
        StreamableHttpClientTransport::from_config(self.config())
    }

    fn config(&self) -> StreamableHttpClientTransportConfig {
        let mut config = StreamableHttpClientTransportConfig::with_uri(self.url.as_str())
            .custom_headers(self.headers.clone())
            .reinit_on_expired_session(true);
        if let Some(token) = &self.bearer {
            config = config.auth_header(token.clone());
        }
        config
    }

    /// The URL without its query and fragment (where a key would be), for messages.
    pub fn shown_url(&self) -> &str {
        let end = self.url.find(['?', '#']).unwrap_or(self.url.len());
        &self.url[..end]
    }

    /// The values to keep out of text shown to anyone.
    pub fn secrets(&self) -> Vec<String> {
        self.secrets.clone()
    }
}

/// What went wrong on the transport, in words: the HTTP client's own causes (a refused
/// connection, a TLS failure), the status a server answered, or an unexpected content type
/// (without rmcp's type names).
pub fn describe(error: &DynamicTransportError) -> String {
    match error
        .error
        .downcast_ref::<StreamableHttpError<reqwest::Error>>()
    {
        Some(StreamableHttpError::Client(e)) => with_causes(e),
        Some(StreamableHttpError::AuthRequired(_)) => {
            "the server answered 401 Unauthorized (check its bearer token or Authorization header)"
                .to_owned()
        }
        Some(StreamableHttpError::InsufficientScope(_)) => {
            "the server answered 403 Forbidden".to_owned()
        }
        Some(other) => with_causes(other),
        None => with_causes(error.error.as_ref()),
    }
}

/// Why a handshake failed, in words.
pub fn describe_handshake(error: &ClientInitializeError) -> String {
    match error {
        ClientInitializeError::TransportError { error, context } => {
            format!("{} (when trying to {context})", describe(error))
        }
        other => with_causes(other),
    }
}

/// An error's message followed by its sources' (a reqwest error says "error sending
/// request" on top and "Connection refused" only below).
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// Replaces every secret in `text` by `***`.
pub fn redact(secrets: &[String], text: String) -> String {
    if !secrets.iter().any(|secret| text.contains(secret.as_str())) {
        return text;
    }
    secrets
        .iter()
        .fold(text, |text, secret| text.replace(secret.as_str(), "***"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env(var: &str) -> Option<String> {
        match var {
            "TOKEN" => Some("s3cr3t-value".into()),
            "TEAM" => Some("core".into()),
            _ => None,
        }
    }

    #[test]
    fn header_values_and_tokens_are_redacted_and_errors_name_no_value() {
        let config: McpServerConfig = serde_json::from_value(json!({
            "url": "http://127.0.0.1:1/mcp",
            "headers": { "Authorization": "Bearer ${TOKEN}", "X-Team": "${TEAM}" },
            "bearerTokenEnv": "TOKEN"
        }))
        .unwrap();
        let remote = Remote::resolve(&config, env).unwrap();
        let shown = redact(
            &remote.secrets(),
            "sent Bearer s3cr3t-value to core".to_owned(),
        );
        assert_eq!(shown, "sent *** to ***");
        let mut missing = config.clone();
        missing.bearer_token_env = Some("NOPE".into());
        let error = Remote::resolve(&missing, env).err().unwrap();
        assert_eq!(
            error,
            "bearerTokenEnv: the environment variable NOPE is unset or empty"
        );
        missing.headers.insert("X-Other".into(), "${GONE}".into());
        let error = Remote::resolve(&missing, env).err().unwrap();
        assert_eq!(
            error,
            "header \"X-Other\" references the unset environment variable GONE"
        );
    }
}
