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
