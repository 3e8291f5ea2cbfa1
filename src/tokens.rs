//! Token counts with a real tokenizer: `o200k_base` (OpenAI's current BPE), embedded in
//! the binary by `tiktoken-rs`, loaded once on first use. Automatic deferral measures
//! tool definitions with it; other providers' tokenizers differ by some percent, which
//! a budget absorbs.

use tiktoken_rs::CoreBPE;

/// The tokenizer's name, as reports give it.
pub const TOKENIZER: &str = "o200k_base";

fn bpe() -> &'static CoreBPE {
    tiktoken_rs::o200k_base_singleton()
}

/// How many `o200k_base` tokens `text` is.
pub fn count(text: &str) -> usize {
    bpe().encode_ordinary(text).len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_the_published_encoding() {
        // "hello world" is two tokens in o200k_base ("hello", " world").
        assert_eq!(count("hello world"), 2);
        assert_eq!(count(""), 0);
    }
}
