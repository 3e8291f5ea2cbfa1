//! The shortest safe prefix for a "don't ask again" rule: the program and the
//! subcommand-looking words after it, never past a flag, path, URL, value or pattern.

/// `npm run test:unit -- -x` → `npm run test:unit`; `git log --oneline` → `git log`;
/// `./build.sh x` → `./build.sh` (a program named by path takes no subcommands). `None`
/// without words or for a computed program.
pub fn suggested_prefix(words: &[String]) -> Option<String> {
    let (program, rest) = words.split_first()?;
    if program.is_empty() || program.contains(['$', '`', '*', '?', '[', '=']) {
        return None;
    }
    let mut prefix = program.clone();
    if program.contains('/') {
        // `./build.sh x`: a script's arguments are its own.
        return Some(prefix);
    }
    for word in rest.iter().take(2) {
        if !subcommand(word) {
            break;
        }
        prefix.push(' ');
        prefix.push_str(word);
    }
    Some(prefix)
}

/// `^[A-Za-z][A-Za-z0-9_-]*(:[A-Za-z0-9_-]+)*$`.
fn subcommand(word: &str) -> bool {
    let mut segments = word.split(':');
    let first = segments.next().unwrap_or_default();
    let word_chars = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    };
    first
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic())
        && word_chars(first)
        && segments.all(word_chars)
}
