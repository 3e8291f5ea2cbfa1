//! Static token embeddings for the semantic rankings of tool search, two tables made by
//! `scripts/embeddings/distill.sh` from registry packages: `embeddings.bin`, one vector per
//! WordPiece token of all-MiniLM-L6-v2's vocabulary (the model's output for the token alone,
//! model2vec-style, then fitted so that sums of them match the model's vectors of WordNet's
//! sentences, reduced by PCA to 128 dimensions), and `wordllama.bin`, WordLlama's
//! trained vectors of Llama 2's tokens (first 128 dimensions; tokens renamed the WordPiece
//! way, so one reader splits words for both). Both are int8 with one scale per token; two
//! independently trained tables err on different paraphrases, so their rankings add up. A
//! text's vector is the weighted mean of its tokens' vectors, so related words ("rain",
//! "forecast") land near each other with no model run at search time.
//!
//! The table is embedded in the binary and parsed once, on the first search that needs it
//! (a token map over the static bytes; the components are read in place).

use super::bm25::words;
use std::collections::HashMap;
use std::sync::LazyLock;

const MAGIC: &[u8] = b"DSHEMB1\n";
/// Words longer than this are not split into pieces (BERT's own limit).
const MAX_WORD_CHARS: usize = 100;

/// The embedded tables (format in `scripts/embeddings/distill.py`) with the floors their
/// scores must reach to count, each chosen the same way on the 114 tuning queries: under the
/// relevant tools' scores, above what unrelated words ("zebra xylophone", "banana") reach
/// against the 413-tool catalog, so nonsense finds nothing. MiniLM's (fitted) similarity:
/// lowest relevant 0.256 ("who is on call right now"), nonsense 0.20; alignment: lowest
/// 0.45, nonsense 0.22. WordLlama's: similarity lowest 0.25, nonsense 0.20; alignment lowest
/// 0.37, nonsense 0.34.
const SOURCES: [Source; 2] = [
    Source {
        bytes: include_bytes!("embeddings.bin"),
        floors: Floors {
            similarity: 0.23,
            alignment: 0.4,
        },
    },
    Source {
        bytes: include_bytes!("wordllama.bin"),
        floors: Floors {
            similarity: 0.22,
            alignment: 0.35,
        },
    },
];

static TABLES: LazyLock<Vec<Embeddings>> =
    LazyLock::new(|| SOURCES.iter().filter_map(Embeddings::parse).collect());

/// An embedded table's bytes and floors.
struct Source {
    bytes: &'static [u8],
    floors: Floors,
}

/// Scores below which a tool is no match, per ranking.
#[derive(Clone, Copy, Debug)]
pub struct Floors {
    /// Cosine of the tool's and the query's mean vectors.
    pub similarity: f32,
    /// Mean over the query's words of their best weighted cosine in the tool.
    pub alignment: f32,
}

/// A token table: vocabulary, int8 components and per-token scales.
pub struct Embeddings {
    dims: usize,
    floors: Floors,
    ids: HashMap<&'static str, u32>,
    components: &'static [u8],
    scales: Vec<f32>,
}

impl Embeddings {
    /// The embedded tables, parsed on first use (a malformed one, which a unit test rules
    /// out, would be left out).
    pub fn tables() -> &'static [Embeddings] {
        &TABLES
    }

    fn parse(source: &Source) -> Option<Embeddings> {
        let bytes = source.bytes;
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
            floors: source.floors,
            ids,
            components,
            scales,
        })
    }

    /// Length of every vector.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// This table's score floors.
    pub fn floors(&self) -> Floors {
        self.floors
    }

    /// Adds `weight` × the mean vector of `text`'s words (each word the mean of its WordPiece
    /// pieces; stop words and words with no pieces add nothing) to `into`; `piece` is reused.
    pub fn add_text(&self, text: &str, weight: f32, into: &mut [f32], piece: &mut Vec<u32>) {
        for word in words(text) {
            self.add_word(&word, weight, into, piece);
        }
    }

    /// Adds `weight` × the mean vector of `word`'s WordPiece pieces (lowercase) to `into`;
    /// false, adding nothing, when the word has no pieces. `piece` is reused.
    pub fn add_word(
        &self,
        word: &str,
        weight: f32,
        into: &mut [f32],
        piece: &mut Vec<u32>,
    ) -> bool {
        piece.clear();
        self.pieces(word, piece);
        if piece.is_empty() {
            return false;
        }
        let share = weight / piece.len() as f32;
        for &token in piece.iter() {
            self.add(token, share, into);
        }
        true
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

/// The dot product of `a` and `b` (equal lengths), in eight independent lanes so the
/// compiler vectorizes it (a plain `sum` must add in order, one float at a time): a search
/// computes one per tool and one per distinct tool word and query word.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let (a_chunks, b_chunks) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = a_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in a_chunks.zip(b_chunks) {
        for ((lane, x), y) in lanes.iter_mut().zip(x).zip(y) {
            *lane += x * y;
        }
    }
    lanes.iter().sum::<f32>() + tail
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
        &Embeddings::tables()[0]
    }

    fn vector(table: &Embeddings, text: &str) -> Vec<f32> {
        let mut vector = vec![0.0; table.dims()];
        table.add_text(text, 1.0, &mut vector, &mut Vec::new());
        normalize(&mut vector);
        vector
    }

    fn cosine(table: &Embeddings, a: &str, b: &str) -> f32 {
        let b = vector(table, b);
        vector(table, a).iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn both_embedded_tables_parse_with_their_vocabularies() {
        let tables = Embeddings::tables();
        assert_eq!(tables.len(), 2);
        for (table, tokens) in tables.iter().zip([27_000, 19_000]) {
            assert_eq!(table.dims(), 128);
            assert!(table.scales.len() > tokens, "{}", table.scales.len());
            let mut pieces = Vec::new();
            table.pieces("forecast", &mut pieces);
            assert!(!pieces.is_empty());
        }
        let mut pieces = Vec::new();
        tables[0].pieces("forecast", &mut pieces);
        assert_eq!(
            pieces.len(),
            1,
            "a whole word of MiniLM's vocabulary is one token"
        );
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
        assert!(vector(table, "日本").iter().all(|v| *v == 0.0));
    }

    #[test]
    fn dot_adds_every_product_whatever_the_length() {
        let a: Vec<f32> = (1..=11).map(|v| v as f32).collect();
        assert_eq!(dot(&a, &a), (1..=11).map(|v| (v * v) as f32).sum::<f32>());
        assert_eq!(dot(&[], &[]), 0.0);
    }

    #[test]
    fn related_words_are_closer_than_unrelated_ones_in_both_tables() {
        for table in Embeddings::tables() {
            let rain = |text| cosine(table, "rain", text);
            assert!(rain("weather forecast") > rain("merge pull request"));
            let money = |text| cosine(table, "money back", text);
            assert!(money("payment refund") > money("take screenshot"));
        }
    }
}
