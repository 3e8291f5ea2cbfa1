//! Exact mathematical view of JSON number text, so numbers compare without float rounding.

use serde_json::Number;

/// True when `number` has no fractional part (`2`, `2.0`, `1e21`), decided on its text.
pub fn is_integer(number: &Number) -> bool {
    Decimal::parse(number.as_str()).is_some_and(|decimal| decimal.is_integer())
}

/// A JSON number as `sign × 0.d₁d₂…dₖ × 10^point` with no leading or trailing zero digits
/// (zero has no digits). Borrowed from the text: building one never allocates.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Decimal<'a> {
    pub(crate) negative: bool,
    /// Significant digits: the tail of the integer part, then the head of the fraction part.
    integer_digits: &'a [u8],
    fraction_digits: &'a [u8],
    /// Decimal exponent of the point: the value is `0.digits × 10^point`.
    pub(crate) point: i64,
}

impl<'a> Decimal<'a> {
    /// Reads JSON number grammar (`-?digits(.digits)?([eE][+-]?digits)?`); anything else is `None`.
    pub(crate) fn parse(text: &'a str) -> Option<Decimal<'a>> {
        let bytes = text.as_bytes();
        let (negative, rest) = match bytes.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, bytes),
        };
        let integer_end = rest
            .iter()
            .position(|b| !b.is_ascii_digit())
            .unwrap_or(rest.len());
        let (integer, rest) = rest.split_at(integer_end);
        if integer.is_empty() {
            return None;
        }
        let (fraction, rest) = match rest.split_first() {
            Some((b'.', rest)) => {
                let end = rest
                    .iter()
                    .position(|b| !b.is_ascii_digit())
                    .unwrap_or(rest.len());
                if end == 0 {
                    return None;
                }
                rest.split_at(end)
            }
            _ => (&rest[..0], rest),
        };
        let exponent = match rest.split_first() {
            None => 0,
            Some((b'e' | b'E', rest)) => parse_exponent(rest)?,
            Some(_) => return None,
        };
        let leading = integer.iter().take_while(|b| **b == b'0').count();
        let (integer_digits, fraction_digits, shift) = if leading == integer.len() {
            // The integer part is zero: significant digits start inside the fraction.
            let zeros = fraction.iter().take_while(|b| **b == b'0').count();
            (&integer[..0], &fraction[zeros..], -(zeros as i64))
        } else {
            let kept = &integer[leading..];
            (kept, fraction, kept.len() as i64)
        };
        let (integer_digits, fraction_digits) =
            trim_trailing_zeros(integer_digits, fraction_digits);
        let is_zero = integer_digits.is_empty() && fraction_digits.is_empty();
        Some(Decimal {
            negative,
            integer_digits,
            fraction_digits,
            point: if is_zero {
                0
            } else {
                exponent.saturating_add(shift)
            },
        })
    }

    pub(crate) fn is_zero(&self) -> bool {
        self.integer_digits.is_empty() && self.fraction_digits.is_empty()
    }

    fn digit_count(&self) -> i64 {
        (self.integer_digits.len() + self.fraction_digits.len()) as i64
    }

    /// True when the value has no fractional part.
    pub(crate) fn is_integer(&self) -> bool {
        self.is_zero() || self.point >= self.digit_count()
    }

    fn digits(&self) -> impl Iterator<Item = u8> + 'a {
        self.integer_digits
            .iter()
            .chain(self.fraction_digits)
            .copied()
    }

    /// Mathematical equality; `-0` equals `0`.
    pub(crate) fn same_value(&self, other: &Decimal<'_>) -> bool {
        if self.is_zero() || other.is_zero() {
            return self.is_zero() && other.is_zero();
        }
        self.negative == other.negative
            && self.point == other.point
            && self.digit_count() == other.digit_count()
            && self.digits().eq(other.digits())
    }
}

fn parse_exponent(bytes: &[u8]) -> Option<i64> {
    let (negative, digits) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, bytes),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // Saturate: an exponent beyond i64 is far outside every double anyway.
    let magnitude = digits.iter().fold(0i64, |total, digit| {
        total
            .saturating_mul(10)
            .saturating_add(i64::from(digit - b'0'))
    });
    Some(if negative { -magnitude } else { magnitude })
}

fn trim_trailing_zeros<'a>(integer: &'a [u8], fraction: &'a [u8]) -> (&'a [u8], &'a [u8]) {
    let fraction_end = fraction
        .iter()
        .rposition(|b| *b != b'0')
        .map_or(0, |i| i + 1);
    if fraction_end > 0 {
        return (integer, &fraction[..fraction_end]);
    }
    let integer_end = integer
        .iter()
        .rposition(|b| *b != b'0')
        .map_or(0, |i| i + 1);
    (&integer[..integer_end], &fraction[..0])
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Renders the normalized form as `sign digits point` for whole-value assertions.
    fn normalized(text: &str) -> Option<String> {
        Decimal::parse(text).map(|d| {
            let digits: String = d.digits().map(char::from).collect();
            format!(
                "{}{}p{}",
                if d.negative { "-" } else { "+" },
                digits,
                d.point
            )
        })
    }

    #[test]
    fn normalizes_number_text() {
        let check = |text: &str, expected: Option<&str>| {
            assert_eq!(normalized(text).as_deref(), expected, "{text}");
        };
        check("0", Some("+p0"));
        check("-0.000", Some("-p0"));
        check("42", Some("+42p2"));
        check("100.000", Some("+1p3"));
        check("1e2", Some("+1p3"));
        check("1E+2", Some("+1p3"));
        check("0.1", Some("+1p0"));
        check("0.00120", Some("+12p-2"));
        check("-12.5e-3", Some("-125p-1"));
        check("001.5", Some("+15p1"));
        check(
            "1.5e999999999999999999999",
            Some(&format!("+15p{}", i64::MAX)),
        );
        check("", None);
        check("-", None);
        check("1.", None);
        check(".5", None);
        check("1e", None);
        check("1e+", None);
        check("1x", None);
        check("NaN", None);
    }

    #[test]
    fn compares_and_classifies() {
        let check = |a: &str, b: &str, same: bool| {
            let (a, b) = (Decimal::parse(a).unwrap(), Decimal::parse(b).unwrap());
            assert_eq!(a.same_value(&b), same);
            assert_eq!(b.same_value(&a), same);
        };
        check("1", "1.0", true);
        check("100", "1e2", true);
        check("0", "-0", true);
        check("0.1", "1e-1", true);
        check("1", "-1", false);
        check("12", "1.2", false);
        check("0.10000000000000000001", "0.1", false);
        let integer = |text: &str, expected: bool| {
            assert_eq!(
                Decimal::parse(text).unwrap().is_integer(),
                expected,
                "{text}"
            );
        };
        integer("2", true);
        integer("2.0", true);
        integer("-0", true);
        integer("1e21", true);
        integer("1.5e1", true);
        integer("2.5", false);
        integer("1e-7", false);
    }
}
