//! BM25 over short, weighted-field documents (a tool's name, description and parameters),
//! with an identifier-aware tokenizer: words split on anything that is not a letter or a
//! digit (`_`, `-`, `.`, `__`, spaces) and on camelCase humps, lowercased, stop words
//! dropped, then stemmed (Snowball English, `rust-stemmers`).
//!
//! Scoring is BM25F-lite: every field's tokens count `weight` times toward the document's
//! term frequencies and length, so a word in a tool's name outweighs the same word in a
//! parameter's description. A query word that is not in the vocabulary also matches the
//! words it is a prefix of (at least three letters, at half weight), so `repo` finds
//! `repository`. Ties keep document order (the caller passes documents in name order), so
//! the ranking is deterministic.

use rust_stemmers::{Algorithm, Stemmer};
use std::collections::HashMap;
use std::sync::LazyLock;

/// Term frequency saturation.
const K1: f32 = 1.2;
/// Length normalization.
const B: f32 = 0.75;
/// Weight of a prefix match against an exact one.
const PREFIX_WEIGHT: f32 = 0.5;
/// Most vocabulary words one query word may expand to by prefix.
const MAX_PREFIX_EXPANSIONS: usize = 32;

static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

/// Words that carry no meaning for finding a tool.
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been",
    "being", "but", "by", "can", "could", "did", "do", "does", "doing", "each", "for", "from",
    "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "just", "me", "my",
    "of", "on", "or", "our", "should", "so", "some", "such", "than", "that", "the", "their",
    "them", "then", "there", "these", "this", "those", "to", "too", "via", "was", "we", "were",
    "what", "when", "where", "which", "while", "who", "will", "with", "would", "you", "your",
];

/// The normalized words of `text`, in order, appended to `out`.
pub fn tokenize(text: &str, out: &mut Vec<String>) {
    out.extend(words(text).map(|word| STEMMER.stem(&word).into_owned()));
}

/// The words of `text` that carry meaning, lowercased and unstemmed, in order: split on
/// anything not a letter or digit and on camelCase humps, single letters and stop words
/// dropped.
pub(super) fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .flat_map(humps)
        .map(str::to_lowercase)
        .filter(|lower| {
            let single_letter = lower.chars().count() == 1 && !lower.chars().all(char::is_numeric);
            !single_letter && STOP_WORDS.binary_search(&lower.as_str()).is_err()
        })
}

/// `run` (letters and digits only) split at camelCase humps: `getHTTPResponse2` →
/// `get`, `HTTP`, `Response2`.
fn humps(run: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = run.char_indices().collect();
    let mut words = Vec::new();
    let mut start = 0;
    for i in 1..chars.len() {
        let (at, current) = chars[i];
        let previous = chars[i - 1].1;
        let next_is_lower = chars.get(i + 1).is_some_and(|(_, c)| c.is_lowercase());
        let hump = current.is_uppercase()
            && (previous.is_lowercase()
                || previous.is_numeric()
                || (previous.is_uppercase() && next_is_lower));
        if hump {
            words.push(&run[start..at]);
            start = at;
        }
    }
    if start < run.len() {
        words.push(&run[start..]);
    }
    words
}

/// A ranked collection of documents, each a list of `(text, weight)` fields.
#[derive(Debug, Default)]
pub struct Index {
    /// Vocabulary word → term id.
    terms: HashMap<String, u32>,
    /// The vocabulary in byte order, for prefix matching.
    sorted: Vec<(String, u32)>,
    /// Per term: `(document, weighted term frequency)`, by document.
    postings: Vec<Vec<(u32, f32)>>,
    /// Per term: its inverse document frequency.
    idf: Vec<f32>,
    /// Per document: `K1 * (1 - B + B * length / average length)`.
    norms: Vec<f32>,
}

impl Index {
    /// Indexes `documents` (document `i` is the `i`th).
    pub fn new<'a>(documents: impl IntoIterator<Item = Vec<(&'a str, f32)>>) -> Index {
        let mut index = Index::default();
        let mut lengths = Vec::new();
        let mut words = Vec::new();
        for (document, fields) in documents.into_iter().enumerate() {
            let document = u32::try_from(document).unwrap_or(u32::MAX);
            let mut frequencies: HashMap<u32, f32> = HashMap::new();
            let mut length = 0.0;
            for (text, weight) in fields {
                words.clear();
                tokenize(text, &mut words);
                for word in words.drain(..) {
                    let next = u32::try_from(index.terms.len()).unwrap_or(u32::MAX);
                    let term = *index.terms.entry(word).or_insert(next);
                    if term as usize == index.postings.len() {
                        index.postings.push(Vec::new());
                    }
                    *frequencies.entry(term).or_default() += weight;
                    length += weight;
                }
            }
            for (term, frequency) in frequencies {
                index.postings[term as usize].push((document, frequency));
            }
            lengths.push(length);
        }
        let count = lengths.len() as f32;
        let average = (lengths.iter().sum::<f32>() / count.max(1.0)).max(f32::EPSILON);
        index.norms = lengths
            .iter()
            .map(|length| K1 * (1.0 - B + B * length / average))
            .collect();
        index.idf = index
            .postings
            .iter_mut()
            .map(|documents| {
                documents.sort_by_key(|(document, _)| *document);
                let with = documents.len() as f32;
                (1.0 + (count - with + 0.5) / (with + 0.5)).ln()
            })
            .collect();
        index.sorted = index.terms.iter().map(|(w, t)| (w.clone(), *t)).collect();
        index.sorted.sort();
        index
    }

    /// How many documents it holds.
    pub fn len(&self) -> usize {
        self.norms.len()
    }

    /// Whether it holds no document.
    pub fn is_empty(&self) -> bool {
        self.norms.is_empty()
    }

    /// The documents matching `query` best, at most `limit`, best first (equal scores in
    /// document order); documents that share no word with the query are never returned.
    pub fn search(&self, query: &str, limit: usize) -> Vec<usize> {
        let mut words = Vec::new();
        tokenize(query, &mut words);
        words.sort();
        words.dedup();
        let mut weighted: HashMap<u32, f32> = HashMap::new();
        for word in &words {
            match self.terms.get(word) {
                Some(term) => {
                    let weight = weighted.entry(*term).or_default();
                    *weight = weight.max(1.0);
                }
                None => {
                    for term in self.extensions(word) {
                        let weight = weighted.entry(term).or_default();
                        *weight = weight.max(PREFIX_WEIGHT);
                    }
                }
            }
        }
        let mut scores = vec![0f32; self.len()];
        for (term, weight) in weighted {
            let idf = self.idf[term as usize] * weight;
            for &(document, frequency) in &self.postings[term as usize] {
                let norm = self.norms[document as usize];
                scores[document as usize] += idf * frequency * (K1 + 1.0) / (frequency + norm);
            }
        }
        best(scores, |score| score > 0.0, limit)
    }

    /// Vocabulary words that `word` (three letters or more) is a proper prefix of.
    fn extensions(&self, word: &str) -> Vec<u32> {
        if word.chars().count() < 3 {
            return Vec::new();
        }
        let start = self.sorted.partition_point(|(w, _)| w.as_str() < word);
        self.sorted[start..]
            .iter()
            .take_while(|(w, _)| w.starts_with(word))
            .take(MAX_PREFIX_EXPANSIONS)
            .map(|(_, term)| *term)
            .collect()
    }
}

/// The documents (indexes into `scores`) of the `limit` highest scores that `counts`, best
/// first, equal scores in document order; only those are sorted.
pub(super) fn best(
    scores: impl IntoIterator<Item = f32>,
    counts: impl Fn(f32) -> bool,
    limit: usize,
) -> Vec<usize> {
    let mut ranked: Vec<(usize, f32)> = scores
        .into_iter()
        .enumerate()
        .filter(|(_, score)| counts(*score))
        .collect();
    let order = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if ranked.len() > limit && limit > 0 {
        ranked.select_nth_unstable_by(limit - 1, order);
    }
    ranked.truncate(limit);
    ranked.sort_by(order);
    ranked.into_iter().map(|(document, _)| document).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        tokenize(text, &mut out);
        out
    }

    #[test]
    fn stop_words_are_sorted_for_the_binary_search() {
        let mut sorted = STOP_WORDS.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, STOP_WORDS);
    }

    #[test]
    fn identifiers_split_on_separators_and_humps_then_stem() {
        assert_eq!(
            words("mcp__github__create_pull-request.v2"),
            ["mcp", "github", "creat", "pull", "request", "v2"]
        );
        assert_eq!(words("getHTTPResponse2"), ["get", "http", "response2"]);
        assert_eq!(
            words("Lists the files in a directory"),
            ["list", "file", "directori"]
        );
        assert_eq!(words("工具 x 42"), ["工具", "42"]);
        assert!(words("").is_empty());
    }

    #[test]
    fn ranks_by_weighted_fields_and_breaks_ties_by_document_order() {
        let index = Index::new([
            vec![("send_message", 3.0), ("Send a chat message.", 1.0)],
            vec![
                ("read_file", 3.0),
                ("Read a file; the message is ignored.", 1.0),
            ],
            vec![("list_files", 3.0), ("List the files of a directory.", 1.0)],
            vec![("delete_file", 3.0), ("Delete a file.", 1.0)],
        ]);
        assert_eq!(index.len(), 4);
        assert_eq!(index.search("send message", 5), [0, 1]);
        assert_eq!(index.search("files", 2), [3, 2], "shorter documents first");
        assert_eq!(index.search("directory", 5), [2]);
        assert_eq!(index.search("direct", 5), [2], "prefix of a word");
        assert_eq!(index.search("the of", 5), Vec::<usize>::new());
        assert_eq!(index.search("nothing here", 5), Vec::<usize>::new());
        assert_eq!(index.search("file", 0), Vec::<usize>::new());
        let empty = Index::new(Vec::<Vec<(&str, f32)>>::new());
        assert!(empty.is_empty());
        assert!(empty.search("file", 5).is_empty());
    }
}
