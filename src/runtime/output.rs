//! Output accounting: compact-JSON bytes of the logs array, the byte cap it shares with the
//! completion or failure message, and what an `output-limit` failure keeps within that cap.

use std::io;

use serde::Serialize;

/// The run's console lines, kept while the compact JSON of the logs array fits the cap.
#[derive(Debug)]
pub(crate) struct OutputBudget {
    cap: u64,
    logs: Vec<String>,
    /// Bytes of the compact JSON of `logs`: `[]` plus each line's JSON plus separators.
    logs_bytes: u64,
    exhausted: bool,
    /// The first line that did not fit, cut to what could ever fit the cap: an
    /// `output-limit` failure keeps its fitting prefix when the lines before it leave room.
    overflow: Option<String>,
}

/// Whether a console line was kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Admission {
    Accepted,
    /// The line would overflow the cap: it and every later line are dropped.
    Refused,
}

impl OutputBudget {
    pub(crate) fn new(cap: u64) -> Self {
        Self {
            cap,
            logs: Vec::new(),
            logs_bytes: 2,
            exhausted: false,
            overflow: None,
        }
    }

    /// An empty budget under the same cap that refuses every line: what is left once the
    /// output was taken, so a late conclusion still fits its message under the real cap.
    pub(crate) fn spent(cap: u64) -> Self {
        Self {
            exhausted: true,
            ..Self::new(cap)
        }
    }

    pub(crate) fn push(&mut self, line: &str) -> Admission {
        if self.exhausted {
            return Admission::Refused;
        }
        let separator = u64::from(!self.logs.is_empty());
        let grown = self.logs_bytes + separator + compact_json_len(line);
        if grown > self.cap {
            self.exhausted = true;
            self.overflow = Some(json_string_prefix(line, self.cap).to_owned());
            return Admission::Refused;
        }
        self.logs_bytes = grown;
        self.logs.push(line.to_owned());
        Admission::Accepted
    }

    /// Whether `payload_bytes` more (the completion or failure message JSON) still fit.
    pub(crate) fn fits_with(&self, payload_bytes: u64) -> bool {
        self.logs_bytes.saturating_add(payload_bytes) <= self.cap
    }

    /// Bytes of output the run may still produce.
    pub(crate) fn remaining(&self) -> u64 {
        if self.exhausted {
            return 0;
        }
        self.cap.saturating_sub(self.logs_bytes)
    }

    pub(crate) fn cap(&self) -> u64 {
        self.cap
    }

    pub(crate) fn into_logs(self) -> Vec<String> {
        self.logs
    }

    /// The logs and diagnostic `message` of an `output-limit` failure, together within the
    /// cap (the compact JSON of the logs plus that of the message): whole lines while they
    /// fit beside the message, then the longest fitting prefix of the first line that does
    /// not (a line refused at the cap included), then nothing more. Under a cap too small
    /// for the message itself, the message is cut to fit.
    pub(crate) fn limited(self, message: &str) -> (Vec<String>, String) {
        let budget = self.cap.saturating_sub(compact_json_len(message));
        let mut kept = Vec::new();
        let mut bytes: u64 = 2;
        for line in self.logs.into_iter().chain(self.overflow) {
            let separator = u64::from(!kept.is_empty());
            let room = budget.saturating_sub(bytes + separator);
            let line_bytes = compact_json_len(line.as_str());
            if line_bytes <= room {
                bytes += separator + line_bytes;
                kept.push(line);
                continue;
            }
            let prefix = json_string_prefix(&line, room);
            if !prefix.is_empty() {
                bytes += separator + compact_json_len(prefix);
                kept.push(prefix.to_owned());
            }
            break;
        }
        let message = json_string_prefix(message, self.cap.saturating_sub(bytes)).to_owned();
        (kept, message)
    }
}

/// The longest prefix of `text` (whole characters) whose JSON string, quotes included, is at
/// most `max_bytes`; empty when not even `""` fits.
pub(crate) fn json_string_prefix(text: &str, max_bytes: u64) -> &str {
    let mut bytes: u64 = 2;
    if max_bytes < bytes {
        return "";
    }
    for (index, character) in text.char_indices() {
        bytes += escaped_len(character);
        if bytes > max_bytes {
            return text.get(..index).unwrap_or_default();
        }
    }
    text
}

/// Bytes one character takes inside a compact JSON string.
fn escaped_len(character: char) -> u64 {
    match character {
        '"' | '\\' | '\u{8}' | '\u{c}' | '\n' | '\r' | '\t' => 2,
        c if u32::from(c) < 0x20 => 6,
        c => c.len_utf8() as u64,
    }
}

/// UTF-8 bytes of the compact JSON of `value`.
pub(crate) fn compact_json_len<T: Serialize + ?Sized>(value: &T) -> u64 {
    let mut counter = ByteCounter(0);
    match serde_json::to_writer(&mut counter, value) {
        Ok(()) => counter.0,
        Err(_) => u64::MAX,
    }
}

struct ByteCounter(u64);

impl io::Write for ByteCounter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn check(cap: u64, lines: &[&str], kept: &[&str], fits: Option<(u64, bool)>) {
        let mut budget = OutputBudget::new(cap);
        for line in lines {
            budget.push(line);
        }
        if let Some((payload, expected)) = fits {
            assert_eq!(
                budget.fits_with(payload),
                expected,
                "cap {cap} lines {lines:?}"
            );
        }
        assert_eq!(budget.into_logs(), kept, "cap {cap} lines {lines:?}");
    }

    #[test]
    fn logs_keep_the_longest_prefix_that_fits() {
        // ["abc"] is 7 bytes, "xy" is 4: exactly 11.
        check(11, &["abc"], &["abc"], Some((4, true)));
        check(10, &["abc"], &["abc"], Some((4, false)));
        check(6, &["abc"], &[], Some((0, true)));
        // ["a","b"] is 9 bytes; a refused line ends the logs even if a later one would fit.
        check(9, &["a", "b", ""], &["a", "b"], None);
        check(8, &["a", "bb", "c"], &["a"], None);
        check(4, &[], &[], Some((2, true)));
    }

    /// `output-limit` keeps whole lines while they fit beside the message, then the fitting
    /// prefix of the first that does not; the message itself is cut only under a tiny cap.
    #[test]
    fn an_output_limit_keeps_the_fitting_prefix() {
        let message = "outer output exceeded 64 bytes"; // 32 bytes as JSON
        let limited = |cap: u64, lines: &[&str]| {
            let mut budget = OutputBudget::new(cap);
            for line in lines {
                budget.push(line);
            }
            let (logs, text) = budget.limited(message);
            let total = compact_json_len(&logs) + compact_json_len(text.as_str());
            assert!(total <= cap, "cap {cap}: {logs:?} {text:?}");
            (logs, text)
        };
        // ["aaaa","bbbb"] is 15 bytes; with the message 47 fit 64.
        assert_eq!(
            limited(64, &["aaaa", "bbbb", &"c".repeat(40)]),
            (
                vec!["aaaa".into(), "bbbb".into(), "cccccccccccccc".into()],
                message.into()
            )
        );
        // A line refused at the cap still lends its prefix; escapes count as written.
        assert_eq!(
            limited(64, &[&"\"".repeat(100)]),
            (vec!["\"".repeat(14)], message.into())
        );
        // Lines that fit the cap but not beside the message are cut, and later ones dropped.
        assert_eq!(
            limited(40, &["0123456789", "later"]),
            (vec!["0123".into()], message.into())
        );
        assert_eq!(limited(34, &["x"]), (vec![], message.into()));
        // A multi-byte character is kept whole or not at all.
        assert_eq!(limited(42, &["ab€€"]), (vec!["ab€".into()], message.into()));
        // Under a cap smaller than the message, the message is cut to fit.
        assert_eq!(limited(11, &["abc"]), (vec![], "outer o".into()));
    }

    #[test]
    fn json_length_counts_escapes_and_utf8() {
        assert_eq!(compact_json_len("é\n\""), 2 + 2 + 2 + 2);
        assert_eq!(compact_json_len(&serde_json::json!({"a": [1, null]})), 14);
    }
}
