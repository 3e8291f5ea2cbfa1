//! OAuth for remote (Streamable HTTP) MCP servers, as the MCP authorization spec asks of a
//! client, on rmcp's `auth` support: a server that answers 401 is authorized with the
//! authorization code flow and PKCE. Discovery starts from the 401's `WWW-Authenticate`
//! (`resource_metadata`, RFC 9728) or the well-known protected resource metadata, then the
//! authorization server's metadata (RFC 8414 or OpenID discovery); the client is a
//! configured one, a client ID metadata document (when the server supports them and one is
//! configured) or registered dynamically (RFC 7591).
//!
//! Decisions:
//! - **Only servers without credentials of their own**: a server with `bearerTokenEnv` or an
//!   `Authorization` header is never sent through OAuth; its 401 is a failure.
//! - **The browser step** goes where a person is: to a front end that declared `openUrl`
//!   (`client/openUrl` with the URL and why), to `dsh-tools mcp`'s MCP client that declared
//!   URL elicitation (`elicitation/create`, mode `url`), else printed on stderr, a loopback
//!   redirect listener waiting in every case; or followed by the host itself
//!   (`--oauth-headless` sets [`BrowserStep::Headless`], for servers that approve without a
//!   person).
//! - **Tokens** live in a 0600 file per server under the user's config dir ([`store`]) and
//!   are reused on later runs; rmcp refreshes an expiring token with its refresh token and
//!   saves the new one there. No token, code or secret is logged or shown.
//! - **A 401 that cannot be resolved** (no metadata, registration refused, the person did not
//!   finish within [`AUTHORIZATION_WAIT`]) fails the server for good, naming the cause: a
//!   retry would only open another browser step.

mod headless;
mod legacy;
mod loopback;
pub mod store;

use futures::future::BoxFuture;
use loopback::Loopback;
use parking_lot::RwLock;
use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationRequest, AuthorizationSession,
};
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;
use store::FileStore;

/// How long a person has to finish the browser step.
pub const AUTHORIZATION_WAIT: Duration = Duration::from_secs(300);

/// The client name given in dynamic client registration.
const CLIENT_NAME: &str = "dsh-tools";

/// Where the authorization URL goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BrowserStep {
    /// Printed on stderr for a person to open; a loopback listener receives the redirect.
    #[default]
    Print,
    /// Requested by the host, following redirects (`--oauth-headless`).
    Headless,
}

static STEP: RwLock<BrowserStep> = RwLock::new(BrowserStep::Print);

/// Sets the browser step of every later authorization in this process (a command's flag).
pub fn set_browser_step(step: BrowserStep) {
    *STEP.write() = step;
}

/// Shows a URL to a person: a front end's `client/openUrl`, or `dsh-tools mcp`'s URL
/// elicitation of its MCP client.
pub trait UrlOpener: Send + Sync {
    /// Asks for `url` to be opened for `server`, saying `reason`; an error (or a refusal)
    /// gives the authorization up. The redirect is awaited meanwhile, so an opener that
    /// never answers leaves the person all of [`AUTHORIZATION_WAIT`].
    fn open_url(
        &self,
        server: &str,
        url: &str,
        reason: &str,
    ) -> BoxFuture<'static, Result<(), String>>;

    /// Whether its client may connect only after the servers started (`dsh-tools mcp`, whose
    /// client is served once the first listing settled): then a server waiting for its
    /// browser step counts as settled, and its tools are announced once it is authorized.
    fn awaits_a_client(&self) -> bool {
        false
    }
}

/// Prints the browser step of `server` on stderr, for the person at the terminal (not a log
/// line: a log level may hide it).
pub fn print_browser_step(server: &str, url: &str) {
    let redirect = url::Url::parse(url).ok().and_then(|url| {
        url.query_pairs()
            .find(|(key, _)| key == "redirect_uri")
            .map(|(_, value)| value.into_owned())
    });
    let _ = writeln!(
        std::io::stderr().lock(),
        "dsh-tools: MCP server \"{server}\" needs authorization. Open this URL in a browser:\n  {url}\n(waiting up to {} s for the redirect to {})",
        AUTHORIZATION_WAIT.as_secs(),
        redirect.as_deref().unwrap_or("the loopback listener")
    );
}

/// Where one host's authorization URLs go: its front end's opener, once one is set.
#[derive(Default)]
pub struct Browser {
    opener: RwLock<Option<Arc<dyn UrlOpener>>>,
}

impl Browser {
    /// Sends later authorization URLs to `opener` (`None`: print them).
    pub fn set_opener(&self, opener: Option<Arc<dyn UrlOpener>>) {
        *self.opener.write() = opener;
    }

    fn opener(&self) -> Option<Arc<dyn UrlOpener>> {
        self.opener.read().clone()
    }
}

/// An HTTP client that sends a server's OAuth token and refreshes it.
pub type Authorized = AuthClient<reqwest::Client>;

/// Authorizes a live connection again for the `WWW-Authenticate` of a 403
/// `insufficient_scope` (step-up), so the call that got it can be sent once more.
pub type StepUp = Arc<dyn Fn(String) -> BoxFuture<'static, Result<(), String>> + Send + Sync>;

/// Whether `challenge` asks for more scopes (`error="insufficient_scope"`).
pub fn is_insufficient_scope(challenge: &str) -> bool {
    // The base resolves the challenge's relative URLs, which its error code does not need.
    url::Url::parse("http://localhost/").is_ok_and(|base| {
        rmcp::transport::auth::WWWAuthenticateParams::parse(challenge, &base)
            .is_insufficient_scope()
    })
}

/// A server's `oauth` configuration, its client secret expanded.
#[derive(Clone, Default)]
pub struct Settings {
    /// A pre-registered client.
    pub client_id: Option<String>,
    /// Its secret.
    pub client_secret: Option<String>,
    /// A client ID metadata document's URL.
    pub client_metadata_url: Option<String>,
    /// Scopes to request instead of the server's hint.
    pub scopes: Vec<String>,
}

/// One server's OAuth state: its name, URL, settings and credential file.
#[derive(Clone)]
pub struct ServerAuth {
    name: String,
    url: String,
    settings: Settings,
    store: Option<FileStore>,
    browser: Arc<Browser>,
}

impl ServerAuth {
    /// The OAuth state of server `name` at `url`, its tokens under `store::token_dir()`.
    pub fn new(name: &str, url: &str, settings: Settings, browser: Arc<Browser>) -> ServerAuth {
        ServerAuth {
            name: name.to_owned(),
            url: url.to_owned(),
            settings,
            browser,
            store: store::token_dir().map(|dir| FileStore::new(&dir, name, url)),
        }
    }

    /// A client with the credentials saved by an earlier run, if there are any (metadata is
    /// discovered again to refresh with); `None` without any, or when they cannot be used.
    pub async fn saved(&self) -> Option<Authorized> {
        let store = self.store.clone().filter(FileStore::holds_credentials)?;
        let mut manager = self.manager().await.ok()?;
        manager.set_credential_store(store);
        match manager.initialize_from_store().await {
            Ok(true) => Some(AuthClient::new(reqwest::Client::new(), manager)),
            Ok(false) => None,
            Err(e) => {
                tracing::warn!(target: "mcp", "[{}] saved OAuth credentials are unusable: {}", self.name, describe(&e));
                None
            }
        }
    }

    /// The step-up of a connection sending `authorized`'s tokens: a new authorization for
    /// the challenge's scopes, whose tokens `authorized` (and so the live transport) sends
    /// from then on.
    pub fn step_up(&self, authorized: Authorized) -> StepUp {
        let auth = self.clone();
        Arc::new(move |challenge: String| {
            let (auth, authorized) = (auth.clone(), authorized.clone());
            Box::pin(async move {
                let fresh = auth.authorize(&challenge).await?;
                let manager = Arc::try_unwrap(fresh.auth_manager)
                    .map_err(|_| "the new authorization is still in use".to_owned())?
                    .into_inner();
                *authorized.auth_manager.lock().await = manager;
                Ok(())
            })
        })
    }

    /// Whether the server's first attempt counts as settled while it waits for its browser
    /// step (see [`UrlOpener::awaits_a_client`]).
    pub fn settles_before_the_browser_step(&self) -> bool {
        *STEP.read() == BrowserStep::Print
            && self
                .browser
                .opener()
                .is_some_and(|opener| opener.awaits_a_client())
    }

    /// Runs the authorization code flow for the 401 whose `WWW-Authenticate` is `challenge`;
    /// the tokens are saved before the client is returned.
    pub async fn authorize(&self, challenge: &str) -> Result<Authorized, String> {
        let store = self.store.clone().ok_or(
            "OAuth needs a directory for its tokens: neither XDG_CONFIG_HOME nor HOME is set",
        )?;
        let loopback = Loopback::bind()
            .await
            .map_err(|e| format!("cannot listen for the OAuth redirect on 127.0.0.1: {e}"))?;
        let mut manager = self.manager().await.map_err(|e| describe(&e))?;
        manager.set_credential_store(store);
        let discovery_failed = |why: String| format!("OAuth metadata discovery failed: {why}");
        let metadata = match manager
            .resolve_metadata_from_challenge(Some(challenge))
            .await
        {
            Ok(resolution) => resolution.metadata,
            Err(AuthError::AuthorizationServerMismatch {
                expected_issuer,
                received_issuer,
            }) if legacy::same_origin(&expected_issuer, &received_issuer) => {
                legacy::metadata_at(&expected_issuer)
                    .await
                    .map_err(discovery_failed)?
            }
            Err(e) => return Err(discovery_failed(describe(&e))),
        };
        manager.set_metadata(metadata);
        let request = self.request(loopback.redirect_uri(), challenge);
        let session = AuthorizationSession::new(manager, request)
            .await
            .map_err(|(_, e)| describe(&e))?;
        let url = session.get_authorization_url();
        let step = *STEP.read();
        let redirected = match (step, self.browser.opener()) {
            (BrowserStep::Headless, _) => headless::follow(url, loopback.redirect_uri()).await?,
            (BrowserStep::Print, Some(opener)) => {
                let reason = format!(
                    "The MCP server \"{}\" needs authorization: sign in and approve access for dsh-tools.",
                    self.name
                );
                // The client may answer only once its user is done: the redirect is
                // awaited meanwhile, and a refusal ends the wait.
                let opened = opener.open_url(&self.name, url, &reason);
                let redirected = wait_for(&loopback);
                tokio::pin!(opened, redirected);
                let mut answered = false;
                loop {
                    tokio::select! {
                        answer = &mut opened, if !answered => {
                            answer?;
                            answered = true;
                        }
                        url = &mut redirected => break url?,
                    }
                }
            }
            (BrowserStep::Print, None) => {
                print_browser_step(&self.name, url);
                wait_for(&loopback).await?
            }
        };
        if let Some(refusal) = refused(&redirected) {
            return Err(refusal);
        }
        session
            .handle_callback_url(&redirected)
            .await
            .map_err(|e| format!("the token exchange failed: {}", describe(&e)))?;
        tracing::info!(target: "mcp", "[{}] authorized with OAuth", self.name);
        Ok(AuthClient::new(
            reqwest::Client::new(),
            session.auth_manager,
        ))
    }

    /// The authorization request: the configured client (else a client ID metadata
    /// document, else dynamic registration) and scopes (else rmcp's choice from the
    /// challenge and metadata).
    fn request(&self, redirect_uri: &str, challenge: &str) -> AuthorizationRequest {
        let settings = &self.settings;
        let mut request = AuthorizationRequest::new(redirect_uri)
            .with_client_name(CLIENT_NAME)
            .with_challenge(challenge)
            .with_initial_scope_selection();
        if let Some(client_id) = &settings.client_id {
            request = request.with_preregistered_client(client_id);
            if let Some(secret) = &settings.client_secret {
                request = request.with_client_secret(secret);
            }
        }
        if let Some(url) = &settings.client_metadata_url {
            request = request.with_client_metadata_url(url);
        }
        if !settings.scopes.is_empty() {
            request = request.with_scopes(settings.scopes.clone());
        }
        request
    }

    async fn manager(&self) -> Result<AuthorizationManager, AuthError> {
        AuthorizationManager::new(self.url.as_str()).await
    }
}

/// The redirect, within [`AUTHORIZATION_WAIT`].
async fn wait_for(loopback: &Loopback) -> Result<String, String> {
    tokio::time::timeout(AUTHORIZATION_WAIT, loopback.redirected())
        .await
        .map_err(|_| {
            format!(
                "the authorization was not completed within {} s",
                AUTHORIZATION_WAIT.as_secs()
            )
        })?
        .map_err(|e| format!("the OAuth redirect listener failed: {e}"))
}

/// The authorization server's refusal carried by a redirect (`error`, `error_description`).
fn refused(redirected: &str) -> Option<String> {
    let url = url::Url::parse(redirected).ok()?;
    let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    let value = |key: &str| pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
    let error = value("error")?;
    Some(match value("error_description") {
        Some(description) => format!("the authorization server refused: {error} ({description})"),
        None => format!("the authorization server refused: {error}"),
    })
}

/// An rmcp auth error in words (its messages name endpoints and causes, never tokens).
fn describe(error: &AuthError) -> String {
    error.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_insufficient_scope_asks_for_a_step_up() {
        assert!(is_insufficient_scope(
            r#"Bearer error="insufficient_scope", scope="files:read files:write""#
        ));
        assert!(!is_insufficient_scope(
            r#"Bearer error="invalid_token", resource_metadata="http://h/.well-known/x""#
        ));
    }

    #[test]
    fn a_refusing_redirect_says_why() {
        assert_eq!(
            refused(
                "http://127.0.0.1:1/callback?error=access_denied&error_description=no+way&state=s"
            ),
            Some("the authorization server refused: access_denied (no way)".into())
        );
        assert_eq!(refused("http://127.0.0.1:1/callback?code=c&state=s"), None);
    }
}
