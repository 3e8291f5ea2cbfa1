//! The parser skipped for the commonest shape: plain words joined by `|`, `&&`, `||` and
//! `;` (`git status`, `cargo test -p x && git diff`). Anything else, or any doubt, goes to
//! the parser; `tests` checks both agree on every corpus command this accepts.

/// The simple commands of `text`, when it is only plain words and those operators.
pub(super) fn split(text: &str) -> Option<Vec<Vec<String>>> {
    let mut commands = Vec::new();
    let mut words: Vec<String> = Vec::new();
    for token in text.split([' ', '\t']).filter(|t| !t.is_empty()) {
        // `a; b`: a plain word that ends the command.
        let (token, ends) = match token.strip_suffix(';') {
            Some(word) if word.bytes().all(plain) && !word.is_empty() => (word, true),
            _ => (token, false),
        };
        match token {
            "|" | "&&" | "||" | ";" => {
                if words.is_empty() {
                    return None;
                }
                commands.push(std::mem::take(&mut words));
            }
            _ if !token.bytes().all(plain) => return None,
            // An assignment or a reserved word in command position needs the parser.
            _ if words.is_empty() && (token.contains('=') || reserved(token)) => return None,
            _ => words.push(token.to_string()),
        }
        if ends {
            commands.push(std::mem::take(&mut words));
        }
    }
    if words.is_empty() {
        // Empty, or ends in an operator (`a |`: the parser reads on or fails).
        return None;
    }
    commands.push(words);
    Some(commands)
}

/// Bytes that are literal wherever they stand in a word.
fn plain(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'_' | b'-' | b'.' | b'/' | b':' | b',' | b'@' | b'%' | b'+' | b'='
        )
}

fn reserved(word: &str) -> bool {
    matches!(
        word,
        "if" | "then"
            | "else"
            | "elif"
            | "fi"
            | "do"
            | "done"
            | "case"
            | "esac"
            | "while"
            | "until"
            | "for"
            | "in"
            | "select"
            | "function"
            | "time"
            | "coproc"
    )
}
