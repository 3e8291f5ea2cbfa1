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

/// Loads the tokenizer on a thread of its own (about 0.3 s of CPU in a release build:
/// 200,000 ranks decoded from base64 and hashed), once per process, so the first
/// measurement (with `tools.autoDefer`, at `initialize` after the MCP servers listed) finds
/// it ready instead of paying for it.
pub fn warm_in_background() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        // Without the thread the first count loads it instead.
        let _ = std::thread::Builder::new()
            .name("tokenizer".into())
            .spawn(|| {
                bpe();
            });
    });
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
