//! The edits a strip makes (byte ranges to blank, single ASCII characters to write into a
//! blanked byte) and how they are applied without moving any byte of the source.

use std::ops::Range;

/// Byte ranges to blank and characters to write over blanked bytes, in any order until
/// [`Edits::finish`] sorts them.
#[derive(Debug, Default)]
pub(super) struct Edits {
    blanks: Vec<Range<u32>>,
    marks: Vec<(u32, u8)>,
}

impl Edits {
    pub(super) fn blank(&mut self, start: u32, end: u32) {
        if start < end {
            self.blanks.push(start..end);
        }
    }

    /// Writes `byte` (ASCII) at `offset`, which must also be covered by a blank; used to keep
    /// a statement boundary (`;`) or to move a parenthesis past a blanked line break.
    pub(super) fn mark(&mut self, offset: u32, byte: u8) {
        self.marks.push((offset, byte));
    }

    /// Sorts and merges the blanks (dropping any whose ends are not character boundaries, which
    /// spans from the parser never produce) so that lookups can binary-search them.
    pub(super) fn finish(mut self, source: &str) -> Blanked {
        self.blanks.retain(|range| {
            source.is_char_boundary(range.start as usize)
                && source.is_char_boundary(range.end as usize)
        });
        self.blanks.sort_unstable_by_key(|range| range.start);
        let mut merged: Vec<Range<u32>> = Vec::with_capacity(self.blanks.len());
        for range in self.blanks {
            match merged.last_mut() {
                Some(last) if range.start <= last.end => last.end = last.end.max(range.end),
                _ => merged.push(range),
            }
        }
        self.marks.sort_unstable();
        Blanked {
            ranges: merged,
            marks: self.marks,
        }
    }
}

/// The merged, sorted blank ranges of one strip, plus the characters written into them.
#[derive(Debug)]
pub(super) struct Blanked {
    ranges: Vec<Range<u32>>,
    marks: Vec<(u32, u8)>,
}

impl Blanked {
    /// The blank range that covers `offset`, if any.
    pub(super) fn covering(&self, offset: u32) -> Option<Range<u32>> {
        let after = self.ranges.partition_point(|range| range.start <= offset);
        let candidate = self.ranges.get(after.checked_sub(1)?)?;
        (offset < candidate.end).then(|| candidate.clone())
    }

    /// The blank ranges that overlap `from..to`, in source order.
    pub(super) fn overlapping(&self, from: u32, to: u32) -> impl Iterator<Item = Range<u32>> + '_ {
        let first = self.ranges.partition_point(|range| range.end <= from);
        self.ranges[first..]
            .iter()
            .take_while(move |range| range.start < to)
            .map(move |range| range.start.max(from)..range.end.min(to))
    }

    pub(super) fn add_mark(&mut self, offset: u32, byte: u8) {
        let at = self
            .marks
            .partition_point(|&(existing, _)| existing < offset);
        self.marks.insert(at, (offset, byte));
    }

    /// The source with every blanked character replaced by whitespace of the same UTF-8
    /// length (line terminators kept) and every mark written in place.
    ///
    /// ASCII becomes a space; a 2-byte character U+00A0, a 3-byte one U+3000 and a 4-byte one
    /// two U+00A0: all are JavaScript whitespace, so byte offsets stay the same and so do
    /// UTF-16 columns, which are what engines report.
    pub(super) fn render(&self, source: &str) -> String {
        let mut out = String::with_capacity(source.len());
        let mut kept_from = 0usize;
        let mut marks = self.marks.iter().peekable();
        for range in &self.ranges {
            let (start, end) = (range.start as usize, range.end as usize);
            out.push_str(source.get(kept_from..start).unwrap_or_default());
            for (index, character) in source.get(start..end).unwrap_or_default().char_indices() {
                let offset = (start + index) as u32;
                while marks.next_if(|&&(at, _)| at < offset).is_some() {}
                let mark = marks
                    .next_if(|&&(at, _)| at == offset)
                    .map(|&(_, byte)| byte);
                match (mark, character) {
                    (_, '\n' | '\r' | '\u{2028}' | '\u{2029}') => out.push(character),
                    (Some(byte), _) if character.is_ascii() => out.push(char::from(byte)),
                    _ => match character.len_utf8() {
                        1 => out.push(' '),
                        2 => out.push('\u{A0}'),
                        3 => out.push('\u{3000}'),
                        _ => out.push_str("\u{A0}\u{A0}"),
                    },
                }
            }
            kept_from = end;
        }
        out.push_str(source.get(kept_from..).unwrap_or_default());
        out
    }
}

/// True when `text` holds a JavaScript line terminator.
pub(super) fn has_line_terminator(text: &str) -> bool {
    text.contains(['\n', '\r', '\u{2028}', '\u{2029}'])
}
