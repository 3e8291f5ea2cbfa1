//! Progressive tool discovery: the reserved `search_tools` host tool. It ranks the calling
//! scope's deferred visible tools by BM25 ([`bm25`]) over their names, descriptions and
//! parameters, returns the best matches' definitions (inside a Code Mode program also their
//! declarations in the program's language), and loads them into the scope, whose next
//! prompt, SDK and MCP listing then present them in full.
//!
//! Which tools are deferred, what a scope has loaded and when `search_tools` is present are
//! the registry's rules (`registry::deferral`); this module owns only the search. Each
//! scope's index is built on its first search and kept until the registry changes.

mod bm25;
mod tool;

pub use bm25::{Index, tokenize};
pub use tool::{DEFAULT_LIMIT, MAX_LIMIT, SEARCH_DESCRIPTION, SEARCH_TOOLS};

use crate::code_mode::CodeMode;
use crate::pipeline::ToolRuntime;
use crate::registry::{RegisteredTool, Registry, RegistryError, ScopeView};
use crate::tool::AgentId;
use parking_lot::Mutex;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Weak};

/// Weights of a tool's fields in its document.
const NAME_WEIGHT: f32 = 3.0;
const DESCRIPTION_WEIGHT: f32 = 1.0;
const PARAMETER_NAME_WEIGHT: f32 = 1.5;
const PARAMETER_DESCRIPTION_WEIGHT: f32 = 0.5;
/// Schema nodes read per tool for parameter names and descriptions.
const MAX_SCHEMA_NODES: usize = 256;

/// Installs `search_tools` into `runtime`'s registry; `code` supplies the language of
/// in-program results (a scope's `presentAs` language, else `codeRuntime.language`).
pub fn install(runtime: &Arc<ToolRuntime>, code: &Arc<CodeMode>) -> Result<(), RegistryError> {
    let discovery = Arc::new(Discovery {
        registry: Arc::downgrade(runtime.registry()),
        code: code.clone(),
        indexes: Mutex::new(HashMap::new()),
    });
    runtime
        .registry()
        .install_host_tool(tool::definition(discovery)?)
}

/// The search state shared by every `search_tools` call of one registry.
struct Discovery {
    registry: Weak<Registry>,
    code: Arc<CodeMode>,
    /// Per scope: the index of its deferred tools, with the view generation it was built at.
    indexes: Mutex<HashMap<Option<AgentId>, Arc<ScopeIndex>>>,
}

/// One scope's deferred tools, indexed.
struct ScopeIndex {
    generation: u64,
    index: Index,
    /// Document `i` is this tool.
    tools: Vec<Arc<RegisteredTool>>,
    /// Lowercased full names, then the part after each name's last `__`, to documents.
    names: HashMap<String, Vec<usize>>,
    short_names: HashMap<String, Vec<usize>>,
}

impl Discovery {
    /// The index of `scope`'s deferred tools as `view` shows them (rebuilt after a change).
    fn index(
        &self,
        registry: &Registry,
        scope: Option<&AgentId>,
        view: &ScopeView,
    ) -> Arc<ScopeIndex> {
        let key = scope.cloned();
        if let Some(index) = self.indexes.lock().get(&key)
            && index.generation == view.generation()
        {
            return index.clone();
        }
        let index = Arc::new(ScopeIndex::new(view));
        let mut indexes = self.indexes.lock();
        indexes.retain(|scope, _| scope.as_ref().is_none_or(|agent| registry.has_agent(agent)));
        if key.as_ref().is_none_or(|agent| registry.has_agent(agent)) {
            indexes.insert(key, index.clone());
        }
        index
    }
}

impl ScopeIndex {
    fn new(view: &ScopeView) -> ScopeIndex {
        let tools: Vec<Arc<RegisteredTool>> = view.deferred().cloned().collect();
        let mut texts: Vec<Vec<(String, f32)>> = Vec::with_capacity(tools.len());
        let mut names: HashMap<String, Vec<usize>> = HashMap::new();
        let mut short_names: HashMap<String, Vec<usize>> = HashMap::new();
        for (document, tool) in tools.iter().enumerate() {
            let definition = &tool.definition;
            let name = definition.name.to_lowercase();
            if let Some((_, short)) = name.rsplit_once("__") {
                short_names
                    .entry(short.to_owned())
                    .or_default()
                    .push(document);
            }
            names.entry(name).or_default().push(document);
            let mut fields = vec![
                (definition.name.to_string(), NAME_WEIGHT),
                (definition.description.clone(), DESCRIPTION_WEIGHT),
            ];
            parameter_fields(definition.input.json_schema(), &mut fields);
            texts.push(fields);
        }
        let index = Index::new(texts.iter().map(|fields| {
            fields
                .iter()
                .map(|(text, weight)| (text.as_str(), *weight))
                .collect()
        }));
        ScopeIndex {
            generation: view.generation(),
            index,
            tools,
            names,
            short_names,
        }
    }

    /// The best `limit` documents for `query`: exact name matches first (the full name,
    /// then the part after the last `__`, ignoring case), then by BM25.
    fn search(&self, query: &str, limit: usize) -> Vec<usize> {
        let lower = query.trim().to_lowercase();
        let mut found: Vec<usize> = Vec::with_capacity(limit);
        let exact = self.names.get(&lower).into_iter().flatten();
        let short = self.short_names.get(&lower).into_iter().flatten();
        for &document in exact.chain(short) {
            if !found.contains(&document) {
                found.push(document);
            }
        }
        found.truncate(limit);
        for document in self.index.search(query, limit + found.len()) {
            if found.len() == limit {
                break;
            }
            if !found.contains(&document) {
                found.push(document);
            }
        }
        found
    }
}

/// Parameter names and descriptions of `schema` as weighted fields: properties at any
/// depth (through `items` and `oneOf`/`anyOf`/`allOf`), at most [`MAX_SCHEMA_NODES`] nodes.
fn parameter_fields(schema: &Value, fields: &mut Vec<(String, f32)>) {
    let mut pending = vec![schema];
    let mut visited = 0;
    while let Some(node) = pending.pop() {
        visited += 1;
        if visited > MAX_SCHEMA_NODES {
            break;
        }
        let Value::Object(node) = node else {
            continue;
        };
        if let Some(Value::Object(properties)) = node.get("properties") {
            for (name, property) in properties {
                fields.push((name.clone(), PARAMETER_NAME_WEIGHT));
                if let Some(Value::String(text)) = property.get("description") {
                    fields.push((text.clone(), PARAMETER_DESCRIPTION_WEIGHT));
                }
                pending.push(property);
            }
        }
        if let Some(items) = node.get("items") {
            pending.push(items);
        }
        for key in ["oneOf", "anyOf", "allOf"] {
            if let Some(Value::Array(branches)) = node.get(key) {
                pending.extend(branches);
            }
        }
    }
}
