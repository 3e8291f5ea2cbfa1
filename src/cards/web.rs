//! The `web` result card: a completed web retrieval. Only the `fetch` arm is produced here
//! (`web_fetch`); the page itself is the result's content, so the card carries the summary.

use serde::Serialize;

/// A completed web retrieval, tagged by `kind`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum WebResultView {
    /// A fetched page.
    Fetch(WebFetchResultView),
}

/// The completed state of a `web_fetch` call.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WebFetchResultView {
    /// Replacement title for the completed call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The final URL after redirects.
    pub url: String,
    /// The response's HTTP status.
    pub status_code: u16,
    /// Whether the page was cut (at `builtins.web.maxBytes`).
    pub truncated: bool,
}
