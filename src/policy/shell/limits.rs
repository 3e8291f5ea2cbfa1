//! Bounds checked before the parser runs: brush's PEG parser recurses once per nesting
//! level, so a hostile `$($($(…` must be refused before it reaches it.

/// Whether `text` nests deeper than `budget` levels. A conservative estimate over the raw
/// text: `(`/`)`, `{`/`}` and the compound keywords (`if`…`fi`, loops…`done`,
/// `case`…`esac`) each counted apart (quotes are not skipped, so quoted brackets only make
/// the estimate larger).
pub(super) fn too_deep(text: &str, budget: usize) -> bool {
    let (mut parens, mut braces, mut keywords) = (0usize, 0usize, 0usize);
    let mut word_start = true;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'(' => parens += 1,
            b')' => parens = parens.saturating_sub(1),
            b'{' => braces += 1,
            b'}' => braces = braces.saturating_sub(1),
            _ => {}
        }
        if word_start && b.is_ascii_lowercase() {
            let end = bytes[i..]
                .iter()
                .position(|c| !c.is_ascii_lowercase())
                .map_or(bytes.len(), |n| i + n);
            let ends_word = bytes.get(end).is_none_or(|c| is_break(*c));
            if ends_word {
                match &text[i..end] {
                    "if" | "while" | "until" | "for" | "select" | "case" => keywords += 1,
                    "fi" | "done" | "esac" => keywords = keywords.saturating_sub(1),
                    _ => {}
                }
            }
            i = end;
            word_start = false;
            continue;
        }
        word_start = is_break(b);
        if parens + braces + keywords > budget {
            return true;
        }
        i += 1;
    }
    false
}

fn is_break(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'{' | b'}' | b'`' | b'$'
    )
}

/// The first 80 characters of `text`, for messages.
pub(super) fn head(text: &str) -> &str {
    let mut end = text.len().min(80);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
