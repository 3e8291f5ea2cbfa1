//! Bounded capture of one output stream: the first and the last half of the budget are kept
//! and the middle is counted, so a runaway command neither exhausts memory nor hides how it
//! ended.

use std::collections::VecDeque;

/// A stream's head and tail within a byte budget.
#[derive(Debug)]
pub struct HeadTail {
    half: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    omitted: u64,
}

impl HeadTail {
    /// A capture keeping at most `budget` bytes.
    pub fn new(budget: usize) -> Self {
        HeadTail {
            half: budget / 2,
            head: Vec::new(),
            tail: VecDeque::new(),
            omitted: 0,
        }
    }

    /// Appends bytes read from the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        let room = self.half - self.head.len();
        let (to_head, rest) = bytes.split_at(room.min(bytes.len()));
        self.head.extend_from_slice(to_head);
        if rest.len() >= self.half {
            self.omitted += (self.tail.len() + rest.len() - self.half) as u64;
            self.tail.clear();
            self.tail.extend(&rest[rest.len() - self.half..]);
            return;
        }
        self.tail.extend(rest);
        let excess = self.tail.len().saturating_sub(self.half);
        self.tail.drain(..excess);
        self.omitted += excess as u64;
    }

    /// Whether bytes were left out.
    pub fn truncated(&self) -> bool {
        self.omitted > 0
    }

    /// Bytes held (head and tail).
    pub fn len(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    /// Everything held, in order (the whole stream while nothing was left out).
    pub fn contents(&self) -> Vec<u8> {
        let (front, back) = self.tail.as_slices();
        [self.head.as_slice(), front, back].concat()
    }

    /// The head held.
    pub fn head(&self) -> &[u8] {
        &self.head
    }

    /// The tail held.
    pub fn tail(&self) -> Vec<u8> {
        let (front, back) = self.tail.as_slices();
        [front, back].concat()
    }

    /// The captured text (lossy UTF-8), with a marker where bytes were left out.
    pub fn text(&self) -> String {
        let (front, back) = self.tail.as_slices();
        let tail = [front, back].concat();
        if self.omitted == 0 {
            return String::from_utf8_lossy(&[self.head.as_slice(), &tail].concat()).into_owned();
        }
        format!(
            "{}\n[... {} bytes omitted ...]\n{}",
            String::from_utf8_lossy(&self.head),
            self.omitted,
            String::from_utf8_lossy(&tail)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(budget: usize, chunks: &[&str], expected: &str) {
        let mut capture = HeadTail::new(budget);
        for chunk in chunks {
            capture.push(chunk.as_bytes());
        }
        assert_eq!(capture.text(), expected, "{chunks:?}");
        assert_eq!(capture.truncated(), expected.contains("omitted"));
    }

    #[test]
    fn keeps_head_and_tail_within_the_budget() {
        check(8, &["abc"], "abc");
        check(8, &["abcdefgh"], "abcdefgh");
        check(8, &["abcd", "efgh"], "abcdefgh");
        check(8, &["abcdefghi"], "abcd\n[... 1 bytes omitted ...]\nfghi");
        check(
            8,
            &["abcd", "efgh", "ijkl"],
            "abcd\n[... 4 bytes omitted ...]\nijkl",
        );
        check(
            8,
            &["ab", "cdefghijklmnop", "q"],
            "abcd\n[... 9 bytes omitted ...]\nnopq",
        );
        check(
            8,
            &["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"],
            "abcd\n[... 2 bytes omitted ...]\nghij",
        );
    }
}
