//! JSON text to `Value` with an explicit stack: any nesting depth parses without touching
//! the call stack, and numbers keep the text they were written with.

use std::str::FromStr;

use serde_json::{Map, Number, Value};

use super::drop::drop_deep;

/// Text that is not one JSON value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} at line {line} column {column}")]
pub struct ParseError {
    pub message: &'static str,
    /// 1-based line of the offending character.
    pub line: usize,
    /// 1-based column, counted in characters.
    pub column: usize,
}

/// Parses exactly one JSON value (surrounding whitespace allowed) at any depth.
/// Duplicate keys keep the first key's position and the last value, as `JSON.parse` does.
pub fn parse(text: &str) -> Result<Value, ParseError> {
    parse_within(text, usize::MAX)
}

/// [`parse`], refusing text with more than `max_depth` containers open at once (the
/// `transport.maxNestingDepth` rule, applied to JSON that reaches the host other than as a
/// frame: binding-call arguments and program completions of both Code Mode engines).
pub fn parse_within(text: &str, max_depth: usize) -> Result<Value, ParseError> {
    let mut parser = Parser {
        text,
        bytes: text.as_bytes(),
        position: 0,
        max_depth,
    };
    let mut open: Vec<Container> = Vec::new();
    let parsed = parser.parse_document(&mut open);
    // Members already parsed can be deep: release them without recursion.
    for container in open {
        drop_deep(container.into_value());
    }
    parsed
}

/// A container whose members are still being read.
enum Container {
    Array(Vec<Value>),
    /// The members so far and the key of the member being read.
    Object(Map<String, Value>, String),
}

impl Container {
    fn into_value(self) -> Value {
        match self {
            Container::Array(items) => Value::Array(items),
            Container::Object(members, _) => Value::Object(members),
        }
    }
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    position: usize,
    max_depth: usize,
}

impl<'a> Parser<'a> {
    /// Fails when opening one more container would exceed the depth bound.
    fn admit_container(&self, open: &[Container]) -> Result<(), ParseError> {
        if open.len() >= self.max_depth {
            return Err(self.error("nested deeper than the depth limit"));
        }
        Ok(())
    }

    fn parse_document(&mut self, open: &mut Vec<Container>) -> Result<Value, ParseError> {
        'value: loop {
            self.skip_whitespace();
            let mut value = match self.peek() {
                Some(b'{') => {
                    self.admit_container(open)?;
                    self.position += 1;
                    self.skip_whitespace();
                    if self.peek() == Some(b'}') {
                        self.position += 1;
                        Value::Object(Map::new())
                    } else {
                        let key = self.parse_key()?;
                        open.push(Container::Object(Map::new(), key));
                        continue 'value;
                    }
                }
                Some(b'[') => {
                    self.admit_container(open)?;
                    self.position += 1;
                    self.skip_whitespace();
                    if self.peek() == Some(b']') {
                        self.position += 1;
                        Value::Array(Vec::new())
                    } else {
                        open.push(Container::Array(Vec::new()));
                        continue 'value;
                    }
                }
                Some(b'"') => Value::String(self.parse_string()?),
                Some(b't') => self.parse_literal(b"true", Value::Bool(true))?,
                Some(b'f') => self.parse_literal(b"false", Value::Bool(false))?,
                Some(b'n') => self.parse_literal(b"null", Value::Null)?,
                Some(b'-' | b'0'..=b'9') => Value::Number(self.parse_number()?),
                Some(_) => return Err(self.error("expected value")),
                None => return Err(self.error("EOF while parsing a value")),
            };
            // `value` is complete: hand it to the innermost open container, closing
            // containers for as long as their closing bracket follows.
            loop {
                let Some(container) = open.last_mut() else {
                    self.skip_whitespace();
                    if self.position < self.bytes.len() {
                        drop_deep(value);
                        return Err(self.error("trailing characters"));
                    }
                    return Ok(value);
                };
                match container {
                    Container::Array(items) => {
                        items.push(value);
                        self.skip_whitespace();
                        match self.peek() {
                            Some(b',') => {
                                self.position += 1;
                                continue 'value;
                            }
                            Some(b']') => self.position += 1,
                            _ => return Err(self.error("expected `,` or `]`")),
                        }
                    }
                    Container::Object(members, key) => {
                        if let Some(replaced) = members.insert(std::mem::take(key), value) {
                            drop_deep(replaced);
                        }
                        self.skip_whitespace();
                        match self.peek() {
                            Some(b',') => {
                                self.position += 1;
                                self.skip_whitespace();
                                *key = self.parse_key()?;
                                continue 'value;
                            }
                            Some(b'}') => self.position += 1,
                            _ => return Err(self.error("expected `,` or `}`")),
                        }
                    }
                }
                match open.pop() {
                    Some(closed) => value = closed.into_value(),
                    None => return Err(self.error("unbalanced container")),
                }
            }
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.position).copied()
    }

    fn rest(&self) -> &'a [u8] {
        self.bytes.get(self.position..).unwrap_or_default()
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.position += 1;
        }
    }

    /// A member key and the `:` after it.
    fn parse_key(&mut self) -> Result<String, ParseError> {
        if self.peek() != Some(b'"') {
            return Err(self.error("expected a string key"));
        }
        let key = self.parse_string()?;
        self.skip_whitespace();
        if self.peek() != Some(b':') {
            return Err(self.error("expected `:`"));
        }
        self.position += 1;
        Ok(key)
    }

    fn parse_literal(&mut self, literal: &[u8], value: Value) -> Result<Value, ParseError> {
        if self.rest().starts_with(literal) {
            self.position += literal.len();
            Ok(value)
        } else {
            Err(self.error("expected value"))
        }
    }

    /// Reads a string starting at its opening quote.
    fn parse_string(&mut self) -> Result<String, ParseError> {
        self.position += 1;
        let mut start = self.position;
        let mut decoded: Option<String> = None;
        loop {
            let Some(&byte) = self.bytes.get(self.position) else {
                return Err(self.error("EOF while parsing a string"));
            };
            match byte {
                b'"' => {
                    let tail = self.slice(start, self.position)?;
                    self.position += 1;
                    return Ok(match decoded {
                        Some(mut text) => {
                            text.push_str(tail);
                            text
                        }
                        None => tail.to_owned(),
                    });
                }
                b'\\' => {
                    let chunk = self.slice(start, self.position)?;
                    self.position += 1;
                    let escaped = self.parse_escape()?;
                    let text = decoded.get_or_insert_with(String::new);
                    text.push_str(chunk);
                    text.push(escaped);
                    start = self.position;
                }
                0x00..=0x1f => return Err(self.error("control character in string")),
                _ => self.position += 1,
            }
        }
    }

    /// Reads the escape after a backslash.
    fn parse_escape(&mut self) -> Result<char, ParseError> {
        let Some(&byte) = self.bytes.get(self.position) else {
            return Err(self.error("EOF while parsing a string"));
        };
        self.position += 1;
        let simple = match byte {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => return self.parse_unicode_escape(),
            _ => return Err(self.error("invalid escape")),
        };
        Ok(simple)
    }

    /// Reads `XXXX` after `\u`, joining a surrogate pair written as two escapes.
    fn parse_unicode_escape(&mut self) -> Result<char, ParseError> {
        let first = self.parse_hex4()?;
        let code = match first {
            0xD800..=0xDBFF => {
                if !self.rest().starts_with(b"\\u") {
                    return Err(self.error("lone leading surrogate in hex escape"));
                }
                self.position += 2;
                let second = self.parse_hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return Err(self.error("lone leading surrogate in hex escape"));
                }
                0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            }
            0xDC00..=0xDFFF => return Err(self.error("lone trailing surrogate in hex escape")),
            _ => first,
        };
        char::from_u32(code).ok_or_else(|| self.error("invalid unicode escape"))
    }

    fn parse_hex4(&mut self) -> Result<u32, ParseError> {
        let mut code = 0;
        for _ in 0..4 {
            let digit = self
                .peek()
                .and_then(|byte| char::from(byte).to_digit(16))
                .ok_or_else(|| self.error("invalid unicode escape"))?;
            code = code * 16 + digit;
            self.position += 1;
        }
        Ok(code)
    }

    /// Reads a number in JSON grammar, keeping its exact text.
    fn parse_number(&mut self) -> Result<Number, ParseError> {
        let start = self.position;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.position += 1;
        }
        match self.peek() {
            Some(b'0') => self.position += 1,
            Some(b'1'..=b'9') => self.skip_digits(),
            _ => return Err(self.error("invalid number")),
        }
        let mut integral = true;
        if self.peek() == Some(b'.') {
            integral = false;
            self.position += 1;
            self.expect_digits()?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            integral = false;
            self.position += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.position += 1;
            }
            self.expect_digits()?;
        }
        let text = self.slice(start, self.position)?;
        // Integers in range take the cheap constructors, which print them back unchanged.
        if integral && !negative {
            if let Ok(unsigned) = text.parse::<u64>() {
                return Ok(Number::from(unsigned));
            }
        } else if integral
            && text != "-0"
            && let Ok(signed) = text.parse::<i64>()
        {
            return Ok(Number::from(signed));
        }
        Number::from_str(text).map_err(|_| self.error("invalid number"))
    }

    fn skip_digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.position += 1;
        }
    }

    fn expect_digits(&mut self) -> Result<(), ParseError> {
        if !matches!(self.peek(), Some(b'0'..=b'9')) {
            return Err(self.error("invalid number"));
        }
        self.skip_digits();
        Ok(())
    }

    fn slice(&self, start: usize, end: usize) -> Result<&'a str, ParseError> {
        self.text
            .get(start..end)
            .ok_or_else(|| self.error("invalid UTF-8 boundary"))
    }

    fn error(&self, message: &'static str) -> ParseError {
        let before = self.bytes.get(..self.position).unwrap_or(self.bytes);
        let line_start = before
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        let column = match self.text.get(line_start..before.len()) {
            Some(line) => line.chars().count() + 1,
            None => before.len() - line_start + 1,
        };
        ParseError {
            message,
            line: before.iter().filter(|b| **b == b'\n').count() + 1,
            column,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::json::render_compact;
    use proptest::prelude::*;

    #[test]
    fn parses_values_keeping_text_and_order() {
        let check = |text: &str, expected: &str| {
            assert_eq!(render_compact(&parse(text).unwrap()), expected, "{text}");
        };
        check("null", "null");
        check(" true ", "true");
        check("false", "false");
        check("0", "0");
        check("-12", "-12");
        check(
            r#""a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00""#,
            r#""a\"b\\c/d\b\f\n\r\té😀""#,
        );
        check(r#"{"z":1,"a":[],"m":{}}"#, r#"{"z":1,"a":[],"m":{}}"#);
        check(r#"{"a":1,"b":2,"a":3}"#, r#"{"a":3,"b":2}"#);
        check(
            "[1, [2, [3]], {\"k\" : \"v\"}]\n",
            r#"[1,[2,[3]],{"k":"v"}]"#,
        );
        let value = parse("[1.50, 1e2, -0, 18446744073709551616, -9223372036854775809]").unwrap();
        let texts: Vec<&str> = value
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_number().unwrap().as_str())
            .collect();
        // Exponents are spelled as serde_json spells them (`e`, explicit sign); digits are kept.
        assert_eq!(
            texts,
            [
                "1.50",
                "1e+2",
                "-0",
                "18446744073709551616",
                "-9223372036854775809"
            ]
        );
    }

    #[test]
    fn rejects_invalid_text() {
        let check = |text: &str, message: &str| {
            assert_eq!(
                parse(text).map_err(|e| e.to_string()),
                Err(message.to_owned()),
                "{text}"
            );
        };
        check("", "EOF while parsing a value at line 1 column 1");
        check("[1,]", "expected value at line 1 column 4");
        check("[1 2]", "expected `,` or `]` at line 1 column 4");
        check("{\"a\" 1}", "expected `:` at line 1 column 6");
        check("{\"a\":1,}", "expected a string key at line 1 column 8");
        check("{1:2}", "expected a string key at line 1 column 2");
        check("01", "trailing characters at line 1 column 2");
        check("1.", "invalid number at line 1 column 3");
        check("1e", "invalid number at line 1 column 3");
        check("-", "invalid number at line 1 column 2");
        check("+1", "expected value at line 1 column 1");
        check("tru", "expected value at line 1 column 1");
        check("nul", "expected value at line 1 column 1");
        check("\"abc", "EOF while parsing a string at line 1 column 5");
        check("\"a\nb\"", "control character in string at line 1 column 3");
        check(r#""\x""#, "invalid escape at line 1 column 4");
        check(r#""\u12g4""#, "invalid unicode escape at line 1 column 6");
        check(
            r#""\ud800""#,
            "lone leading surrogate in hex escape at line 1 column 8",
        );
        check(
            r#""\ud800\u0041""#,
            "lone leading surrogate in hex escape at line 1 column 14",
        );
        check(
            r#""\udc00""#,
            "lone trailing surrogate in hex escape at line 1 column 8",
        );
        check("[1]\n [2]", "trailing characters at line 2 column 2");
        check("[\"é\", x]", "expected value at line 1 column 7");
        check("[[[[", "EOF while parsing a value at line 1 column 5");
    }

    #[test]
    fn the_depth_bound_counts_every_open_container() {
        assert!(parse_within("[[{\"a\":[]}]]", 4).is_ok());
        for text in ["[[{\"a\":[]}]]", "[[{\"a\":{}}]]", "[[[[1]]]]"] {
            let error = parse_within(text, 3).unwrap_err();
            assert_eq!(
                error.message, "nested deeper than the depth limit",
                "{text}"
            );
        }
        assert_eq!(parse_within("7", 0).unwrap(), serde_json::json!(7));
    }

    #[test]
    fn parses_and_rejects_deep_nesting_without_recursion() {
        let depth = 100_000;
        let text = format!("{}1{}", "[{\"k\":".repeat(depth), "}]".repeat(depth));
        let value = parse(&text).unwrap();
        let mut innermost = &value;
        let mut levels = 0;
        while let Some(item) = innermost.get(0).and_then(|object| object.get("k")) {
            innermost = item;
            levels += 1;
        }
        assert_eq!(
            (levels, innermost.as_number().map(Number::as_str)),
            (depth, Some("1"))
        );
        drop_deep(value);
        let unclosed = format!("{}1", "[".repeat(depth));
        assert_eq!(
            parse(&unclosed).map_err(|e| e.message),
            Err("expected `,` or `]`")
        );
        let trailing = format!("{}{}x", "[".repeat(depth), "]".repeat(depth));
        assert_eq!(
            parse(&trailing).map_err(|e| e.message),
            Err("trailing characters")
        );
    }

    /// Arbitrary JSON values with nested containers, escapes and numbers.
    fn values() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |x| x.is_finite())
                .prop_map(|x| Value::Number(Number::from_f64(x).unwrap())),
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
        fn agrees_with_serde_json(value in values(), pretty in any::<bool>()) {
            let text = if pretty {
                serde_json::to_string_pretty(&value).unwrap()
            } else {
                serde_json::to_string(&value).unwrap()
            };
            let expected: Value = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(parse(&text).unwrap(), expected);
        }
    }
}
