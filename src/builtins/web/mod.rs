//! `web_fetch { url, prompt? }`: fetches a page over HTTP(S) and returns its text, HTML
//! converted to Markdown. Every connection (the first and each redirect's) is made by the
//! egress policy's dial ([`crate::egress::Egress::open`]): the host and port decided by
//! `builtins.web.network` (or the sandbox's `network` policy), the name resolved by the host,
//! addresses of this machine and the cloud's metadata service refused. `WebFetch(domain:x)`
//! permission rules decide the call before it runs; a long page is spilled by the pipeline
//! like any long result.

pub mod client;
pub mod markdown;

use crate::builtins::cards::{parse, success_meta};
use crate::builtins::typed::{self, TextRenderer};
use crate::cards::{
    GenericCallView, ToolCallKind, ToolCallView, ToolResultView, WebFetchResultView, WebResultView,
};
use crate::egress::Egress;
use crate::tool::{
    CardMeta, Concurrency, DefinitionError, DurableResult, Render, ToolCards, ToolDefinition,
    ToolError, ToolRunContext,
};
use client::{FetchError, Fetched, Limits};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;

/// Characters of an error page shown with its status.
const ERROR_PAGE_CHARS: usize = 2000;

#[derive(Deserialize)]
struct FetchArgs {
    url: String,
    prompt: Option<String>,
}

/// The canonical value of a fetch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebFetchOutput {
    /// The URL the page came from (after redirects).
    pub url: String,
    /// Its HTTP status.
    pub status: u16,
    /// Its `Content-Type`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// Bytes of body read.
    pub bytes: u64,
    /// Whether the body was cut at `builtins.web.maxBytes`.
    pub truncated: bool,
    /// The page as text (Markdown for HTML).
    pub content: String,
    /// What the model asked of the page, echoed so the answer stays next to its question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
}

/// The `web_fetch` definition over `egress` (its policy and refusal log).
pub fn definition(egress: Arc<Egress>, limits: Limits) -> Result<ToolDefinition, DefinitionError> {
    let description = format!(
        "Fetch a URL (http or https) and return its content as text: HTML is converted to \
         Markdown; other text comes as it is. Up to {max} bytes of the page are read and at \
         most {redirects} redirects followed; hosts are limited by the host's network policy \
         (a refused host is named with the rule). `prompt` says what you want from the page; \
         it is shown above the content. Long pages are saved to a file whose path the result \
         gives (read it in windows).",
        max = limits.max_bytes,
        redirects = limits.max_redirects,
    );
    ToolDefinition::builder("web_fetch")
        .description(description)
        .parameters(json!({
            "url": { "type": "string", "required": true, "description": "The URL to fetch (http or https)." },
            "prompt": { "type": "string", "description": "What to look for in the page." }
        }))
        .output(json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "url": { "type": "string", "required": true },
                "status": { "type": "integer", "required": true },
                "contentType": { "type": "string" },
                "bytes": { "type": "integer", "required": true },
                "truncated": { "type": "boolean", "required": true },
                "content": { "type": "string", "required": true },
                "prompt": { "type": "string" }
            }
        }))
        .render(Render::Custom(Arc::new(TextRenderer(render))))
        .concurrency(Concurrency::Parallel)
        .idempotent(true)
        .cards(Arc::new(WebCards))
        .card_meta(summary_meta())
        .body(move |ctx: ToolRunContext| {
            let egress = egress.clone();
            async move {
                let args: FetchArgs = typed::arguments(ctx.arguments())?;
                let token = ctx.signal.to_token();
                let fetched = tokio::select! {
                    () = token.cancelled() => return Err(typed::aborted()),
                    fetched = client::fetch(&egress, &args.url, limits) => fetched,
                };
                let fetched = fetched.map_err(|error| match error {
                    FetchError::Blocked(why) => ToolError::new(format!(
                        "cannot fetch {}: {why}",
                        args.url
                    )),
                    FetchError::Failed(why) => ToolError::new(format!("cannot fetch {}: {why}", args.url)),
                })?;
                let output = typed::blocking(move || page(fetched, args.prompt)).await?;
                typed::output(&output)
            }
        })
}

/// The fetched page as the tool's value, or the failure a non-text or error answer is.
fn page(fetched: Fetched, prompt: Option<String>) -> Result<WebFetchOutput, ToolError> {
    let kind = Kind::of(fetched.content_type.as_deref(), &fetched.body);
    if kind == Kind::Binary {
        return Err(ToolError::new(format!(
            "{} is not text ({}, {} bytes): web_fetch returns pages, not files",
            fetched.url,
            fetched.content_type.as_deref().unwrap_or("no content type"),
            fetched.body.len()
        )));
    }
    let bytes = fetched.body.len() as u64;
    let text = String::from_utf8_lossy(&fetched.body).into_owned();
    let content = match kind {
        Kind::Html => markdown::html_to_markdown(text),
        _ => text,
    };
    if fetched.status >= 400 {
        let shown: String = content.chars().take(ERROR_PAGE_CHARS).collect();
        return Err(ToolError::new(format!(
            "{} answered HTTP {}{}",
            fetched.url,
            fetched.status,
            if shown.trim().is_empty() {
                String::new()
            } else {
                format!(":\n{shown}")
            }
        )));
    }
    Ok(WebFetchOutput {
        url: fetched.url.to_string(),
        status: fetched.status,
        content_type: fetched.content_type,
        bytes,
        truncated: fetched.truncated,
        content,
        prompt,
    })
}

/// How a body is turned into text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Html,
    Text,
    Binary,
}

impl Kind {
    /// By `Content-Type`, or by a look at the body when there is none.
    fn of(content_type: Option<&str>, body: &[u8]) -> Kind {
        let media = content_type
            .and_then(|value| value.split(';').next())
            .map(|media| media.trim().to_ascii_lowercase());
        match media.as_deref() {
            Some("text/html" | "application/xhtml+xml") => Kind::Html,
            Some(media)
                if media.starts_with("text/")
                    || media.ends_with("+json")
                    || media.ends_with("+xml")
                    || matches!(
                        media,
                        "application/json"
                            | "application/xml"
                            | "application/javascript"
                            | "application/x-ndjson"
                            | "application/yaml"
                            | "application/toml"
                    ) =>
            {
                Kind::Text
            }
            Some(_) => Kind::Binary,
            None => {
                let head = &body[..body.len().min(1024)];
                let lower = String::from_utf8_lossy(head).to_ascii_lowercase();
                if head.contains(&0) {
                    Kind::Binary
                } else if lower.trim_start().starts_with("<!doctype html")
                    || lower.contains("<html")
                {
                    Kind::Html
                } else {
                    Kind::Text
                }
            }
        }
    }
}

/// The model's text: where the page came from, the prompt, the page, and a note if cut.
fn render(output: &WebFetchOutput) -> String {
    let mut text = format!(
        "Fetched {} (HTTP {}{}, {} bytes)\n",
        output.url,
        output.status,
        output
            .content_type
            .as_deref()
            .map(|media| format!(", {media}"))
            .unwrap_or_default(),
        output.bytes
    );
    if let Some(prompt) = &output.prompt {
        text.push_str(&format!("Prompt: {prompt}\n"));
    }
    text.push('\n');
    text.push_str(&output.content);
    if output.truncated {
        text.push_str(&format!(
            "\n\n(Page cut after {} bytes: builtins.web.maxBytes. Fetch a more specific URL for the rest.)",
            output.bytes
        ));
    }
    text
}

/// What persists for the card: the summary, not the page.
fn summary_meta() -> CardMeta {
    Arc::new(|_arguments, value| {
        Some(json!({
            "url": value.get("url")?,
            "statusCode": value.get("status")?,
            "truncated": value.get("truncated")?,
        }))
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Summary {
    url: String,
    status_code: u16,
    truncated: bool,
}

#[derive(Deserialize)]
struct UrlCall {
    url: String,
}

struct WebCards;

impl ToolCards for WebCards {
    fn call_card(&self, arguments: &Value) -> Option<Value> {
        let call: UrlCall = parse(arguments)?;
        ToolCallView::Generic(GenericCallView {
            title: format!("Fetch {}", call.url),
            kind: Some(ToolCallKind::Fetch),
            raw_input: None,
            content: None,
            locations: None,
        })
        .to_json()
    }

    fn result_card(&self, _arguments: &Value, result: &DurableResult) -> Option<Value> {
        let summary: Summary = success_meta(result)?;
        ToolResultView::Web(WebResultView::Fetch(WebFetchResultView {
            title: None,
            url: summary.url,
            status_code: summary.status_code,
            truncated: summary.truncated,
        }))
        .to_json()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_told_apart_by_content_type_then_by_a_look() {
        assert_eq!(Kind::of(Some("text/html; charset=utf-8"), b""), Kind::Html);
        assert_eq!(Kind::of(Some("application/json"), b"{}"), Kind::Text);
        assert_eq!(
            Kind::of(Some("application/vnd.api+json"), b"{}"),
            Kind::Text
        );
        assert_eq!(Kind::of(Some("image/png"), b"\x89PNG"), Kind::Binary);
        assert_eq!(Kind::of(None, b"<!DOCTYPE html><html>"), Kind::Html);
        assert_eq!(Kind::of(None, b"plain words"), Kind::Text);
        assert_eq!(Kind::of(None, b"\x00\x01"), Kind::Binary);
    }
}
