//! Keeps automatic semicolon insertion from joining two statements (or class members) that
//! blanking brought together, by writing a `;` into a blanked byte between them.
//!
//! In `let x = y as T⏎(z)` TypeScript ends the statement after `T`, because `T(` cannot
//! continue a type; once ` as T` is blank, JavaScript would read `y(z)`. The same happens when
//! a whole statement or member between them is blanked, or a member's modifiers are. The fix
//! is the one ts-blank-space uses: a `;` at the first blanked byte after the first part.

use oxc::ast::Comment;

use super::edits::Blanked;

/// Two neighbours (statements of one list, or a class field and the member after it) whose
/// boundary blanking may have hidden.
#[derive(Debug)]
pub(super) struct Seam {
    pub(super) before_end: u32,
    pub(super) after_start: u32,
    pub(super) kind: SeamKind,
}

#[derive(Debug)]
pub(super) enum SeamKind {
    Statements,
    /// `initialized`: the field has `= value`, which `[`, `(`, `*`, `in` can continue.
    /// `name_continues`: the field is a bare `get`, `set` or `static`, which JavaScript
    /// joins with the member after it even across a line break.
    AfterField {
        initialized: bool,
        name_continues: bool,
    },
}

/// Adds a `;` mark for every seam whose two sides would now parse as one.
pub(super) fn keep_seams(
    source: &str,
    comments: &[Comment],
    blanked: &mut Blanked,
    seams: &[Seam],
) {
    let bytes = source.as_bytes();
    for seam in seams {
        let Some(last) = last_kept_character(source, comments, blanked, seam.before_end) else {
            continue;
        };
        let first = first_kept_character(source, comments, blanked, seam.after_start);
        let Some(&first_byte) = bytes.get(first as usize) else {
            continue;
        };
        if bytes.get(last as usize) == Some(&b';') {
            continue;
        }
        let rest = bytes.get(first as usize..).unwrap_or_default();
        let word_length = rest
            .iter()
            .take_while(|&&byte| {
                byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'$') || byte >= 0x80
            })
            .count();
        let first_word = &rest[..word_length];
        let joins = match seam.kind {
            SeamKind::Statements => matches!(first_byte, b'(' | b'[' | b'`' | b'+' | b'-' | b'/'),
            SeamKind::AfterField {
                initialized,
                name_continues,
            } => {
                name_continues
                    || (initialized
                        && (matches!(first_byte, b'[' | b'(' | b'*')
                            || matches!(first_word, b"in" | b"instanceof")))
            }
        };
        if !joins {
            continue;
        }
        let slot = blanked.overlapping(last + 1, first).find_map(|range| {
            range.clone().find(|&offset| {
                bytes
                    .get(offset as usize)
                    .is_some_and(|&byte| byte.is_ascii() && byte != b'\n' && byte != b'\r')
            })
        });
        if let Some(slot) = slot {
            blanked.add_mark(slot, b';');
        }
    }
}

/// Offset of the last character before `end` that stays in the output and is neither
/// whitespace nor part of a comment.
fn last_kept_character(
    source: &str,
    comments: &[Comment],
    blanked: &Blanked,
    end: u32,
) -> Option<u32> {
    let mut position = end;
    while position > 0 {
        let previous = position - 1;
        if let Some(range) = blanked.covering(previous) {
            position = range.start;
        } else if let Some(comment) = comment_covering(comments, previous) {
            position = comment.span.start;
        } else {
            let mut start = previous as usize;
            while !source.is_char_boundary(start) {
                start -= 1;
            }
            let character = source[start..].chars().next()?;
            if !character.is_whitespace() && character != '\u{FEFF}' {
                return Some(start as u32);
            }
            position = start as u32;
        }
    }
    None
}

/// Offset of the first character at or after `start` that stays in the output and is
/// neither whitespace nor part of a comment (the source length if there is none).
fn first_kept_character(source: &str, comments: &[Comment], blanked: &Blanked, start: u32) -> u32 {
    let mut position = start;
    while let Some(character) = source
        .get(position as usize..)
        .and_then(|rest| rest.chars().next())
    {
        if let Some(range) = blanked.covering(position) {
            position = range.end;
        } else if let Some(comment) = comment_covering(comments, position) {
            position = comment.span.end;
        } else if character.is_whitespace() || character == '\u{FEFF}' {
            position += character.len_utf8() as u32;
        } else {
            return position;
        }
    }
    source.len() as u32
}

fn comment_covering(comments: &[Comment], offset: u32) -> Option<&Comment> {
    let after = comments.partition_point(|comment| comment.span.start <= offset);
    let candidate = comments.get(after.checked_sub(1)?)?;
    (offset < candidate.span.end).then_some(candidate)
}
