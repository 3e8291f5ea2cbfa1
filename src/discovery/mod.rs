//! Progressive tool discovery: the reserved `search_tools` host tool. It ranks the calling
//! scope's deferred visible tools by BM25 ([`bm25`]) and, for each of two embedded static
//! tables ([`embeddings`]), by whole-tool similarity ([`semantic`]) and word alignment
//! ([`alignment`]) over their names, descriptions and parameters; fuses the rankings by
//! reciprocal rank; returns the best matches' definitions (inside a Code Mode program also
//! their declarations in the program's language), and loads them into the scope, whose next
//! prompt, SDK and MCP listing then present them in full.
//!
//! Which tools are deferred, what a scope has loaded and when `search_tools` is present are
//! the registry's rules (`registry::deferral`); this module owns only the search. Each
//! scope's index is built on its first search and kept until the registry changes.

mod alignment;
mod bm25;
mod embeddings;
mod semantic;
mod tool;

pub use bm25::{Index, tokenize};
pub use tool::{DEFAULT_LIMIT, MAX_LIMIT, SEARCH_DESCRIPTION, SEARCH_TOOLS};

use crate::code_mode::CodeMode;
use crate::pipeline::ToolRuntime;
use crate::registry::{RegisteredTool, Registry, RegistryError, ScopeView};
use crate::tool::AgentId;
use alignment::AlignmentIndex;
use embeddings::Embeddings;
use parking_lot::Mutex;
use semantic::SemanticIndex;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Weak};

/// Weights of a tool's fields in its document.
const NAME_WEIGHT: f32 = 3.0;
const DESCRIPTION_WEIGHT: f32 = 1.0;
const PARAMETER_NAME_WEIGHT: f32 = 1.5;
const PARAMETER_DESCRIPTION_WEIGHT: f32 = 0.5;
/// The weights of a tool's fields in one semantic ranking: the last part of its name (after
/// `__`), the server prefix before it, its description, its parameters' names and
/// descriptions.
struct FieldWeights {
    name: f32,
    prefix: f32,
    description: f32,
    parameters: (f32, f32),
}
/// In a tool's semantic vector: the last part of its name counts more than the server
/// prefix, and parameters count little, so a tool's vector says what it does.
const SEMANTIC_WEIGHTS: FieldWeights = FieldWeights {
    name: 2.0,
    prefix: 1.0,
    description: 1.0,
    parameters: (0.3, 0.1),
};
/// In word alignment (a tool's word matched to a query word counts its cosine times this):
/// set before measuring, name words first, parameters' descriptions least, and not tuned
/// (the tuning queries find every relevant tool with them).
const ALIGNMENT_WEIGHTS: FieldWeights = FieldWeights {
    name: 1.0,
    prefix: 0.7,
    description: 0.9,
    parameters: (0.6, 0.4),
};
/// Reciprocal rank fusion: a document scores `weight / (RRF_K + rank)` in each ranking
/// (rank from 1). Chosen on the 114 tuning queries only, with one semantic ranking: the
/// strongest semantic weight and smallest `k` that keep BM25's figure there (a small `k`
/// lets a ranking's first places decide); kept for all four semantic rankings, where the
/// variants tried do no better on those queries (docs/tool-search.md).
const RRF_K: f32 = 5.0;
const BM25_FUSION_WEIGHT: f32 = 1.0;
const SEMANTIC_FUSION_WEIGHT: f32 = 0.8;
const ALIGNMENT_FUSION_WEIGHT: f32 = 0.8;
/// Documents taken from each ranking into the fusion.
const FUSION_CANDIDATES: usize = 50;
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
    /// One similarity and one alignment index per embedding table; `None` when
    /// `tools.semanticSearch` is off (or no embedded table is usable): then BM25 ranks alone.
    semantic: Option<Vec<(SemanticIndex, AlignmentIndex)>>,
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
        let semantic = registry.semantic_search();
        if let Some(index) = self.indexes.lock().get(&key)
            && index.generation == view.generation()
            && index.semantic.is_some() == semantic
        {
            return index.clone();
        }
        let index = Arc::new(ScopeIndex::new(view, semantic));
        let mut indexes = self.indexes.lock();
        indexes.retain(|scope, _| scope.as_ref().is_none_or(|agent| registry.has_agent(agent)));
        if key.as_ref().is_none_or(|agent| registry.has_agent(agent)) {
            indexes.insert(key, index.clone());
        }
        index
    }
}

impl ScopeIndex {
    /// Indexes `view`'s deferred tools, for the semantic ranking too when `semantic`.
    fn new(view: &ScopeView, semantic: bool) -> ScopeIndex {
        let tools: Vec<Arc<RegisteredTool>> = view.deferred().cloned().collect();
        let mut texts: Vec<Vec<(String, f32)>> = Vec::with_capacity(tools.len());
        let mut semantic_texts: Vec<Vec<(String, f32)>> = Vec::with_capacity(tools.len());
        let mut alignment_texts: Vec<Vec<(String, f32)>> = Vec::with_capacity(tools.len());
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
            let schema = definition.input.json_schema();
            let mut fields = vec![
                (definition.name.to_string(), NAME_WEIGHT),
                (definition.description.clone(), DESCRIPTION_WEIGHT),
            ];
            parameter_fields(
                schema,
                (PARAMETER_NAME_WEIGHT, PARAMETER_DESCRIPTION_WEIGHT),
                &mut fields,
            );
            texts.push(fields);
            let (prefix, short) = definition
                .name
                .rsplit_once("__")
                .unwrap_or(("", &definition.name));
            let weighted = |weights: &FieldWeights| {
                let mut fields = vec![
                    (short.to_owned(), weights.name),
                    (prefix.to_owned(), weights.prefix),
                    (definition.description.clone(), weights.description),
                ];
                parameter_fields(schema, weights.parameters, &mut fields);
                fields
            };
            alignment_texts.push(weighted(&ALIGNMENT_WEIGHTS));
            semantic_texts.push(weighted(&SEMANTIC_WEIGHTS));
        }
        let index = Index::new(borrowed(&texts));
        let semantic = semantic
            .then(|| {
                Embeddings::tables()
                    .iter()
                    .map(|table| {
                        let similarity = SemanticIndex::new(table, borrowed(&semantic_texts));
                        let alignment = AlignmentIndex::new(table, borrowed(&alignment_texts));
                        (similarity, alignment)
                    })
                    .collect::<Vec<_>>()
            })
            .filter(|indexes| !indexes.is_empty());
        ScopeIndex {
            generation: view.generation(),
            index,
            semantic,
            tools,
            names,
            short_names,
        }
    }

    /// The best `limit` documents for `query`: exact name matches first (the full name,
    /// then the part after the last `__`, ignoring case), then by the fused ranking.
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
        for document in self.ranked(query, limit + found.len()) {
            if found.len() == limit {
                break;
            }
            if !found.contains(&document) {
                found.push(document);
            }
        }
        found
    }

    /// BM25's and each table's two semantic rankings fused by reciprocal rank, at most
    /// `limit` documents (ties in document order). Each ranking contributes its first
    /// [`FUSION_CANDIDATES`] (or `limit`, if more).
    fn ranked(&self, query: &str, limit: usize) -> Vec<usize> {
        let candidates = limit.max(FUSION_CANDIDATES);
        let lexical = self.index.search(query, candidates);
        let Some(semantic) = &self.semantic else {
            return lexical.into_iter().take(limit).collect();
        };
        let mut scores: HashMap<usize, f32> = HashMap::new();
        let mut rankings = vec![(lexical, BM25_FUSION_WEIGHT)];
        for (similarity, alignment) in semantic {
            rankings.push((similarity.search(query, candidates), SEMANTIC_FUSION_WEIGHT));
            rankings.push((alignment.search(query, candidates), ALIGNMENT_FUSION_WEIGHT));
        }
        for (ranking, weight) in rankings {
            for (rank, document) in ranking.into_iter().enumerate() {
                *scores.entry(document).or_default() += weight / (RRF_K + rank as f32 + 1.0);
            }
        }
        let mut fused: Vec<(usize, f32)> = scores.into_iter().collect();
        fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        fused.truncate(limit);
        fused.into_iter().map(|(document, _)| document).collect()
    }
}

/// `documents`' fields as borrowed text.
fn borrowed(documents: &[Vec<(String, f32)>]) -> Vec<Vec<(&str, f32)>> {
    documents
        .iter()
        .map(|fields| fields.iter().map(|(t, w)| (t.as_str(), *w)).collect())
        .collect()
}

/// Parameter names and descriptions of `schema` as fields weighted `(names, descriptions)`:
/// properties at any depth (through `items` and `oneOf`/`anyOf`/`allOf`), at most
/// [`MAX_SCHEMA_NODES`] nodes.
fn parameter_fields(schema: &Value, weights: (f32, f32), fields: &mut Vec<(String, f32)>) {
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
                fields.push((name.clone(), weights.0));
                if let Some(Value::String(text)) = property.get("description") {
                    fields.push((text.clone(), weights.1));
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
