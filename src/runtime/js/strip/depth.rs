//! Bounding a program's nesting before anything parses it.
//!
//! oxc's parser and visitor recurse once per nesting level, and so does the engine's own
//! parser: a 1 MB program nested 500,000 deep (`[[[…]]]`, `(((1)))`) made the strip alone take
//! the host from 27 MB to 849 MB (its stack and its syntax tree) before the engine refused
//! it. This scan reads the source once, holding a few bytes per level it allows, and refuses
//! it at the first token nested deeper than `transport.maxNestingDepth`, before any tree
//! exists.
//!
//! A level is what makes a parser recurse: every open bracket (`(`, `[`, `{`, a template's
//! `${`), plus, within one bracket pair and one statement, every prefix operator (`!`, `~`,
//! unary `+` `-` `++` `--`, `typeof`, `void`, `delete`, `await`, `new`, `yield`, `...`) and
//! every operator or keyword that nests to its right (assignments, `?`, `=>`, `**`, `<`,
//! `if`, `else`, `for`, `while`, `with`). Such a run ends at `;` and `,`, and where a
//! statement ends without one (a name, string or number after a line break that followed an
//! operand, or after a block's `}`). Strings, template text, comments and regular
//! expressions are skipped; whether a `/` starts a regular expression is decided from the
//! token before it, as a lexer does, a `)` of `if`, `for`, `while` or `with` and a block's
//! `}` counting as statement ends. The count errs high rather than low: ordinary programs
//! are nowhere near the limit either way.

/// The byte offset of the first token nested deeper than `limit` levels, if there is one.
#[cfg(test)]
pub(super) fn too_deep(source: &str, limit: usize) -> Option<usize> {
    nesting(source, limit).err()
}

/// The deepest nesting the scan sees in `source`, or the byte offset of the first token
/// nested deeper than `limit`.
pub(super) fn nesting(source: &str, limit: usize) -> Result<usize, usize> {
    let mut scan = Scan {
        bytes: source.as_bytes(),
        at: 0,
        limit,
        open: Vec::new(),
        run: 0,
        depth: 0,
        deepest: 0,
        last: Last::StatementStart,
        newline: false,
        keyword: None,
        after_dot: false,
    };
    match scan.scan() {
        Ok(()) => Ok(scan.deepest),
        Err(Deep(offset)) => Err(offset),
    }
}

/// The program nests too deep at this byte offset.
struct Deep(usize);

/// What an open bracket was.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    /// `(`; `control` after `if`, `for`, `while` or `with`.
    Paren {
        control: bool,
    },
    Bracket,
    /// `{`; `block` when it holds statements rather than an object literal's properties.
    Brace {
        block: bool,
    },
    /// A template's `${`: its `}` goes back to the template's text.
    Substitution,
}

/// What the last token was, which decides what a `/`, `{`, `+` or `!` after it means.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Last {
    /// Start of the program, `;`, or a block's `}`: a statement may start.
    StatementStart,
    /// A name, literal, or a closing bracket of an expression.
    Operand,
    /// An operator, an open bracket, `,`, or a keyword an expression follows.
    ExpressionStart,
    /// `)` of `if`, `for`, `while`, `with`; `else`, `do`, `try`, `finally`, `=>`: a statement
    /// or a block follows.
    BodyStart,
}

/// Punctuators, longest first.
const PUNCTUATORS: [&str; 52] = [
    ">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=", "=>", "==", "!=",
    "<=", ">=", "&&", "||", "??", "?.", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=",
    "**", "<<", ">>", "=", "<", ">", "+", "-", "*", "/", "%", "&", "|", "^", "!", "~", "?", ":",
    ".", "@", "#", "\\",
];

/// Punctuators that nest what follows them to the right.
const NESTING: [&str; 20] = [
    "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "**=", "<<=", ">>=", ">>>=", "&&=", "||=",
    "??=", "?", "**", "<", "~",
];

struct Scan<'a> {
    bytes: &'a [u8],
    at: usize,
    limit: usize,
    /// Open brackets, each with the run of its enclosing statement when it was opened.
    open: Vec<(Open, usize)>,
    /// Nesting operators so far in the innermost bracket pair's current statement.
    run: usize,
    /// Open brackets plus every run: the nesting at this point.
    depth: usize,
    /// The deepest `depth` so far.
    deepest: usize,
    last: Last,
    /// A line break since the last token.
    newline: bool,
    /// The last token, if it was a name.
    keyword: Option<&'a [u8]>,
    /// The last token was `.` or `?.`: a name now is a property, whatever its spelling.
    after_dot: bool,
}

impl<'a> Scan<'a> {
    fn peek(&self, ahead: usize) -> u8 {
        self.bytes.get(self.at + ahead).copied().unwrap_or(0)
    }

    fn scan(&mut self) -> Result<(), Deep> {
        while let Some(&byte) = self.bytes.get(self.at) {
            match byte {
                b'\n' | b'\r' => {
                    self.newline = true;
                    self.at += 1;
                    continue;
                }
                b' ' | b'\t' | 0x0b | 0x0c => {
                    self.at += 1;
                    continue;
                }
                b'/' if self.peek(1) == b'/' => {
                    self.skip_line_comment();
                    continue;
                }
                b'/' if self.peek(1) == b'*' => {
                    self.skip_block_comment();
                    continue;
                }
                _ => {}
            }
            let start = self.at;
            let (keyword, after_dot) = (self.keyword.take(), self.after_dot);
            self.after_dot = false;
            match byte {
                b'\'' | b'"' => {
                    self.statement_may_end();
                    self.skip_string(byte);
                    self.last = Last::Operand;
                }
                b'`' => {
                    self.statement_may_end();
                    self.at += 1;
                    self.template_text()?;
                }
                b'/' if self.last != Last::Operand => {
                    self.skip_regex();
                    self.last = Last::Operand;
                }
                b'(' => {
                    let control = matches!(keyword, Some(b"if" | b"for" | b"while" | b"with"));
                    self.nest(Open::Paren { control }, start)?;
                }
                b'[' => self.nest(Open::Bracket, start)?,
                b'{' => {
                    let block = self.last != Last::ExpressionStart;
                    self.nest(Open::Brace { block }, start)?;
                }
                b')' | b']' | b'}' => {
                    self.at += 1;
                    self.close()?;
                }
                b';' => {
                    self.at += 1;
                    self.end_run();
                    self.last = Last::StatementStart;
                }
                b',' => {
                    self.at += 1;
                    self.end_run();
                    self.last = Last::ExpressionStart;
                }
                b'0'..=b'9' => self.number(),
                b'.' if self.peek(1).is_ascii_digit() => self.number(),
                _ if is_name_byte(byte) => {
                    let word = self.name();
                    self.word(word, after_dot, start)?;
                }
                _ => self.punctuator(start)?,
            }
            self.newline = false;
        }
        Ok(())
    }

    /// A name, string or number follows: after a line break that followed an operand, or
    /// after a block, it starts a new statement, which ends the run.
    fn statement_may_end(&mut self) {
        if self.last == Last::StatementStart || (self.newline && self.last == Last::Operand) {
            self.end_run();
        }
    }

    fn end_run(&mut self) {
        self.depth -= self.run;
        self.run = 0;
    }

    fn check(&mut self, start: usize) -> Result<(), Deep> {
        self.deepest = self.deepest.max(self.depth);
        if self.depth > self.limit {
            Err(Deep(start))
        } else {
            Ok(())
        }
    }

    /// One more nesting operator in the current run.
    fn deepen(&mut self, start: usize) -> Result<(), Deep> {
        self.run += 1;
        self.depth += 1;
        self.check(start)
    }

    /// Opens a bracket (the byte at `start`, or the two of a `${`).
    fn nest(&mut self, open: Open, start: usize) -> Result<(), Deep> {
        self.at = start + if open == Open::Substitution { 2 } else { 1 };
        self.open.push((open, self.run));
        self.run = 0;
        self.depth += 1;
        self.last = Last::ExpressionStart;
        self.check(start)
    }

    /// Closes the innermost bracket (unbalanced closers are the parser's to report).
    fn close(&mut self) -> Result<(), Deep> {
        let Some((open, enclosing)) = self.open.pop() else {
            self.last = Last::Operand;
            return Ok(());
        };
        self.depth -= 1 + self.run;
        self.run = enclosing;
        self.last = match open {
            Open::Paren { control: true } => Last::BodyStart,
            Open::Brace { block: true } => Last::StatementStart,
            Open::Substitution => return self.template_text(),
            _ => Last::Operand,
        };
        Ok(())
    }

    /// Reads a template's text up to its end or its next `${` (which it opens).
    fn template_text(&mut self) -> Result<(), Deep> {
        while let Some(&byte) = self.bytes.get(self.at) {
            match byte {
                b'\\' => self.at += 2,
                b'`' => {
                    self.at += 1;
                    self.last = Last::Operand;
                    return Ok(());
                }
                b'$' if self.peek(1) == b'{' => {
                    let opened = self.at;
                    return self.nest(Open::Substitution, opened);
                }
                _ => self.at += 1,
            }
        }
        self.last = Last::Operand;
        Ok(())
    }

    fn word(&mut self, word: &'a [u8], after_dot: bool, start: usize) -> Result<(), Deep> {
        self.keyword = Some(word);
        if after_dot {
            self.last = Last::Operand;
            return Ok(());
        }
        let continues = matches!(
            word,
            b"in"
                | b"instanceof"
                | b"of"
                | b"as"
                | b"satisfies"
                | b"else"
                | b"catch"
                | b"finally"
                | b"extends"
                | b"while"
        );
        if !continues {
            self.statement_may_end();
        }
        match word {
            b"typeof" | b"void" | b"delete" | b"await" | b"new" | b"yield" | b"if" | b"for"
            | b"while" | b"with" => {
                self.deepen(start)?;
                self.last = Last::ExpressionStart;
            }
            b"else" => {
                self.deepen(start)?;
                self.last = Last::BodyStart;
            }
            b"do" | b"try" | b"finally" => self.last = Last::BodyStart,
            b"return" | b"throw" | b"case" | b"in" | b"of" | b"instanceof" | b"extends" => {
                self.last = Last::ExpressionStart;
            }
            _ => self.last = Last::Operand,
        }
        Ok(())
    }

    fn punctuator(&mut self, start: usize) -> Result<(), Deep> {
        let rest = &self.bytes[self.at..];
        let Some(token) = PUNCTUATORS
            .iter()
            .find(|token| rest.starts_with(token.as_bytes()))
        else {
            // Anything else (a stray byte) is the parser's to report.
            self.at += 1;
            self.last = Last::ExpressionStart;
            return Ok(());
        };
        self.at += token.len();
        let prefix = self.last != Last::Operand;
        match *token {
            "=>" => {
                self.deepen(start)?;
                self.last = Last::BodyStart;
            }
            "++" | "--" | "+" | "-" | "!" | "..." if prefix => {
                self.deepen(start)?;
                self.last = Last::ExpressionStart;
            }
            // Postfix `++`, `--`, and TypeScript's non-null `!`: the operand goes on.
            "++" | "--" | "!" => self.last = Last::Operand,
            "." | "?." => {
                self.after_dot = true;
                self.last = Last::ExpressionStart;
            }
            token if NESTING.contains(&token) => {
                self.deepen(start)?;
                self.last = Last::ExpressionStart;
            }
            _ => self.last = Last::ExpressionStart,
        }
        Ok(())
    }

    fn name(&mut self) -> &'a [u8] {
        let start = self.at;
        while self.bytes.get(self.at).copied().is_some_and(is_name_byte) {
            self.at += 1;
        }
        &self.bytes[start..self.at]
    }

    fn number(&mut self) {
        self.statement_may_end();
        while self
            .bytes
            .get(self.at)
            .is_some_and(|&byte| is_name_byte(byte) || byte == b'.')
        {
            self.at += 1;
        }
        self.last = Last::Operand;
    }

    fn skip_string(&mut self, quote: u8) {
        self.at += 1;
        while let Some(&byte) = self.bytes.get(self.at) {
            match byte {
                b'\\' => self.at += 2,
                b'\n' | b'\r' => return,
                _ if byte == quote => {
                    self.at += 1;
                    return;
                }
                _ => self.at += 1,
            }
        }
    }

    fn skip_regex(&mut self) {
        self.at += 1;
        let mut class = false;
        while let Some(&byte) = self.bytes.get(self.at) {
            match byte {
                b'\\' => self.at += 2,
                b'\n' | b'\r' => return,
                b'[' => {
                    class = true;
                    self.at += 1;
                }
                b']' => {
                    class = false;
                    self.at += 1;
                }
                b'/' if !class => {
                    self.at += 1;
                    self.name();
                    return;
                }
                _ => self.at += 1,
            }
        }
    }

    fn skip_line_comment(&mut self) {
        while self
            .bytes
            .get(self.at)
            .is_some_and(|&byte| byte != b'\n' && byte != b'\r')
        {
            self.at += 1;
        }
    }

    fn skip_block_comment(&mut self) {
        self.at += 2;
        while let Some(&byte) = self.bytes.get(self.at) {
            if byte == b'*' && self.peek(1) == b'/' {
                self.at += 2;
                return;
            }
            if byte == b'\n' || byte == b'\r' {
                self.newline = true;
            }
            self.at += 1;
        }
    }
}

fn is_name_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'$' | b'#' | b'\\') || byte >= 0x80
}

#[cfg(test)]
mod tests {
    use super::too_deep;

    /// The deepest `limit` that refuses `source` (the nesting the scan sees in it).
    fn depth(source: &str) -> usize {
        (0..200)
            .find(|&limit| too_deep(source, limit).is_none())
            .unwrap_or(usize::MAX)
    }

    #[test]
    fn brackets_and_templates_nest() {
        assert_eq!(depth("return 1;"), 0);
        assert_eq!(depth("[[[1]]]"), 3);
        assert_eq!(depth("(((1)))"), 3);
        assert_eq!(depth("f({ a: [1, 2] })"), 3);
        assert_eq!(depth("`a${`b${[1]}`}`"), 3);
        assert_eq!(depth("[1]; [[2]]; [3]"), 2);
    }

    #[test]
    fn operator_runs_nest_until_their_statement_ends() {
        assert_eq!(depth("!!!!x"), 4);
        assert_eq!(depth("a = b = c = d"), 3);
        assert_eq!(depth("a ? b : c ? d : e"), 2);
        assert_eq!(depth("x => y => z"), 2);
        assert_eq!(depth("typeof typeof -x"), 3);
        assert_eq!(depth("a = 1; b = 2; c = 3"), 1);
        assert_eq!(depth("a = 1\nb = 2\nc = 3"), 1);
        assert_eq!(depth("if (a) {} else if (b) {} else if (c) {}"), 6);
        assert_eq!(depth("if (a) {}\nif (b) {}\nif (c) {}"), 2);
        // A line break inside an expression does not end the run.
        assert_eq!(depth("x\n= y\n= z"), 2);
    }

    #[test]
    fn literals_comments_and_regular_expressions_are_skipped() {
        assert_eq!(depth("'((((' + \"[[[[\" + `))))`"), 0);
        assert_eq!(depth("// ((((\n/* [[[[ */ 1"), 0);
        assert_eq!(depth("x = /[(]((/g.test(y)"), 2);
        assert_eq!(depth("a / b / (c)"), 1);
        assert_eq!(depth("if (x) /'/.test(y); [[1]]"), 2);
        assert_eq!(depth("x.delete(y).new"), 1);
    }

    #[test]
    fn a_refusal_names_the_token_past_the_limit() {
        assert_eq!(too_deep("[[[[1]]]]", 3), Some(3));
        assert_eq!(too_deep("[[[1]]]", 3), None);
        let deep = format!("{}1{}", "(".repeat(500_000), ")".repeat(500_000));
        assert_eq!(too_deep(&deep, 20_000), Some(20_000));
    }
}
