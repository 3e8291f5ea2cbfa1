//! The nesting-depth check every frame passes before any recursive code parses it.

/// Whether `bytes` nests arrays/objects deeper than `max` (strings skipped), so deep input
/// is refused before any recursive code sees it.
pub(super) fn nesting_exceeds(bytes: &[u8], max: usize) -> bool {
    // Depth never exceeds the number of openers, and counting them vectorizes: almost every
    // message is decided here without the byte-by-byte walk below.
    if bytes.iter().filter(|&&b| b == b'[' || b == b'{').count() <= max {
        return false;
    }
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &byte in bytes {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(json: &str, max: usize, expected: bool) {
        assert_eq!(
            nesting_exceeds(json.as_bytes(), max),
            expected,
            "{json} (max {max})"
        );
    }

    #[test]
    fn nesting_counts_open_containers_outside_strings() {
        check(r#"{"a":[1,{"b":[]}]}"#, 4, false);
        check(r#"{"a":[1,{"b":[]}]}"#, 3, true);
        check(r#"[[],[],[],[]]"#, 2, false);
        check(r#"[[],[],[],[]]"#, 1, true);
        check(r#"["[[[[", "{{{{"]"#, 1, false);
        check(r#"["\"[[[["]"#, 1, false);
        check(r#"[[["]"]]]"#, 2, true);
        check("", 0, false);
    }
}
