//! Words: a literal word is unquoted (`"git" 'status'` → `git status`); a word that expands
//! at run time keeps its source text, and every command it would run is walked.

use super::Walker;
use brush_parser::word::{
    self as bw, Parameter, ParameterExpr, ParameterTransformOp, WordPiece, WordPieceWithSource,
};

/// One word of a command.
#[derive(Clone, Debug)]
pub(super) struct W {
    /// Unquoted when literal, else the source text.
    pub text: String,
    /// Whether the shell would pass `text` as is.
    pub literal: bool,
}

impl W {
    pub fn literal(text: String) -> W {
        W {
            text,
            literal: true,
        }
    }
}

/// Characters that can quote, expand or substitute inside a word.
fn needs_parse(raw: &str) -> bool {
    raw.bytes()
        .any(|b| matches!(b, b'$' | b'`' | b'\\' | b'\'' | b'"' | b'~' | b'<' | b'>'))
}

/// What the pieces of one word add up to.
struct Build {
    text: String,
    literal: bool,
}

impl Walker {
    /// Reads one word, walking what it would run.
    pub(super) fn word(&mut self, raw: &str, inside: &Option<String>) -> W {
        if !needs_parse(raw) {
            return W::literal(raw.to_string());
        }
        let pieces = match parse_word(raw, &self.options, false) {
            Ok(pieces) => pieces,
            Err(error) => {
                self.unreadable(
                    raw,
                    format!("the shell parser cannot read the word ({error})"),
                );
                return W {
                    text: raw.to_string(),
                    literal: false,
                };
            }
        };
        let mut build = Build {
            text: String::new(),
            literal: true,
        };
        self.pieces(&pieces, inside, &mut build);
        // Quoted text that spells a substitution (the pieces that expand are not in `text`).
        if build.text.contains("$(") || build.text.contains('`') {
            self.quoted_code = true;
        }
        if build.literal {
            W::literal(build.text)
        } else {
            W {
                text: raw.to_string(),
                literal: false,
            }
        }
    }

    /// Walks a heredoc body that expands.
    pub(super) fn heredoc(&mut self, body: &str) {
        let inside = Some("heredoc".to_string());
        match parse_word(body, &self.options, true) {
            Ok(pieces) => {
                let mut build = Build {
                    text: String::new(),
                    literal: true,
                };
                self.pieces(&pieces, &inside, &mut build);
            }
            Err(error) => self.unreadable(
                body,
                format!("the shell parser cannot read the heredoc ({error})"),
            ),
        }
    }

    fn pieces(&mut self, pieces: &[WordPieceWithSource], inside: &Option<String>, out: &mut Build) {
        for WordPieceWithSource {
            piece,
            start_index: _,
            end_index: _,
        } in pieces
        {
            match piece {
                WordPiece::Text(text) | WordPiece::SingleQuotedText(text) => {
                    out.text.push_str(text)
                }
                WordPiece::AnsiCQuotedText(text) => {
                    // Escapes (`\x24(`) could spell anything: literal only without them.
                    if text.contains('\\') {
                        self.quoted_code = true;
                        out.literal = false;
                    }
                    out.text.push_str(text);
                }
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => self.pieces(inner, inside, out),
                WordPiece::EscapeSequence(escape) => out
                    .text
                    .push_str(escape.strip_prefix('\\').unwrap_or(escape)),
                WordPiece::TildeExpansion(_) => out.literal = false,
                WordPiece::ParameterExpansion(expr) => {
                    out.literal = false;
                    self.evaluations(expr);
                    self.parameter(expr, inside);
                }
                WordPiece::CommandSubstitution(body) => {
                    out.literal = false;
                    self.nested(body, "$(...)");
                }
                WordPiece::BackquotedCommandSubstitution(body) => {
                    out.literal = false;
                    self.nested(&unescape_backquoted(body), "`...`");
                }
                WordPiece::ArithmeticExpression(expr) => {
                    out.literal = false;
                    self.arithmetic_text(&expr.value, inside);
                }
            }
        }
    }

    /// A substitution's body, analyzed as a script of its own.
    pub(super) fn nested(&mut self, body: &str, inside: &str) {
        self.depth += 1;
        self.script(body, &Some(inside.to_string()));
        self.depth -= 1;
    }

    /// Arithmetic text (`$((…))`, `((…))`, a subscript): bash expands `$(…)` inside it.
    pub(super) fn arithmetic_text(&mut self, text: &str, inside: &Option<String>) {
        self.arithmetic = true;
        if !text.contains(['$', '`']) {
            return;
        }
        match parse_word(text, &self.options, false) {
            Ok(pieces) => {
                let mut build = Build {
                    text: String::new(),
                    literal: true,
                };
                self.pieces(&pieces, inside, &mut build);
            }
            Err(error) => self.unreadable(
                text,
                format!("the shell parser cannot read the arithmetic ({error})"),
            ),
        }
    }

    /// An operand of a parameter expansion (`${x:-$(cmd)}`), walked as a word.
    fn operand(&mut self, operand: &Option<String>, inside: &Option<String>) {
        if let Some(operand) = operand
            && operand.contains(['$', '`', '<', '>'])
        {
            self.word(operand, inside);
        }
    }

    fn subscript(&mut self, parameter: &Parameter, inside: &Option<String>) {
        match parameter {
            Parameter::NamedWithIndex { name: _, index } => self.arithmetic_text(index, inside),
            Parameter::Positional(_)
            | Parameter::Special(_)
            | Parameter::Named(_)
            | Parameter::NamedWithAllIndices {
                name: _,
                concatenate: _,
            } => {}
        }
    }

    /// What an expansion evaluates beyond its operands: `${x@P}` expands the value as a
    /// prompt (its `$(...)` run), so it is never judged; `${!x}` reads the variable the value
    /// names, evaluating a subscript in it (`x='a[$(cmd)]'`), as arithmetic does.
    fn evaluations(&mut self, expr: &ParameterExpr) {
        if let ParameterExpr::Transform {
            parameter: _,
            indirect: _,
            op: ParameterTransformOp::PromptExpand,
        } = expr
        {
            self.unreadable(
                "${...@P}".to_owned(),
                "prompt expansion (@P) runs the command substitutions of a value",
            );
        }
        if indirect(expr) {
            self.arithmetic = true;
        }
    }

    fn parameter(&mut self, expr: &ParameterExpr, inside: &Option<String>) {
        match expr {
            ParameterExpr::Parameter {
                parameter,
                indirect: _,
            }
            | ParameterExpr::ParameterLength {
                parameter,
                indirect: _,
            }
            | ParameterExpr::Transform {
                parameter,
                indirect: _,
                op: _,
            } => self.subscript(parameter, inside),
            ParameterExpr::UseDefaultValues {
                parameter,
                indirect: _,
                test_type: _,
                default_value: operand,
            }
            | ParameterExpr::AssignDefaultValues {
                parameter,
                indirect: _,
                test_type: _,
                default_value: operand,
            }
            | ParameterExpr::IndicateErrorIfNullOrUnset {
                parameter,
                indirect: _,
                test_type: _,
                error_message: operand,
            }
            | ParameterExpr::UseAlternativeValue {
                parameter,
                indirect: _,
                test_type: _,
                alternative_value: operand,
            }
            | ParameterExpr::RemoveSmallestSuffixPattern {
                parameter,
                indirect: _,
                pattern: operand,
            }
            | ParameterExpr::RemoveLargestSuffixPattern {
                parameter,
                indirect: _,
                pattern: operand,
            }
            | ParameterExpr::RemoveSmallestPrefixPattern {
                parameter,
                indirect: _,
                pattern: operand,
            }
            | ParameterExpr::RemoveLargestPrefixPattern {
                parameter,
                indirect: _,
                pattern: operand,
            }
            | ParameterExpr::UppercaseFirstChar {
                parameter,
                indirect: _,
                pattern: operand,
            }
            | ParameterExpr::UppercasePattern {
                parameter,
                indirect: _,
                pattern: operand,
            }
            | ParameterExpr::LowercaseFirstChar {
                parameter,
                indirect: _,
                pattern: operand,
            }
            | ParameterExpr::LowercasePattern {
                parameter,
                indirect: _,
                pattern: operand,
            } => {
                self.subscript(parameter, inside);
                self.operand(operand, inside);
            }
            ParameterExpr::Substring {
                parameter,
                indirect: _,
                offset,
                length,
            } => {
                self.subscript(parameter, inside);
                self.arithmetic_text(&offset.value, inside);
                if let Some(length) = length {
                    self.arithmetic_text(&length.value, inside);
                }
            }
            ParameterExpr::ReplaceSubstring {
                parameter,
                indirect: _,
                pattern,
                replacement,
                match_kind: _,
            } => {
                self.subscript(parameter, inside);
                self.operand(&Some(pattern.clone()), inside);
                self.operand(replacement, inside);
            }
            ParameterExpr::VariableNames {
                prefix: _,
                concatenate: _,
            }
            | ParameterExpr::MemberKeys {
                variable_name: _,
                concatenate: _,
            } => {}
        }
    }
}

/// Whether `expr` reads the variable its parameter's value names (`${!x}`).
fn indirect(expr: &ParameterExpr) -> bool {
    match expr {
        ParameterExpr::Parameter {
            parameter: _,
            indirect,
        }
        | ParameterExpr::ParameterLength {
            parameter: _,
            indirect,
        }
        | ParameterExpr::Transform {
            parameter: _,
            indirect,
            op: _,
        }
        | ParameterExpr::UseDefaultValues {
            parameter: _,
            indirect,
            test_type: _,
            default_value: _,
        }
        | ParameterExpr::AssignDefaultValues {
            parameter: _,
            indirect,
            test_type: _,
            default_value: _,
        }
        | ParameterExpr::IndicateErrorIfNullOrUnset {
            parameter: _,
            indirect,
            test_type: _,
            error_message: _,
        }
        | ParameterExpr::UseAlternativeValue {
            parameter: _,
            indirect,
            test_type: _,
            alternative_value: _,
        }
        | ParameterExpr::RemoveSmallestSuffixPattern {
            parameter: _,
            indirect,
            pattern: _,
        }
        | ParameterExpr::RemoveLargestSuffixPattern {
            parameter: _,
            indirect,
            pattern: _,
        }
        | ParameterExpr::RemoveSmallestPrefixPattern {
            parameter: _,
            indirect,
            pattern: _,
        }
        | ParameterExpr::RemoveLargestPrefixPattern {
            parameter: _,
            indirect,
            pattern: _,
        }
        | ParameterExpr::UppercaseFirstChar {
            parameter: _,
            indirect,
            pattern: _,
        }
        | ParameterExpr::UppercasePattern {
            parameter: _,
            indirect,
            pattern: _,
        }
        | ParameterExpr::LowercaseFirstChar {
            parameter: _,
            indirect,
            pattern: _,
        }
        | ParameterExpr::LowercasePattern {
            parameter: _,
            indirect,
            pattern: _,
        }
        | ParameterExpr::Substring {
            parameter: _,
            indirect,
            offset: _,
            length: _,
        }
        | ParameterExpr::ReplaceSubstring {
            parameter: _,
            indirect,
            pattern: _,
            replacement: _,
            match_kind: _,
        } => *indirect,
        // `${!prefix*}` and `${!a[@]}` list names and keys: nothing is read through them.
        ParameterExpr::VariableNames {
            prefix: _,
            concatenate: _,
        }
        | ParameterExpr::MemberKeys {
            variable_name: _,
            concatenate: _,
        } => false,
    }
}

/// brush's word parser, its panics (third-party code fed hostile input) an error too.
fn parse_word(
    raw: &str,
    options: &brush_parser::ParserOptions,
    heredoc: bool,
) -> Result<Vec<WordPieceWithSource>, String> {
    let parsed = super::guarded(|| {
        if heredoc {
            bw::parse_heredoc(raw, options)
        } else {
            bw::parse(raw, options)
        }
    });
    match parsed {
        Some(Ok(pieces)) => Ok(pieces),
        Some(Err(error)) => Err(error.to_string()),
        None => Err("the parser failed".to_string()),
    }
}

/// A backquoted body as the shell re-reads it: `\$`, `` \` `` and `\\` lose the backslash.
fn unescape_backquoted(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&next) = chars.peek()
            && matches!(next, '$' | '`' | '\\')
        {
            out.push(next);
            chars.next();
            continue;
        }
        out.push(c);
    }
    out
}
