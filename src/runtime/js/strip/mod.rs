//! Erasable-TypeScript type stripping that keeps every remaining token where it was.
//!
//! A Code Mode program (the body of an async TypeScript function) is parsed with oxc and every
//! type-only construct is overwritten with whitespace, the way Node's
//! `--experimental-strip-types`, ts-blank-space and amaro's strip-only mode do: the output has
//! the same byte length, every line break stays, and every kept token keeps its line and
//! column, so engine errors point into the model's own code. Constructs with runtime semantics
//! that exist only in TypeScript (`enum`, namespaces with code, parameter properties,
//! `import x =`, `export =`), `<T>expr` assertions and JSX are rejected with a message saying
//! what to write instead. Where blanking would let automatic semicolon insertion join two
//! statements, or an arrow's `)` or `(` sit on the wrong line, a `;`, `)` or `(` is written
//! into a blanked byte (see `seams` and the arrow handling in `erase`), as ts-blank-space does.
//!
//! Parsing uses the module goal with top-level `return` allowed, which is what lets both
//! top-level `await` and `return` parse. oxc's parser leaves strict-mode rules (`with`, octal
//! literals, reserved words such as `package`) to later passes, so sloppy-mode programs still
//! strip; the one module-only rule it enforces is that `<!--` comments are rejected.

mod depth;
mod edits;
mod erasable;
mod erase;
mod jsx;
mod position;
mod seams;

#[cfg(test)]
mod tests;

use oxc::allocator::Allocator;
use oxc::ast_visit::Visit;
use oxc::diagnostics::Severity;
use oxc::parser::{ParseOptions, Parser, config::TokensParserConfig};
use oxc::span::SourceType;

use erase::Eraser;

/// Why a program could not be stripped: a syntax error, or TypeScript that is not erasable.
/// `line` and `column` are 1-based; the column counts chars (Unicode scalar values).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("SyntaxError: {message} at program.ts:{line}:{column}")]
pub struct StripError {
    pub line: u32,
    pub column: u32,
    pub message: String,
}

/// Largest program accepted, in bytes. The parser and the visitor recurse once per level
/// of the syntax tree, so the stack the strip may need grows with the source; this cap
/// bounds it.
const MAX_SOURCE_BYTES: usize = 1 << 20;
/// Stack the strip runs with: a base plus a budget per source byte, the deepest tree per
/// byte (`(((`, `[[[`, `({a:` chains, `1+1+…` left-nested) with a wide margin, in a debug
/// build, which uses more stack per level than release (`docs/performance.md` has the
/// measurement). Reserved, not touched: only what the recursion reaches becomes resident.
const BASE_STACK_BYTES: usize = 2 << 20;
const STACK_BYTES_PER_SOURCE_BYTE: usize = 4 << 10;
/// How far the parser itself may recurse: the nesting the scan saw plus slack (the scan
/// counts an `else if` chain or labels low), at a generous budget per level. A program the
/// scan misjudged is refused once the parser is past it, with the stack it touched bounded
/// by this, not by the source.
const STACK_BYTES_PER_LEVEL: usize = 8 << 10;
const SLACK_LEVELS: usize = 2048;
/// The parser's message when it reached `max_stack_bytes`.
const NESTED_TOO_DEEPLY: &str = "The program is nested too deeply to parse";

/// [`strip_types_within`] with no bound on nesting (the host's own sources).
pub fn strip_types(source: &str) -> Result<String, StripError> {
    strip_types_within(source, usize::MAX)
}

/// Returns `source` with its types blanked (same byte length, same line breaks), or the first
/// syntax error or non-erasable construct; a program nested deeper than `max_depth` levels
/// (`transport.maxNestingDepth`, see `depth`) is refused before it is parsed.
///
/// oxc's parser and visitor recurse once per nesting level, so a deeply nested expression
/// overflows an ordinary thread's stack; the work runs where the stack sized for the source
/// fits: on the caller's stack when enough of it is left (a typical program on a 32 MiB host
/// worker, without starting a thread), else on a fresh stack segment of that size.
pub fn strip_types_within(source: &str, max_depth: usize) -> Result<String, StripError> {
    if source.len() > MAX_SOURCE_BYTES {
        return Err(StripError {
            line: 1,
            column: 1,
            message: format!(
                "program is too large to strip: {} bytes (the limit is {MAX_SOURCE_BYTES})",
                source.len()
            ),
        });
    }
    let deepest = match depth::nesting(source, max_depth) {
        Ok(deepest) => deepest,
        Err(offset) => {
            let offset = u32::try_from(offset).unwrap_or(u32::MAX);
            return Err(error_at(source, offset, too_deep_message(max_depth)));
        }
    };
    // The scan is not the parser and can be misled (a `/` it reads as a regular expression
    // the parser reads as a division): the parser is held to the stack of what the scan saw,
    // so a program nested deeper than that is refused, never a stack that grows with it.
    let stack_size = BASE_STACK_BYTES + source.len() * STACK_BYTES_PER_SOURCE_BYTE;
    let parse_stack = deepest
        .saturating_add(SLACK_LEVELS)
        .saturating_mul(STACK_BYTES_PER_LEVEL)
        .saturating_add(BASE_STACK_BYTES)
        .min(stack_size / 2);
    let strip = || {
        std::panic::catch_unwind(|| strip_on_this_thread(source, parse_stack)).unwrap_or_else(
            |_| {
                Err(StripError {
                    line: 1,
                    column: 1,
                    message: "type stripping failed unexpectedly".to_owned(),
                })
            },
        )
    };
    stacker::maybe_grow(stack_size, stack_size, strip)
}

fn strip_on_this_thread(source: &str, max_stack_bytes: usize) -> Result<String, StripError> {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, SourceType::ts().with_module(true))
        .with_options(ParseOptions {
            allow_return_outside_function: true,
            max_stack_bytes,
            ..ParseOptions::default()
        })
        .with_config(TokensParserConfig)
        .parse();
    // The stack bound of the vendored parser (`vendor/patches/oxc_parser`) was reached.
    if let Some(deep) = parsed
        .diagnostics
        .iter()
        .find(|diagnostic| diagnostic.message == NESTED_TOO_DEEPLY)
    {
        let offset = deep.labels.first().map_or(0, |label| label.offset());
        return Err(error_at(
            source,
            offset,
            "the program nests too deeply to parse".to_owned(),
        ));
    }
    let first_error = parsed
        .diagnostics
        .iter()
        .filter(|diagnostic| diagnostic.severity == Severity::Error)
        .map(|diagnostic| {
            let offset = diagnostic
                .labels
                .iter()
                .find(|label| label.primary())
                .or_else(|| diagnostic.labels.first())
                .map_or(0, |label| label.offset());
            (offset, diagnostic.message.to_string())
        })
        .min_by_key(|&(offset, _)| offset);
    if let Some((offset, message)) = first_error {
        return Err(match jsx::first_jsx_offset(source) {
            Some(jsx_offset) => error_at(source, jsx_offset, jsx::JSX.to_owned()),
            None => error_at(source, offset, message),
        });
    }

    let mut eraser = Eraser::new(source, &parsed.tokens);
    eraser.visit_program(&parsed.program);
    if let Some(rejection) = eraser.rejection {
        return Err(error_at(source, rejection.offset, rejection.message));
    }
    let mut blanked = eraser.edits.finish(source);
    seams::keep_seams(
        source,
        &parsed.program.comments,
        &mut blanked,
        &eraser.seams,
    );
    Ok(blanked.render(source))
}

/// What a program nested past the limit is told.
pub fn too_deep_message(max_depth: usize) -> String {
    format!(
        "the program nests deeper than {max_depth} levels, the most transport.maxNestingDepth allows"
    )
}

fn error_at(source: &str, offset: u32, message: String) -> StripError {
    let (line, column) = position::line_and_column(source, offset);
    StripError {
        line,
        column,
        message,
    }
}
