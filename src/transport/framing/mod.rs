//! JSON-RPC framing on a byte stream: LSP `Content-Length` headers or newline-delimited JSON.
//!
//! The reader hands out raw JSON texts (never parsed here) and turns every kind of bad
//! input into an event the caller can log, so malformed bytes never stop the host.
//! Memory is bounded by one 64 KiB buffer plus the message being returned.
//!
//! LSP: a header block is `Name: value` lines (`\r\n` or `\n`) up to an empty line, at
//! most 8 KiB per line and 16 KiB in all; `Content-Length` (any case, decimal, repeated
//! only with the same value) is required, other headers are ignored. Empty lines between
//! frames are ignored. A bad block or garbage is dropped up to the next
//! `content-length:` (any case), searched from one byte after where the bad block began.
//!
//! Resync guarantee (tested exactly by `proptests.rs`): when the reader is at a frame
//! boundary (start of input or just after a frame) and the input continues with bytes
//! that do not contain `content-length` (ASCII case-insensitively) followed by a valid
//! frame, the reader returns at most one `Skipped` and then that frame's `Message` (or
//! `Oversized`, which ends the stream), however the input is split into reads. Every event
//! sequence is in fact independent of the read split (also tested).
//!
//! A frame whose `Content-Length` exceeds the limit ends the stream: its body is never
//! read, because skipping it could swallow whatever the peer sends next for as long as the
//! header claims (`Content-Length: 999999999999` would silence the connection).
//!
//! ndjson: one message per line, `\r\n` accepted, whitespace-only lines ignored; a final
//! line without a newline is still returned (the JSON parser judges it).

mod encode;
mod header;
mod input;
mod lsp;
mod ndjson;
mod reader;
mod skipped;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod testing;
#[cfg(test)]
mod tests;

use std::str::FromStr;

pub use encode::{encode_frame, frame_prefix, frame_suffix};
pub use reader::FrameReader;

/// How messages are delimited on the wire; `Auto` lets the first input byte decide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// LSP base protocol: `Content-Length: N\r\n\r\n` followed by N bytes.
    Lsp,
    /// One compact JSON text per line (MCP's stdio style).
    Ndjson,
    /// Undecided: `{` or `[` as the first non-whitespace byte means ndjson, anything else LSP.
    Auto,
}

/// A `--framing` value that is none of `lsp`, `ndjson`, `auto`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown framing {0:?} (expected lsp, ndjson or auto)")]
pub struct UnknownFraming(pub String);

impl FromStr for Framing {
    type Err = UnknownFraming;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "lsp" => Ok(Framing::Lsp),
            "ndjson" => Ok(Framing::Ndjson),
            "auto" => Ok(Framing::Auto),
            other => Err(UnknownFraming(other.to_owned())),
        }
    }
}

/// What one call to [`FrameReader::next`] found on the stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadEvent {
    /// One complete JSON text, exactly the frame's payload bytes.
    Message(Vec<u8>),
    /// An ndjson line longer than the limit; its bytes were read and dropped, the stream
    /// stays in sync.
    TooLarge { size: usize },
    /// An LSP header announced a body longer than the limit. The body is not read, so the
    /// stream cannot be followed any further: every later call returns `Eof`.
    Oversized { size: usize },
    /// Bad header blocks or garbage were dropped; consecutive problems merge into one report.
    Skipped { reason: String },
    /// End of input (returned again on every later call).
    Eof,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod framing_name_tests {
    use super::*;

    #[test]
    fn parses_the_three_names_and_rejects_others() {
        let check = |text: &str, expected: Result<Framing, UnknownFraming>| {
            assert_eq!(text.parse::<Framing>(), expected);
        };
        check("lsp", Ok(Framing::Lsp));
        check("ndjson", Ok(Framing::Ndjson));
        check("auto", Ok(Framing::Auto));
        check("LSP", Err(UnknownFraming("LSP".to_owned())));
        check("", Err(UnknownFraming(String::new())));
        assert_eq!(
            "json".parse::<Framing>().unwrap_err().to_string(),
            "unknown framing \"json\" (expected lsp, ndjson or auto)"
        );
    }
}
