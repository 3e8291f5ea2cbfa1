//! The semantic signal of tool search: each document (a tool's weighted fields) and each
//! query as one unit vector, the weighted mean of its words' static embeddings
//! ([`super::embeddings`]); documents rank by cosine similarity to the query. It finds
//! "give the customer their money back" → `create_refund`, which shares no word with it.
//!
//! Vectors are computed once per index (when the scope's tools change), a search is one
//! embedding of the query and a dot product per document.

use super::embeddings::{Embeddings, normalize};

/// Cosine similarity below which a document is no semantic match: under every relevant
/// tool of the tuning queries (lowest 0.39), above what unrelated words reach ("zebra
/// xylophone" against the 413-tool catalog: 0.24), so nonsense still finds nothing.
const MIN_SIMILARITY: f32 = 0.3;

/// Unit vectors of documents, row by row.
pub struct SemanticIndex {
    embeddings: &'static Embeddings,
    vectors: Vec<f32>,
}

impl SemanticIndex {
    /// Embeds `documents` (document `i` is the `i`th); `None` when there is no table.
    pub fn new<'a>(
        documents: impl IntoIterator<Item = Vec<(&'a str, f32)>>,
    ) -> Option<SemanticIndex> {
        let embeddings = Embeddings::shared()?;
        let dims = embeddings.dims();
        let mut vectors = Vec::new();
        let mut pieces = Vec::new();
        for fields in documents {
            let start = vectors.len();
            vectors.resize(start + dims, 0.0);
            let row = &mut vectors[start..];
            for (text, weight) in fields {
                embeddings.add_text(text, weight, row, &mut pieces);
            }
            normalize(row);
        }
        Some(SemanticIndex {
            embeddings,
            vectors,
        })
    }

    /// The `limit` documents nearest `query` with a similarity of at least
    /// [`MIN_SIMILARITY`], best first (equal scores in document order); none when the query
    /// has no word with a vector.
    pub fn search(&self, query: &str, limit: usize) -> Vec<usize> {
        let dims = self.embeddings.dims();
        let mut target = vec![0.0; dims];
        self.embeddings
            .add_text(query, 1.0, &mut target, &mut Vec::new());
        normalize(&mut target);
        if target.iter().all(|v| *v == 0.0) {
            return Vec::new();
        }
        let ranked = self
            .vectors
            .chunks_exact(dims)
            .map(|row| row.iter().zip(&target).map(|(a, b)| a * b).sum::<f32>())
            .enumerate()
            .filter(|(_, similarity)| *similarity >= MIN_SIMILARITY)
            .collect();
        super::bm25::best(ranked, limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(documents: &[&str]) -> SemanticIndex {
        SemanticIndex::new(documents.iter().map(|text| vec![(*text, 1.0)]))
            .unwrap_or_else(|| panic!("no embedded table"))
    }

    #[test]
    fn a_paraphrase_finds_the_document_it_shares_no_word_with() {
        let index = index(&[
            "take a screenshot of the page",
            "refund a payment to a customer",
            "get the weather forecast for a city",
        ]);
        assert_eq!(index.search("will it rain in Paris", 1), vec![2]);
        assert_eq!(index.search("give the client their money back", 1), vec![1]);
    }

    #[test]
    fn a_query_without_known_words_finds_nothing() {
        let index = index(&["refund a payment"]);
        assert!(index.search("日本 the of", 5).is_empty());
        assert_eq!(index.search("refund", 5), vec![0]);
    }
}
