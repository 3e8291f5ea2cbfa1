//! Canonical number text: what JavaScript's `String(x)` prints for a finite double.

/// ECMAScript `Number.prototype.toString()` for a finite double: shortest round-trip digits,
/// plain decimal when `1e-7 <= |x| < 1e21`, exponent form (`1e+21`, `1.5e-7`) otherwise, and
/// `0` for both zeros. `None` for NaN and infinities, which have no JSON text.
pub fn number_text(x: f64) -> Option<String> {
    if !x.is_finite() {
        return None;
    }
    if x == 0.0 {
        return Some("0".to_owned());
    }
    // `{:e}` prints the shortest digits that round-trip, as `d.ddde<exp>`.
    let scientific = format!("{:e}", x.abs());
    let (mantissa, exponent) = scientific.split_once('e')?;
    let exponent: i64 = exponent.parse().ok()?;
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let k = digits.len() as i64;
    // ECMAScript's n: the value is 0.digits × 10^n.
    let n = exponent + 1;
    let mut text = String::with_capacity(digits.len() + 8);
    if x < 0.0 {
        text.push('-');
    }
    if k <= n && n <= 21 {
        text.push_str(&digits);
        text.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        let (whole, fraction) = digits.split_at(n as usize);
        text.push_str(whole);
        text.push('.');
        text.push_str(fraction);
    } else if -6 < n && n <= 0 {
        text.push_str("0.");
        text.extend(std::iter::repeat_n('0', (-n) as usize));
        text.push_str(&digits);
    } else {
        let (first, rest) = digits.split_at(1);
        text.push_str(first);
        if !rest.is_empty() {
            text.push('.');
            text.push_str(rest);
        }
        text.push('e');
        text.push(if exponent < 0 { '-' } else { '+' });
        text.push_str(&exponent.unsigned_abs().to_string());
    }
    Some(text)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn prints_like_javascript() {
        let check = |x: f64, expected: Option<&str>| {
            assert_eq!(number_text(x).as_deref(), expected, "{x:?}");
        };
        check(0.0, Some("0"));
        check(-0.0, Some("0"));
        check(42.0, Some("42"));
        check(-42.0, Some("-42"));
        check(0.1, Some("0.1"));
        check(1.5, Some("1.5"));
        check(-1.5, Some("-1.5"));
        check(100.0, Some("100"));
        check(123456789012345680000.0, Some("123456789012345680000"));
        check(1e21, Some("1e+21"));
        check(1.5e21, Some("1.5e+21"));
        check(-1e21, Some("-1e+21"));
        check(1e-7, Some("1e-7"));
        check(1.5e-7, Some("1.5e-7"));
        check(0.000001, Some("0.000001"));
        check(0.0000015, Some("0.0000015"));
        check(0.1 + 0.2, Some("0.30000000000000004"));
        check(9007199254740993.0, Some("9007199254740992"));
        check(f64::MAX, Some("1.7976931348623157e+308"));
        check(f64::MIN_POSITIVE, Some("2.2250738585072014e-308"));
        check(5e-324, Some("5e-324"));
        check(1e300, Some("1e+300"));
        check(123.456, Some("123.456"));
        check(f64::NAN, None);
        check(f64::INFINITY, None);
        check(f64::NEG_INFINITY, None);
    }

    proptest! {
        #[test]
        fn round_trips_every_finite_double(bits in any::<u64>()) {
            let x = f64::from_bits(bits);
            // Negative zero prints as `0`, as in JavaScript, and so comes back positive.
            prop_assume!(x.is_finite() && !(x == 0.0 && x.is_sign_negative()));
            let text = number_text(x).unwrap();
            let back: f64 = text.parse().unwrap();
            prop_assert_eq!(back.to_bits(), bits);
        }
    }
}
