//! Word alignment, the second semantic ranking of tool search: every query word is matched
//! to its nearest word in a tool (cosine of the words' static embeddings, times the weight
//! of the field the tool's word is in), and a tool scores the mean of those matches over the
//! query's words. One vector per tool blurs a long description into its average; alignment
//! instead rewards a tool that has a close counterpart for each word asked ("bill" →
//! `invoice`, "stop" → `cancel`), whatever else it says.
//!
//! The index keeps one unit vector per distinct word of the scope's tools and, per tool, its
//! words with their field weights; a search compares each query word with the distinct
//! words once, then takes each tool's best matches.

use super::bm25::words;
use super::embeddings::{Embeddings, dot, normalize};
use std::collections::HashMap;
use std::collections::hash_map::Entry;

/// Distinct words' vectors and each document's words.
pub struct AlignmentIndex {
    embeddings: &'static Embeddings,
    /// Unit vectors of the documents' distinct words (those with a vector), row by row.
    vectors: Vec<f32>,
    /// Per document: `(word row, weight)`, each word once with its highest field weight.
    documents: Vec<Vec<(u32, f32)>>,
}

impl AlignmentIndex {
    /// Indexes `documents` (document `i` is the `i`th, fields as `(text, weight)`) with
    /// `embeddings`.
    pub fn new<'a>(
        embeddings: &'static Embeddings,
        documents: impl IntoIterator<Item = Vec<(&'a str, f32)>>,
    ) -> AlignmentIndex {
        let dims = embeddings.dims();
        let mut rows: HashMap<String, Option<u32>> = HashMap::new();
        let mut vectors = Vec::new();
        let mut pieces = Vec::new();
        let mut indexed = Vec::new();
        for fields in documents {
            let mut document: Vec<(u32, f32)> = Vec::new();
            for (text, weight) in fields {
                for word in words(text) {
                    let row = match rows.entry(word) {
                        Entry::Occupied(known) => *known.get(),
                        Entry::Vacant(new) => {
                            let start = vectors.len();
                            vectors.resize(start + dims, 0.0);
                            let row = &mut vectors[start..];
                            let found = embeddings.add_word(new.key(), 1.0, row, &mut pieces);
                            normalize(row);
                            if !found {
                                vectors.truncate(start);
                            }
                            let id = u32::try_from(start / dims).ok().filter(|_| found);
                            *new.insert(id)
                        }
                    };
                    let Some(row) = row else { continue };
                    match document.iter_mut().find(|(known, _)| *known == row) {
                        Some((_, best)) => *best = best.max(weight),
                        None => document.push((row, weight)),
                    }
                }
            }
            indexed.push(document);
        }
        AlignmentIndex {
            embeddings,
            vectors,
            documents: indexed,
        }
    }

    /// The `limit` documents whose words best align with `query`'s, scoring at least the
    /// table's floor, best first (equal scores in document order); none when the query has
    /// no word with a vector.
    pub fn search(&self, query: &str, limit: usize) -> Vec<usize> {
        let dims = self.embeddings.dims();
        let mut targets: Vec<f32> = Vec::new();
        let mut pieces = Vec::new();
        for word in words(query) {
            let start = targets.len();
            targets.resize(start + dims, 0.0);
            let target = &mut targets[start..];
            if self.embeddings.add_word(&word, 1.0, target, &mut pieces) {
                normalize(target);
            } else {
                targets.truncate(start);
            }
        }
        let asked = targets.len() / dims;
        if asked == 0 {
            return Vec::new();
        }
        // Word by word, the (non-negative) cosine with each query word: a tool's words then
        // read one short row each.
        let mut similarities: Vec<f32> = Vec::with_capacity(self.vectors.len() / dims * asked);
        for row in self.vectors.chunks_exact(dims) {
            similarities.extend(
                targets
                    .chunks_exact(dims)
                    .map(|target| dot(row, target).max(0.0)),
            );
        }
        let floor = self.embeddings.floors().alignment;
        let mut best = vec![0.0f32; asked];
        let scores = self.documents.iter().map(|document| {
            best.iter_mut().for_each(|b| *b = 0.0);
            for &(word, weight) in document {
                let start = word as usize * asked;
                for (b, s) in best.iter_mut().zip(&similarities[start..start + asked]) {
                    *b = b.max(s * weight);
                }
            }
            best.iter().sum::<f32>() / asked as f32
        });
        super::bm25::best(scores, |score| score >= floor, limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn indexes(documents: &[&str]) -> Vec<AlignmentIndex> {
        Embeddings::tables()
            .iter()
            .map(|table| {
                AlignmentIndex::new(table, documents.iter().map(|text| vec![(*text, 1.0)]))
            })
            .collect()
    }

    #[test]
    fn each_query_word_finds_its_nearest_word_in_a_tool_in_both_tables() {
        for index in indexes(&[
            "take a screenshot of the page",
            "create an invoice for a customer",
            "cancel a subscription",
        ]) {
            assert_eq!(index.search("bill the customer", 1), vec![1]);
            assert_eq!(index.search("screenshot", 1), vec![0]);
        }
    }

    #[test]
    fn a_word_counts_once_per_tool_at_its_highest_field_weight() {
        let table = &Embeddings::tables()[0];
        let index = AlignmentIndex::new(table, [vec![("refund", 0.5), ("refund payment", 1.0)]]);
        assert_eq!(index.documents[0].len(), 2);
        assert!(index.documents[0].iter().all(|(_, weight)| *weight == 1.0));
    }

    #[test]
    fn a_query_without_known_words_or_with_unrelated_ones_finds_nothing() {
        for index in indexes(&["refund a payment"]) {
            assert!(index.search("日本 the of", 5).is_empty());
            assert!(index.search("zebra xylophone", 5).is_empty());
            assert_eq!(index.search("refund", 5), vec![0]);
        }
    }
}
