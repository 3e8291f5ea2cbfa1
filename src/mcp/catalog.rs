//! A server's tools as listed and as registered: listing every page, and re-registering
//! only what changed, so unchanged tools keep their registrations across re-lists and
//! restarts.

use super::definition::ingest;
use super::link::Link;
use super::names::{admits, registered_name};
use crate::registry::Registry;
use dsh_tools_protocol::McpServerConfig;
use rmcp::RoleClient;
use rmcp::model::{ClientRequest, CustomRequest};
use rmcp::service::Peer;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Bound on `tools/list` pages, against servers whose cursors never end.
const MAX_PAGES: usize = 1000;
/// How much of a nameless tool's JSON a warning quotes.
const SHOWN_CHARS: usize = 200;

/// Why a listing failed, and the `WWW-Authenticate` of the 401 or 403 that made it fail
/// (a server may let `initialize` through and ask for a token only from here on).
pub struct ListFailure {
    /// What went wrong, in words.
    pub text: String,
    /// The challenge, when the server asked for authorization.
    pub challenge: Option<String>,
}

impl From<String> for ListFailure {
    fn from(text: String) -> ListFailure {
        ListFailure {
            text,
            challenge: None,
        }
    }
}

/// Lists every page of `tools/list` as raw JSON, so that one malformed tool cannot make
/// the whole listing unreadable.
pub async fn list_all(peer: &Peer<RoleClient>) -> Result<Vec<Value>, ListFailure> {
    let mut tools = Vec::new();
    let mut cursor: Option<Value> = None;
    for _ in 0..MAX_PAGES {
        let params = cursor.take().map(|cursor| json!({ "cursor": cursor }));
        let request = ClientRequest::CustomRequest(CustomRequest::new("tools/list", params));
        let page = peer.send_request(request).await.map_err(|e| ListFailure {
            text: format!("tools/list failed: {e}"),
            challenge: e.auth_challenge().map(str::to_owned),
        })?;
        let mut page = serde_json::to_value(page)
            .map_err(|e| ListFailure::from(format!("tools/list answer unreadable: {e}")))?;
        match page.get_mut("tools").map(Value::take) {
            Some(Value::Array(listed)) => tools.extend(listed),
            Some(_) => {
                return Err(
                    String::from("tools/list answered a `tools` that is not an array").into(),
                );
            }
            None => return Err(String::from("tools/list answered without `tools`").into()),
        }
        match page.get_mut("nextCursor").map(Value::take) {
            None | Some(Value::Null) => return Ok(tools),
            Some(next) => cursor = Some(next),
        }
    }
    Err(format!("tools/list did not end within {MAX_PAGES} pages").into())
}

/// One registered tool.
struct Entry {
    raw: Value,
    registration: Arc<str>,
    registered_name: String,
    warnings: Vec<String>,
}

/// The tools of one server currently in the registry.
#[derive(Default)]
pub struct Catalog {
    entries: BTreeMap<String, Entry>,
}

/// What a sync produced, for the status.
pub struct Synced {
    /// Registered names, lexicographic.
    pub tools: Vec<String>,
    /// Per-tool warnings, in listing order.
    pub warnings: Vec<String>,
}

impl Catalog {
    /// Makes the registry hold exactly the admitted tools of `listed`: unchanged ones are
    /// kept, changed ones re-registered, vanished ones unregistered. A tool that cannot be
    /// registered is skipped with a warning; the others are unaffected.
    pub fn sync(
        &mut self,
        registry: &Registry,
        link: &Arc<Link>,
        config: &McpServerConfig,
        listed: Vec<Value>,
    ) -> Synced {
        let mut warnings = Vec::new();
        let mut next: BTreeMap<String, Entry> = BTreeMap::new();
        for raw in listed {
            let name = match raw.get("name") {
                Some(Value::String(name)) if !name.is_empty() => name.clone(),
                _ => {
                    let mut shown = crate::json::render_compact(&raw);
                    if let Some((cut, _)) = shown.char_indices().nth(SHOWN_CHARS) {
                        shown.truncate(cut);
                        shown.push('…');
                    }
                    warnings.push(format!(
                        "a listed tool has no usable name and was skipped: {shown}"
                    ));
                    continue;
                }
            };
            if !admits(config.tools.as_ref(), &name) {
                continue;
            }
            if next.contains_key(&name) {
                warnings.push(format!(
                    "tool \"{name}\" is listed more than once; the first listing is used"
                ));
                continue;
            }
            match self.entries.remove(&name) {
                Some(kept) if kept.raw == raw => {
                    warnings.extend(kept.warnings.iter().cloned());
                    next.insert(name, kept);
                    continue;
                }
                Some(changed) => unregister(registry, &changed),
                None => {}
            }
            let ingested = match ingest(link, &name, &raw, config) {
                Ok(ingested) => ingested,
                Err(e) => {
                    warnings.push(format!("tool \"{name}\" was skipped: {e}"));
                    continue;
                }
            };
            warnings.extend(ingested.warnings.iter().cloned());
            match registry.register(ingested.definition, None) {
                Ok(registration) => {
                    let entry = Entry {
                        raw,
                        registration,
                        registered_name: registered_name(&link.name, &name),
                        warnings: ingested.warnings,
                    };
                    next.insert(name, entry);
                }
                Err(e) => warnings.push(format!("tool \"{name}\" was not registered: {e}")),
            }
        }
        for vanished in std::mem::take(&mut self.entries).values() {
            unregister(registry, vanished);
        }
        self.entries = next;
        let mut tools: Vec<String> = self
            .entries
            .values()
            .map(|e| e.registered_name.clone())
            .collect();
        tools.sort();
        for warning in &warnings {
            tracing::warn!(target: "mcp", "[{}] {warning}", link.name);
        }
        Synced { tools, warnings }
    }
}

fn unregister(registry: &Registry, entry: &Entry) {
    if let Err(e) = registry.unregister(&entry.registration) {
        tracing::debug!(target: "mcp", "{} was already unregistered: {e}", entry.registered_name);
    }
}
