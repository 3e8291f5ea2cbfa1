//! Output accounting: compact-JSON bytes of the logs array, and the byte cap it shares with the completion or failure message.

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

    #[test]
    fn json_length_counts_escapes_and_utf8() {
        assert_eq!(compact_json_len("é\n\""), 2 + 2 + 2 + 2);
        assert_eq!(compact_json_len(&serde_json::json!({"a": [1, null]})), 14);
    }
}
