//! Similarity, one of the semantic rankings of tool search (with [`super::alignment`]):
//! each document (a tool's weighted fields) and each query as one unit vector, the weighted
//! mean of its words' static embeddings from one table ([`super::embeddings`]); documents
//! rank by cosine similarity to the query. It finds "will it rain in Paris" → a forecast
//! tool, which shares no word with it.
//!
//! Vectors are computed once per index (when the scope's tools change), a search is one
//! embedding of the query and a dot product per document.

use super::embeddings::{Embeddings, dot, normalize};

/// Unit vectors of documents, row by row.
pub struct SemanticIndex {
    embeddings: &'static Embeddings,
    vectors: Vec<f32>,
}

impl SemanticIndex {
    /// Embeds `documents` (document `i` is the `i`th) with `embeddings`.
    pub fn new<'a>(
        embeddings: &'static Embeddings,
        documents: impl IntoIterator<Item = Vec<(&'a str, f32)>>,
    ) -> SemanticIndex {
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
        SemanticIndex {
            embeddings,
            vectors,
        }
    }

    /// The `limit` documents nearest `query` with a similarity of at least the table's
    /// floor, best first (equal scores in document order); none when the query
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
        let floor = self.embeddings.floors().similarity;
        let similarities = self.vectors.chunks_exact(dims).map(|row| dot(row, &target));
        super::bm25::best(similarities, |similarity| similarity >= floor, limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn indexes(documents: &[&str]) -> Vec<SemanticIndex> {
        Embeddings::tables()
            .iter()
            .map(|table| SemanticIndex::new(table, documents.iter().map(|text| vec![(*text, 1.0)])))
            .collect()
    }

    #[test]
    fn a_paraphrase_finds_the_document_it_shares_no_word_with_in_both_tables() {
        for index in indexes(&[
            "take a screenshot of the page",
            "refund a payment to a customer",
            "get the weather forecast for a city",
        ]) {
            assert_eq!(index.search("will it rain in Paris", 1), vec![2]);
            assert_eq!(index.search("give the client their money back", 1), vec![1]);
        }
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
