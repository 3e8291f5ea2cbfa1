//! What a `bash` command would do, read with a real shell parser (brush-parser): every
//! simple command that would run (inside substitutions, subshells, functions, bodies,
//! heredocs and wrappers such as `sudo`, `xargs`, `find -exec`, `bash -c`), every file it
//! would write, and every construct that cannot be judged before it runs. The permission
//! matcher decides each of these on its own, so an allow rule covers only what it names.

mod env;
mod fast;
mod limits;
mod options;
mod prefix;
mod strings;
mod walk;
mod word;
mod wrappers;

#[cfg(test)]
mod tests;

pub use prefix::suggested_prefix;

use brush_parser::ParserOptions;

/// One effect of a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    /// A simple command that would run.
    Command {
        /// Literal words unquoted; a word that expands at run time as its source text.
        words: Vec<String>,
        /// `words` joined by single spaces: what rules match.
        text: String,
        /// The construct it sits in (`$(...)`, `xargs`, `bash -c`, …); `None` at top level.
        inside: Option<String>,
    },
    /// An output redirection to a file, or a file `tee`/`find -fprint` writes.
    Write {
        /// The path as written.
        path: String,
        /// The construct it sits in.
        inside: Option<String>,
    },
    /// Something that cannot be judged before it runs: it must be asked.
    Unreadable {
        /// The construct.
        text: String,
        /// Why it cannot be judged.
        reason: String,
    },
}

/// Commands longer than this are not parsed.
pub const MAX_LEN: usize = 256 * 1024;
/// Nesting deeper than this (`$(`, `(`, `{`, compound keywords, wrappers) is not parsed.
pub const MAX_DEPTH: usize = 64;

/// Every effect `command` would have, in source order.
pub fn analyze(command: &str) -> Vec<Part> {
    let mut walker = Walker::default();
    walker.script(command, &None);
    if walker.arithmetic && walker.quoted_code {
        // `x='a[$(rm p)]'; echo $((x))`: bash evaluates the subscript of a variable's value.
        walker.parts.push(Part::Unreadable {
            text: command.to_string(),
            reason: "arithmetic in a command that carries a quoted command substitution".into(),
        });
    }
    relative_writes_after_cd(&mut walker.parts);
    walker.parts
}

/// `cd /etc && echo x > out/passwd`: a relative path no longer names the file a write rule
/// was written for, so once the command changes directory such a write is asked.
fn relative_writes_after_cd(parts: &mut [Part]) {
    let moves = parts.iter().any(|part| match part {
        Part::Command { words, .. } => words
            .first()
            .is_some_and(|w| matches!(w.as_str(), "cd" | "pushd" | "popd")),
        Part::Write { .. } | Part::Unreadable { .. } => false,
    });
    if !moves {
        return;
    }
    for part in parts.iter_mut() {
        if let Part::Write { path, .. } = part
            && !path.starts_with('/')
        {
            *part = Part::Unreadable {
                text: format!("> {path}"),
                reason: "a write relative to a directory the command changes".into(),
            };
        }
    }
}

/// The state of one analysis.
#[derive(Default)]
struct Walker {
    parts: Vec<Part>,
    /// Nesting of re-parsed strings and wrappers (bounded by `MAX_DEPTH`).
    depth: usize,
    /// An arithmetic context was seen.
    arithmetic: bool,
    /// A quoted literal holds `$(`, a backquote or an escape that could spell them.
    quoted_code: bool,
    options: ParserOptions,
}

impl Walker {
    fn unreadable(&mut self, text: impl Into<String>, reason: impl Into<String>) {
        self.parts.push(Part::Unreadable {
            text: text.into(),
            reason: reason.into(),
        });
    }

    /// Analyzes a shell string (the command, a substitution's body, a `bash -c` string).
    fn script(&mut self, text: &str, inside: &Option<String>) {
        if text.len() > MAX_LEN {
            return self.unreadable(shown(text), "the command is longer than 256 KiB");
        }
        if self.depth >= MAX_DEPTH || limits::too_deep(text, MAX_DEPTH - self.depth) {
            return self.unreadable(shown(text), "the command is nested deeper than 64 levels");
        }
        if let Some(commands) = fast::split(text) {
            for words in commands {
                let words = words.into_iter().map(word::W::literal).collect();
                self.command(words, inside);
            }
            return;
        }
        let parsed = guarded(|| {
            brush_parser::Parser::new(std::io::Cursor::new(text), &self.options).parse_program()
        });
        match parsed {
            Some(Ok(program)) => self.program(&program, inside),
            Some(Err(error)) => self.unreadable(
                shown(text),
                format!("the shell parser cannot read it ({error})"),
            ),
            None => self.unreadable(shown(text), "the shell parser failed on it"),
        }
    }
}

/// `text` for a message: its first 80 characters.
fn shown(text: &str) -> String {
    let head = limits::head(text);
    if head.len() < text.len() {
        format!("{head}…")
    } else {
        text.to_string()
    }
}

/// Runs a brush call; `None` if it panicked (the parser is third-party code fed hostile
/// input: its failure must be an `ask`, never the host's).
fn guarded<T>(call: impl FnOnce() -> T) -> Option<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)).ok()
}
