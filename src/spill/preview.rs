//! What the model reads in place of a spilled text: its head, a marker line naming the total
//! size and the file, its tail, and one line saying how to read more; or, when the text
//! could not be saved, the head and tail with a note saying so.

use std::path::Path;

/// The line telling the model how to get at the rest.
pub const READ_MORE: &str = "[To read more, call the read tool with that path as file_path and \
offset/limit (line numbers), or grep with that path.]";

/// Head and tail of `text`, at most `preview` bytes each (cut at character boundaries),
/// with the marker (built from the bytes shown) between them and `hint` after, shrunk so the
/// whole fits `threshold` bytes whenever the two lines alone do. `text` must be longer than
/// `threshold` (head and tail then never overlap).
pub fn compose(
    text: &str,
    preview: usize,
    threshold: usize,
    marker: impl Fn(usize) -> String,
    hint: Option<&str>,
) -> String {
    // The marker is longest when nothing is shown (most digits).
    let notes = marker(0).len() + hint.map_or(0, |h| h.len() + 1) + 2;
    let side = preview.min(threshold.saturating_sub(notes) / 2);
    let head = &text[..text.floor_char_boundary(side)];
    let tail = &text[text
        .ceil_char_boundary(text.len().saturating_sub(side))
        .max(head.len())..];
    join(head, tail, &marker(head.len() + tail.len()), hint)
}

/// `head`, the marker, `tail`, then the hint (each on its own line).
pub fn join(head: &str, tail: &str, marker: &str, hint: Option<&str>) -> String {
    let mut out = String::with_capacity(head.len() + tail.len() + marker.len() + 256);
    out.push_str(head);
    if !head.is_empty() && !head.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(marker);
    out.push('\n');
    out.push_str(tail);
    if let Some(hint) = hint {
        if !tail.is_empty() && !tail.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(hint);
    }
    out
}

/// The marker of a saved text: how much is not shown, the size, lines and where it is.
pub fn saved_marker(what: &str, shown: usize, total: u64, lines: u64, path: &Path) -> String {
    let omitted = total.saturating_sub(shown as u64);
    format!(
        "[... {omitted} bytes not shown: the whole {what} ({total} bytes, {lines} lines) is saved in {} ...]",
        path.display()
    )
}

/// The marker of a text that could not be saved.
pub fn unsaved_marker(what: &str, shown: usize, total: u64, why: &str) -> String {
    let omitted = total.saturating_sub(shown as u64);
    format!(
        "[... {omitted} bytes not shown and not saved ({why}); only this preview of the {what} ({total} bytes) is kept ...]"
    )
}

/// Lines of `bytes` as `read` numbers them (a last line without a newline counts).
pub fn line_count(bytes: &[u8]) -> u64 {
    let newlines = memchr::memchr_iter(b'\n', bytes).count() as u64;
    newlines + u64::from(bytes.last().is_some_and(|&b| b != b'\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_head_and_tail_around_the_marker() {
        let text = "0123456789".repeat(10);
        let out = compose(
            &text,
            5,
            10_000,
            |shown| format!("[{shown}]"),
            Some("[hint]"),
        );
        assert_eq!(out, "01234\n[10]\n56789\n[hint]");
    }

    #[test]
    fn cuts_at_character_boundaries() {
        let text = "ééééé"; // two bytes each
        let out = compose(text, 3, 10_000, |_| "[m]".into(), None);
        assert_eq!(out, "é\n[m]\né");
    }

    #[test]
    fn shrinks_to_fit_the_threshold() {
        let text = "x".repeat(10_000);
        let marker = "m".repeat(50);
        let out = compose(&text, 2_000, 1_024, |_| marker.clone(), Some("h"));
        assert!(out.len() <= 1_024, "{}", out.len());
        assert!(out.starts_with("xxx"));
    }

    #[test]
    fn counts_lines_like_read() {
        assert_eq!(line_count(b""), 0);
        assert_eq!(line_count(b"a"), 1);
        assert_eq!(line_count(b"a\n"), 1);
        assert_eq!(line_count(b"a\nb"), 2);
    }
}
