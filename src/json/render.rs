//! JSON text exactly as JavaScript's `JSON.stringify` writes it, compact or two-space
//! pretty with indentation capped at ten characters, for values of any depth.

use serde_json::{Value, map};

use super::canonical::is_plainly_canonical;
use super::number::number_text;

/// Spaces added per nesting level in pretty output.
const INDENT_STEP: usize = 2;
/// Deepest indentation pretty output uses; containers whose members would sit deeper are
/// written compactly so deep values do not drown in whitespace.
const MAX_INDENT: usize = 10;

/// `JSON.stringify(value, null, 2)`, except that a container whose members would be
/// indented more than ten spaces is written compactly.
pub fn render_pretty(value: &Value) -> String {
    render(value, true)
}

/// `JSON.stringify(value)`.
pub fn render_compact(value: &Value) -> String {
    render(value, false)
}

/// [`render_compact`] appended to `out`: a large value costs one buffer, not two.
pub fn write_compact(out: &mut String, value: &Value) {
    render_into(out, value, false);
}

/// `text` as a JSON string (quotes included) appended to `out`, escaped as
/// `JSON.stringify` escapes it.
pub fn write_json_string(out: &mut String, text: &str) {
    write_string(out, text);
}

/// A container being written: its members left, whether it is written pretty, and whether
/// a member has been written yet.
struct Open<'a> {
    members: Members<'a>,
    pretty: bool,
    empty_so_far: bool,
}

enum Members<'a> {
    Array(std::slice::Iter<'a, Value>),
    Object(map::Iter<'a>),
}

fn render(value: &Value, pretty: bool) -> String {
    let mut out = String::with_capacity(128);
    render_into(&mut out, value, pretty);
    out
}

fn render_into(out: &mut String, value: &Value, pretty: bool) {
    let mut open: Vec<Open<'_>> = Vec::new();
    let mut next = Some(value);
    loop {
        if let Some(value) = next.take() {
            let depth = open.len();
            let members = match value {
                Value::Null => {
                    out.push_str("null");
                    None
                }
                Value::Bool(flag) => {
                    out.push_str(if *flag { "true" } else { "false" });
                    None
                }
                Value::Number(number) => {
                    write_number(out, number.as_str());
                    None
                }
                Value::String(text) => {
                    write_string(out, text);
                    None
                }
                Value::Array(items) if items.is_empty() => {
                    out.push_str("[]");
                    None
                }
                Value::Object(members) if members.is_empty() => {
                    out.push_str("{}");
                    None
                }
                Value::Array(items) => {
                    out.push('[');
                    Some(Members::Array(items.iter()))
                }
                Value::Object(members) => {
                    out.push('{');
                    Some(Members::Object(members.iter()))
                }
            };
            if let Some(members) = members {
                open.push(Open {
                    members,
                    pretty: pretty && INDENT_STEP * (depth + 1) <= MAX_INDENT,
                    empty_so_far: true,
                });
            }
        }
        let depth = open.len().saturating_sub(1);
        let Some(container) = open.last_mut() else {
            return;
        };
        let (key, member) = match &mut container.members {
            Members::Array(items) => (None, items.next()),
            Members::Object(members) => match members.next() {
                Some((key, member)) => (Some(key), Some(member)),
                None => (None, None),
            },
        };
        match member {
            Some(member) => {
                if !container.empty_so_far {
                    out.push(',');
                }
                container.empty_so_far = false;
                if container.pretty {
                    out.push('\n');
                    push_indent(out, INDENT_STEP * (depth + 1));
                }
                if let Some(key) = key {
                    write_string(out, key);
                    out.push(':');
                    if container.pretty {
                        out.push(' ');
                    }
                }
                next = Some(member);
            }
            None => {
                if container.pretty {
                    out.push('\n');
                    push_indent(out, INDENT_STEP * depth);
                }
                out.push(match container.members {
                    Members::Array(_) => ']',
                    Members::Object(_) => '}',
                });
                open.pop();
            }
        }
    }
}

fn push_indent(out: &mut String, width: usize) {
    out.extend(std::iter::repeat_n(' ', width));
}

/// What JavaScript prints for `Number(text)`: canonical text, `null` beyond the double range.
fn write_number(out: &mut String, text: &str) {
    if is_plainly_canonical(text) {
        out.push_str(text);
        return;
    }
    match text.parse::<f64>().ok().and_then(number_text) {
        Some(canonical) => out.push_str(&canonical),
        None => out.push_str("null"),
    }
}

/// A string literal escaped as `JSON.stringify` does: `"`, `\` and control characters only.
fn write_string(out: &mut String, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(text.len() + 2);
    out.push('"');
    let bytes = text.as_bytes();
    let mut start = 0;
    while let Some(offset) = bytes.get(start..).and_then(first_to_escape) {
        let index = start + offset;
        // `index` sits on an ASCII byte, so both ends are character boundaries.
        out.push_str(text.get(start..index).unwrap_or_default());
        match bytes.get(index).copied().unwrap_or_default() {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            control => {
                out.push_str("\\u00");
                out.push(char::from(HEX[usize::from(control >> 4)]));
                out.push(char::from(HEX[usize::from(control & 0xf)]));
            }
        }
        start = index + 1;
    }
    out.push_str(text.get(start..).unwrap_or_default());
    out.push('"');
}

/// The index of the first byte JSON must escape (`"`, `\\`, below 0x20), eight bytes per
/// step: output floods and large strings are mostly plain text, so the scan runs over every
/// byte a live stream sends and a byte-wise one would be a visible share of streaming it.
fn first_to_escape(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    // A high bit in each byte of `word` that is zero; exact up to the first such byte.
    let zero_bytes = |word: u64| word.wrapping_sub(ONES) & !word & HIGHS;
    let mut chunks = bytes.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        // Below 0x20: subtracting 0x20 borrows into the high bit of a byte that was not
        // already high.
        let control = word.wrapping_sub(ONES * 0x20) & !word & HIGHS;
        let quote = zero_bytes(word ^ (ONES * u64::from(b'"')));
        let backslash = zero_bytes(word ^ (ONES * u64::from(b'\\')));
        let found = control | quote | backslash;
        if found != 0 {
            return Some(offset + (found.trailing_zeros() / 8) as usize);
        }
        offset += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|b| *b < 0x20 || *b == b'"' || *b == b'\\')
        .map(|index| offset + index)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::json::{drop_deep, parse};
    use proptest::prelude::*;
    use serde_json::{Map, Number, json};

    #[test]
    fn compact_matches_json_stringify() {
        let check = |text: &str, expected: &str| {
            assert_eq!(render_compact(&parse(text).unwrap()), expected, "{text}");
        };
        check("null", "null");
        check("[true,false]", "[true,false]");
        check(
            r#"{ "b" : 1 , "a" : [ 2 , {} , [] ] }"#,
            r#"{"b":1,"a":[2,{},[]]}"#,
        );
        check(
            "[1.0, 1e2, 1E21, 0.00000015, -0, 1e400, 123456789012345680000]",
            "[1,100,1e+21,1.5e-7,0,null,123456789012345680000]",
        );
        check(
            r#""q\" b\\ nl\n cr\r tab\t bs\b ff\f nul\u0000 us\u001f del\u007f ls\u2028 ps\u2029 é""#,
            "\"q\\\" b\\\\ nl\\n cr\\r tab\\t bs\\b ff\\f nul\\u0000 us\\u001f del\u{7f} ls\u{2028} ps\u{2029} é\"",
        );
        check(r#"{"k\u0001":"v"}"#, r#"{"k\u0001":"v"}"#);
        let number = |text: &str| Value::Number(text.parse::<Number>().unwrap());
        assert_eq!(
            render_compact(&Value::Array(vec![number("42.0"), number("-0.0")])),
            "[42,0]"
        );
    }

    #[test]
    fn pretty_matches_json_stringify_up_to_ten_spaces() {
        let check = |value: Value, expected: &str| {
            assert_eq!(render_pretty(&value), expected);
        };
        check(json!(1), "1");
        check(json!("x"), "\"x\"");
        check(json!([]), "[]");
        check(json!({}), "{}");
        check(
            json!({"a": 1, "b": [2, {}], "c": []}),
            "{\n  \"a\": 1,\n  \"b\": [\n    2,\n    {}\n  ],\n  \"c\": []\n}",
        );
        check(
            json!({"a": {"b": {"c": {"d": {"e": {"f": 1, "g": [2]}, "h": []}}}}}),
            concat!(
                "{\n",
                "  \"a\": {\n",
                "    \"b\": {\n",
                "      \"c\": {\n",
                "        \"d\": {\n",
                "          \"e\": {\"f\":1,\"g\":[2]},\n",
                "          \"h\": []\n",
                "        }\n",
                "      }\n",
                "    }\n",
                "  }\n",
                "}"
            ),
        );
        check(
            json!([[[[[[1], 2]]]]]),
            "[\n  [\n    [\n      [\n        [\n          [1],\n          2\n        ]\n      ]\n    ]\n  ]\n]",
        );
    }

    #[test]
    fn renders_deep_values_without_recursion() {
        let depth = 100_000;
        let mut value = json!(null);
        for _ in 0..depth {
            value = Value::Array(vec![Value::Object(Map::from_iter([(
                "k".to_owned(),
                value,
            )]))]);
        }
        let compact = format!("{}null{}", "[{\"k\":".repeat(depth), "}]".repeat(depth));
        assert_eq!(render_compact(&value), compact);
        let innermost = format!(
            "{{\"k\":{}null{}}}",
            "[{\"k\":".repeat(depth - 3),
            "}]".repeat(depth - 3)
        );
        let pretty = format!(
            "[\n  {{\n    \"k\": [\n      {{\n        \"k\": [\n          {innermost}\n        ]\n      }}\n    ]\n  }}\n]"
        );
        assert_eq!(render_pretty(&value), pretty);
        drop_deep(value);
    }

    /// Values whose numbers are already canonical (small integers), nested at most four
    /// containers deep, where serde_json's output is exactly `JSON.stringify`'s.
    fn shallow_values() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i32>().prop_map(Value::from),
            any::<String>().prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::vec((any::<String>(), inner), 0..6)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn the_word_scan_finds_the_first_byte_to_escape(
            bytes in proptest::collection::vec(
                prop_oneof![Just(b'"'), Just(b'\\'), 0u8..0x20, 0x20u8..=0xff], 0..80),
            plain in 0usize..40,
        ) {
            let mut bytes = bytes;
            bytes.splice(0..0, std::iter::repeat_n(b'y', plain));
            let expected = bytes.iter().position(|b| *b < 0x20 || *b == b'"' || *b == b'\\');
            prop_assert_eq!(first_to_escape(&bytes), expected);
        }

        #[test]
        fn agrees_with_serde_json_on_shallow_values(value in shallow_values()) {
            prop_assert_eq!(render_compact(&value), serde_json::to_string(&value).unwrap());
            prop_assert_eq!(render_pretty(&value), serde_json::to_string_pretty(&value).unwrap());
            prop_assert_eq!(parse(&render_compact(&value)).unwrap(), value);
        }
    }
}
