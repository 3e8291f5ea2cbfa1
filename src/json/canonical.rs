//! Lossless JSON: every number must be a finite double that JavaScript would print back
//! with the same mathematical value; canonical values carry that JavaScript text.

use std::str::FromStr;

use serde_json::{Number, Value};

use super::decimal::Decimal;
use super::number::number_text;
use super::path::{locate, render_path};

/// A number that a JavaScript program would not see exactly as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("\"{path}\" is not lossless JSON: {reason}")]
pub struct LossyJson {
    /// Where the number is, rooted at the name the caller gave (`args.n`, `value[2]`).
    pub path: String,
    /// Why it is lossy, naming the number as written.
    pub reason: String,
}

/// Rewrites every number in `value` to its canonical text (`1.0` → `1`, `1e2` → `100`), or
/// fails on the first number in document order that is not lossless. Paths start at `root`.
/// On failure numbers before the lossy one may already be rewritten.
pub fn canonicalize(value: &mut Value, root: &str) -> Result<(), LossyJson> {
    match rewrite_numbers(value) {
        None => Ok(()),
        Some((address, reason)) => Err(lossy_at(value, root, address, reason)),
    }
}

/// Checks that every number in `value` is lossless without rewriting anything.
pub fn check_lossless(value: &Value, root: &str) -> Result<(), LossyJson> {
    let mut pending = vec![value];
    while let Some(node) = pending.pop() {
        match node {
            Value::Number(number) => {
                if let Err(reason) = canonical_text(number.as_str()) {
                    return Err(lossy_at(value, root, node, reason));
                }
            }
            Value::Array(items) => pending.extend(items.iter().rev()),
            Value::Object(members) => pending.extend(members.values().rev()),
            Value::Null | Value::Bool(_) | Value::String(_) => {}
        }
    }
    Ok(())
}

fn rewrite_numbers(value: &mut Value) -> Option<(*const Value, String)> {
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        let address: *const Value = &*value;
        match value {
            Value::Number(number) => match canonical_text(number.as_str()) {
                Ok(None) => {}
                Ok(Some(text)) => match Number::from_str(&text) {
                    Ok(canonical) => *number = canonical,
                    Err(error) => return Some((address, error.to_string())),
                },
                Err(reason) => return Some((address, reason)),
            },
            Value::Array(items) => pending.extend(items.iter_mut().rev()),
            Value::Object(members) => pending.extend(members.values_mut().rev()),
            Value::Null | Value::Bool(_) | Value::String(_) => {}
        }
    }
    None
}

fn lossy_at(root_value: &Value, root: &str, address: *const Value, reason: String) -> LossyJson {
    let segments = locate(root_value, &[address])
        .pop()
        .flatten()
        .unwrap_or_default();
    LossyJson {
        path: render_path(root, &segments),
        reason,
    }
}

/// The canonical text of a JSON number: `Ok(None)` when `text` already is canonical,
/// `Ok(Some(canonical))` when it must be rewritten, `Err(reason)` when it is lossy.
pub(crate) fn canonical_text(text: &str) -> Result<Option<String>, String> {
    let Some(written) = Decimal::parse(text) else {
        return Err(format!("{text} is not a JSON number"));
    };
    if written.is_zero() && written.negative {
        return Err(format!(
            "{text} is negative zero, which JSON.stringify writes as 0"
        ));
    }
    if is_plainly_canonical(text) {
        return Ok(None);
    }
    let x: f64 = text
        .parse()
        .map_err(|_| format!("{text} is not a JSON number"))?;
    let Some(canonical) = number_text(x) else {
        return Err(format!("{text} is outside the range of a double"));
    };
    let survives = Decimal::parse(&canonical).is_some_and(|c| c.same_value(&written));
    if !survives {
        return Err(format!("{text} does not survive a round trip as a double"));
    }
    Ok((canonical != text).then_some(canonical))
}

/// Plain decimals of at most 15 significant digits, written without redundant zeros, in
/// the range JavaScript prints without an exponent: any 15-digit decimal survives a double
/// round trip, and no shorter text denotes the same double, so the common case skips float
/// parsing and printing.
pub(super) fn is_plainly_canonical(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text).as_bytes();
    let integer_end = digits
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(digits.len());
    let (integer, rest) = digits.split_at(integer_end);
    let fraction = match rest.split_first() {
        None => &rest[..0],
        Some((b'.', fraction)) if !fraction.is_empty() => fraction,
        Some(_) => return false,
    };
    let fraction_ok = fraction.iter().all(u8::is_ascii_digit) && fraction.last() != Some(&b'0');
    match integer {
        [b'0'] => {
            let zeros = fraction.iter().take_while(|b| **b == b'0').count();
            // `0` itself, or `0.000001` and above with at most 15 significant digits.
            (fraction.is_empty() && text == "0")
                || (!fraction.is_empty()
                    && fraction_ok
                    && zeros <= 5
                    && fraction.len() - zeros <= 15)
        }
        [b'1'..=b'9', ..] => fraction_ok && integer.len() + fraction.len() <= 15,
        _ => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::json::{parse, render_compact};
    use proptest::prelude::*;

    #[test]
    fn canonical_text_of_numbers() {
        let check = |text: &str, expected: Result<Option<&str>, &str>| {
            let expected = expected
                .map(|t| t.map(str::to_owned))
                .map_err(str::to_owned);
            assert_eq!(canonical_text(text), expected, "{text}");
        };
        check("42", Ok(None));
        check("-42", Ok(None));
        check("0", Ok(None));
        check("0.1", Ok(None));
        check("1.0", Ok(Some("1")));
        check("1e2", Ok(Some("100")));
        check("100.000", Ok(Some("100")));
        check("1E21", Ok(Some("1e+21")));
        check("1.5e-7", Ok(None));
        check("0.00000015", Ok(Some("1.5e-7")));
        check("123456789012345680000", Ok(None));
        check(
            "123456789012345678901",
            Err("123456789012345678901 does not survive a round trip as a double"),
        );
        check("9007199254740992", Ok(None));
        check(
            "9007199254740993",
            Err("9007199254740993 does not survive a round trip as a double"),
        );
        check(
            "0.10000000000000000001",
            Err("0.10000000000000000001 does not survive a round trip as a double"),
        );
        check(
            "1e-400",
            Err("1e-400 does not survive a round trip as a double"),
        );
        check(
            "-1e-400",
            Err("-1e-400 does not survive a round trip as a double"),
        );
        check("1e400", Err("1e400 is outside the range of a double"));
        check(
            "-0",
            Err("-0 is negative zero, which JSON.stringify writes as 0"),
        );
        check(
            "-0.0",
            Err("-0.0 is negative zero, which JSON.stringify writes as 0"),
        );
        check(
            "-0e7",
            Err("-0e7 is negative zero, which JSON.stringify writes as 0"),
        );
        check("0.0", Ok(Some("0")));
        check("0e5", Ok(Some("0")));
        check("abc", Err("abc is not a JSON number"));
    }

    #[test]
    fn recognizes_plainly_canonical_text() {
        let check = |text: &str, expected: bool| {
            assert_eq!(is_plainly_canonical(text), expected, "{text}");
            if expected {
                assert_eq!(number_text(text.parse().unwrap()).as_deref(), Some(text));
            }
        };
        check("0", true);
        check("-0", false);
        check("42", true);
        check("-42", true);
        check("0.1", true);
        check("-0.5", true);
        check("0.000001", true);
        check("0.0000001", false);
        check("0.000001234567890123456", false);
        check("0.00000123456789012345", true);
        check("123456789012345", true);
        check("1234567890123456", false);
        check("12345678.9012345", true);
        check("12345678.90123456", false);
        check("1.50", false);
        check("1.", false);
        check("01", false);
        check("1e2", false);
        check("0.0", false);
        check("", false);
        check("-", false);
    }

    #[test]
    fn canonicalizes_whole_values() {
        let check = |text: &str, expected: Result<&str, &str>| {
            let mut value = parse(text).unwrap();
            let outcome = canonicalize(&mut value, "args").map(|()| render_compact(&value));
            assert_eq!(
                outcome.map_err(|e| e.to_string()),
                expected.map(str::to_owned).map_err(str::to_owned),
                "{text}"
            );
        };
        check(
            r#"{"n":1.0,"m":[1e2,"x",{"k":100.000}]}"#,
            Ok(r#"{"n":1,"m":[100,"x",{"k":100}]}"#),
        );
        check("1.50", Ok("1.5"));
        check(
            r#"{"n":9007199254740993}"#,
            Err(
                r#""args.n" is not lossless JSON: 9007199254740993 does not survive a round trip as a double"#,
            ),
        );
        check(
            r#"{"a":[1,{"b":[0,1e400]}]}"#,
            // The parser, like serde_json, spells exponents with a sign: 1e400 is kept as 1e+400.
            Err(
                r#""args.a[1].b[1]" is not lossless JSON: 1e+400 is outside the range of a double"#,
            ),
        );
        check(
            "[-0]",
            Err(
                r#""args[0]" is not lossless JSON: -0 is negative zero, which JSON.stringify writes as 0"#,
            ),
        );
        check(
            "-0.0",
            Err(
                r#""args" is not lossless JSON: -0.0 is negative zero, which JSON.stringify writes as 0"#,
            ),
        );
    }

    #[test]
    fn check_lossless_reports_the_first_lossy_number() {
        let value = parse(r#"{"a":1.0,"b":[2,0.10000000000000000001],"c":1e400}"#).unwrap();
        assert_eq!(
            check_lossless(&value, "value").map_err(|e| e.to_string()),
            Err(r#""value.b[1]" is not lossless JSON: 0.10000000000000000001 does not survive a round trip as a double"#.to_owned())
        );
        assert_eq!(
            check_lossless(&parse(r#"{"a":1.0}"#).unwrap(), "value"),
            Ok(())
        );
    }

    /// Number texts in every JSON shape: signs, leading zeros in fractions, exponents.
    fn number_texts() -> impl Strategy<Value = String> {
        (
            any::<bool>(),
            "(0|[1-9][0-9]{0,20})",
            proptest::option::of("[0-9]{1,20}"),
            proptest::option::of(("[eE]", "[+-]?", 0u32..330)),
        )
            .prop_map(|(negative, whole, fraction, exponent)| {
                let mut text = String::new();
                if negative {
                    text.push('-');
                }
                text.push_str(&whole);
                if let Some(fraction) = fraction {
                    text.push('.');
                    text.push_str(&fraction);
                }
                if let Some((e, sign, magnitude)) = exponent {
                    text.push_str(&format!("{e}{sign}{magnitude}"));
                }
                text
            })
    }

    proptest! {
        #[test]
        fn canonical_text_keeps_the_value_and_is_idempotent(text in number_texts()) {
            if let Ok(rewritten) = canonical_text(&text) {
                let canonical = rewritten.unwrap_or_else(|| text.clone());
                prop_assert_eq!(canonical_text(&canonical), Ok(None));
                let written: f64 = text.parse().unwrap();
                let printed: f64 = canonical.parse().unwrap();
                prop_assert_eq!(written.to_bits(), printed.to_bits());
                prop_assert_eq!(Some(canonical.clone()), number_text(printed));
            }
        }

        #[test]
        fn canonicalize_is_idempotent(texts in proptest::collection::vec(number_texts(), 0..8)) {
            let mut value = parse(&format!("[{}]", texts.join(","))).unwrap();
            if canonicalize(&mut value, "v").is_ok() {
                let once = render_compact(&value);
                prop_assert_eq!(canonicalize(&mut value, "v"), Ok(()));
                prop_assert_eq!(render_compact(&value), once);
            }
        }

        #[test]
        fn every_double_text_is_canonical(bits in any::<u64>()) {
            let x = f64::from_bits(bits);
            prop_assume!(x.is_finite());
            let text = number_text(x).unwrap();
            prop_assert_eq!(canonical_text(&text), Ok(None));
        }
    }
}
