//! TypeScript lexical pieces shared by the renderers: property keys, string literals, doc comments.

/// Levels of nesting that still indent; deeper lines keep this indentation so that the
/// output of a deep schema stays linear in its size instead of quadratic.
pub(super) const MAX_INDENT_LEVEL: usize = 16;

const INDENTATION: &str = "                                ";
const _: () = assert!(INDENTATION.len() == 2 * MAX_INDENT_LEVEL);

/// The two-space indentation of `level`, capped at [`MAX_INDENT_LEVEL`].
pub(super) fn indentation(level: usize) -> &'static str {
    &INDENTATION[..2 * level.min(MAX_INDENT_LEVEL)]
}

/// A member name as written in a type: bare when it is a plain ASCII identifier, otherwise
/// a JSON-quoted string. `__proto__` and `constructor` are quoted too, because on a
/// JavaScript object they name inherited machinery rather than an ordinary property.
pub(super) fn property_key(name: &str) -> String {
    let mut chars = name.chars();
    let starts_identifier = chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_' || first == '$');
    let is_identifier = starts_identifier
        && chars.all(|rest| rest.is_ascii_alphanumeric() || rest == '_' || rest == '$');
    if is_identifier && name != "__proto__" && name != "constructor" {
        name.to_owned()
    } else {
        json_string(name)
    }
}

/// `text` as a JSON string literal (serde_json's escaping), which is also a valid
/// TypeScript string literal and literal type.
pub(super) fn json_string(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('"');
    for character in text.chars() {
        match character {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            '\n' => quoted.push_str("\\n"),
            '\r' => quoted.push_str("\\r"),
            '\t' => quoted.push_str("\\t"),
            '\u{8}' => quoted.push_str("\\b"),
            '\u{c}' => quoted.push_str("\\f"),
            control if control < ' ' => quoted.push_str(&format!("\\u{:04x}", u32::from(control))),
            other => quoted.push(other),
        }
    }
    quoted.push('"');
    quoted
}

/// `description` as a `/** ... */` comment whose continuation lines are indented for
/// `level`; `None` when there is nothing to say. `*/` is escaped so the comment cannot end
/// early, and every line break (`\n`, `\r\n`, `\r`) becomes a ` * ` line, so no line of the
/// comment can start a Markdown fence inside the SDK block.
pub(super) fn doc_comment(description: &str, level: usize) -> Option<String> {
    let text = description.replace("*/", "*\\/").replace("\r\n", "\n");
    let lines: Vec<&str> = text.trim().split(['\n', '\r']).map(str::trim_end).collect();
    match lines.as_slice() {
        [""] => None,
        [single] => Some(format!("/** {single} */")),
        many => {
            let indent = indentation(level);
            let mut comment = String::from("/**");
            for line in many {
                comment.push('\n');
                comment.push_str(indent);
                comment.push_str(if line.is_empty() { " *" } else { " * " });
                comment.push_str(line);
            }
            comment.push('\n');
            comment.push_str(indent);
            comment.push_str(" */");
            Some(comment)
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_bare_only_for_plain_identifiers() {
        let check = |name: &str, expected: &str| assert_eq!(property_key(name), expected, "{name}");
        check("read_file", "read_file");
        check("$x9", "$x9");
        check("_", "_");
        check("mcp__srv__tool", "mcp__srv__tool");
        check("delete", "delete");
        check("my-tool", "\"my-tool\"");
        check("__proto__", "\"__proto__\"");
        check("constructor", "\"constructor\"");
        check("a.b", "\"a.b\"");
        check("with space", "\"with space\"");
        check("café", "\"café\"");
        check("9lives", "\"9lives\"");
        check("", "\"\"");
        check("say \"hi\"\\", "\"say \\\"hi\\\"\\\\\"");
    }

    #[test]
    fn strings_escape_exactly_like_serde_json() {
        let samples = [
            "plain",
            "quote\" back\\slash",
            "\n\r\t\u{8}\u{c}",
            "\u{0}\u{1f}\u{7f}",
            "\u{2028}é😀",
        ];
        for sample in samples {
            assert_eq!(json_string(sample), serde_json::to_string(sample).unwrap());
        }
    }

    #[test]
    fn doc_comments() {
        let check = |description: &str, level: usize, expected: Option<&str>| {
            assert_eq!(
                doc_comment(description, level).as_deref(),
                expected,
                "{description:?}"
            );
        };
        check("", 0, None);
        check("  \n ", 1, None);
        check("Read a file.", 0, Some("/** Read a file. */"));
        check("  padded  ", 3, Some("/** padded */"));
        check("ends */ early", 0, Some("/** ends *\\/ early */"));
        check("a**/", 0, Some("/** a**\\/ */"));
        check(
            "first\r\n\nthird  \rfourth",
            1,
            Some("/**\n   * first\n   *\n   * third\n   * fourth\n   */"),
        );
        check("x\n```\ny", 0, Some("/**\n * x\n * ```\n * y\n */"));
    }

    #[test]
    fn indentation_is_capped() {
        assert_eq!(indentation(0), "");
        assert_eq!(indentation(2), "    ");
        assert_eq!(indentation(MAX_INDENT_LEVEL).len(), 2 * MAX_INDENT_LEVEL);
        assert_eq!(indentation(10_000).len(), 2 * MAX_INDENT_LEVEL);
    }
}
