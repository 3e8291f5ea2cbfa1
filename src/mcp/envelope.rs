//! What a JSON-RPC message is, read from its bytes as they stream past without holding
//! them: whether it has a top-level `method` (a request or notification of the server) and
//! its top-level `id`. The stdout reader (`stdout`) needs this for a message too large to
//! keep: the `id` of an answer may come last (the TypeScript SDK writes `result` first), so
//! every byte is looked at once, and only the `id`'s own few bytes are kept.

use rmcp::model::RequestId;

/// Longest `id` value kept (numbers and short strings; anything longer is not an id rmcp
/// gave and matches no pending call).
const MAX_ID: usize = 128;

/// Longest top-level key kept (`jsonrpc` is the longest one of interest).
const MAX_KEY: usize = 8;

/// Which top-level member's value is being read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Member {
    Id,
    Other,
}

/// The scanning state of one message.
pub struct Envelope {
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// At depth 1, the next string is a key.
    expect_key: bool,
    reading_key: bool,
    key: Vec<u8>,
    key_overflow: bool,
    /// The top-level member whose value is being read (after its `:`).
    value: Option<Member>,
    id: Vec<u8>,
    id_overflow: bool,
    has_method: bool,
}

impl Default for Envelope {
    fn default() -> Self {
        Envelope {
            depth: 0,
            in_string: false,
            escaped: false,
            expect_key: false,
            reading_key: false,
            key: Vec::with_capacity(MAX_KEY),
            key_overflow: false,
            value: None,
            id: Vec::new(),
            id_overflow: false,
            has_method: false,
        }
    }
}

impl Envelope {
    /// Looks at the next bytes of the message.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.in_string
                && !self.escaped
                && !self.reading_key
                && self.value != Some(Member::Id)
            {
                // The bulk of a large message is string content: skip to what matters.
                match memchr::memchr2(b'"', b'\\', bytes) {
                    Some(at) => bytes = &bytes[at..],
                    None => return,
                }
            }
            let byte = bytes[0];
            bytes = &bytes[1..];
            self.step(byte);
        }
    }

    fn step(&mut self, byte: u8) {
        let keep_id = self.value == Some(Member::Id) && self.depth >= 1;
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if byte == b'\\' {
                self.escaped = true;
            } else if byte == b'"' {
                self.in_string = false;
                if self.reading_key {
                    self.reading_key = false;
                    return;
                }
            }
            if self.reading_key {
                self.push_key(byte);
            } else if keep_id {
                self.push_id(byte);
            }
            return;
        }
        match byte {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.expect_key {
                    self.expect_key = false;
                    self.reading_key = true;
                    self.key.clear();
                    self.key_overflow = false;
                    return;
                }
            }
            b'{' | b'[' => {
                self.depth += 1;
                if self.depth == 1 {
                    self.expect_key = byte == b'{';
                    return;
                }
            }
            b'}' | b']' => {
                if self.depth == 1 {
                    self.value = None;
                }
                self.depth = self.depth.saturating_sub(1);
                return;
            }
            b':' if self.depth == 1 && self.value.is_none() => {
                let key = (!self.key_overflow).then_some(self.key.as_slice());
                if key == Some(b"method") {
                    self.has_method = true;
                }
                self.value = Some(if key == Some(b"id") {
                    self.id.clear();
                    Member::Id
                } else {
                    Member::Other
                });
                return;
            }
            b',' if self.depth == 1 => {
                self.value = None;
                self.expect_key = true;
                return;
            }
            _ => {}
        }
        if keep_id {
            self.push_id(byte);
        }
    }

    fn push_key(&mut self, byte: u8) {
        if self.key.len() < MAX_KEY {
            self.key.push(byte);
        } else {
            self.key_overflow = true;
        }
    }

    fn push_id(&mut self, byte: u8) {
        if self.id.len() < MAX_ID {
            self.id.push(byte);
        } else {
            self.id_overflow = true;
        }
    }

    /// Whether the message has a top-level `method` (the server's request or notification,
    /// not an answer to the host).
    pub fn has_method(&self) -> bool {
        self.has_method
    }

    /// The top-level `id`, if it was a number or a short string.
    pub fn id(&self) -> Option<RequestId> {
        if self.id_overflow || self.id.is_empty() {
            return None;
        }
        serde_json::from_slice(self.id.trim_ascii()).ok()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;

    /// Scans `text` fed in pieces of `piece` bytes.
    fn scan(text: &str, piece: usize) -> Envelope {
        let mut envelope = Envelope::default();
        for chunk in text.as_bytes().chunks(piece) {
            envelope.feed(chunk);
        }
        envelope
    }

    #[test]
    fn the_top_level_id_is_found_wherever_it_is() {
        let cases = [
            (
                r#"{"jsonrpc":"2.0","id":7,"result":{"id":99}}"#,
                Some(NumberOrString::Number(7)),
            ),
            (
                r#"{"result":{"content":[{"text":"a \"id\": 3, {[","id":1}]},"jsonrpc":"2.0","id" : "k-9" }"#,
                Some(NumberOrString::String("k-9".into())),
            ),
            (r#"{"result":{"id":4}}"#, None),
            (r#"{"id":[1],"result":{}}"#, None),
            (r#"{"id":null,"error":{}}"#, None),
            ("not json at all", None),
        ];
        for (text, id) in cases {
            for piece in [1, 3, 1000] {
                let envelope = scan(text, piece);
                assert_eq!(envelope.id(), id, "{text} in pieces of {piece}");
                assert!(!envelope.has_method(), "{text}");
            }
        }
    }

    #[test]
    fn a_request_or_notification_of_the_server_is_told_apart() {
        let envelope = scan(
            r#"{"jsonrpc":"2.0","params":{"method":"x"},"method":"sampling/createMessage","id":3}"#,
            5,
        );
        assert!(envelope.has_method());
        assert_eq!(envelope.id(), Some(NumberOrString::Number(3)));
        assert!(!scan(r#"{"params":{"method":"x"},"id":3}"#, 2).has_method());
    }

    #[test]
    fn a_long_id_is_not_kept() {
        let long = format!(r#"{{"id":"{}","result":{{}}}}"#, "x".repeat(MAX_ID * 2));
        assert_eq!(scan(&long, 7).id(), None);
    }
}
