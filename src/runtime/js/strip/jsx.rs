//! Recognizes JSX in a program that failed to parse as TypeScript, so the error can say
//! "JSX is not supported" instead of oxc's "Unexpected token".

use oxc::allocator::Allocator;
use oxc::ast::ast::{JSXElement, JSXFragment};
use oxc::ast_visit::Visit;
use oxc::diagnostics::Severity;
use oxc::parser::{ParseOptions, Parser};
use oxc::span::SourceType;

pub(super) const JSX: &str =
    "JSX is not supported: build the value with plain objects or strings instead";

/// Offset of the first JSX element or fragment, if `source` parses cleanly as TSX.
pub(super) fn first_jsx_offset(source: &str) -> Option<u32> {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, SourceType::tsx().with_module(true))
        .with_options(ParseOptions {
            allow_return_outside_function: true,
            ..ParseOptions::default()
        })
        .parse();
    if parsed.panicked
        || parsed
            .diagnostics
            .iter()
            .any(|diagnostic| diagnostic.severity == Severity::Error)
    {
        return None;
    }
    let mut finder = JsxFinder { first: None };
    finder.visit_program(&parsed.program);
    finder.first
}

struct JsxFinder {
    first: Option<u32>,
}

impl JsxFinder {
    fn found(&mut self, offset: u32) {
        self.first = Some(self.first.map_or(offset, |first| first.min(offset)));
    }
}

impl<'a> Visit<'a> for JsxFinder {
    fn visit_jsx_element(&mut self, it: &JSXElement<'a>) {
        self.found(it.span.start);
    }

    fn visit_jsx_fragment(&mut self, it: &JSXFragment<'a>) {
        self.found(it.span.start);
    }
}
