//! The AST walk that finds every type-only piece of a program (to blank) and every construct
//! that has runtime semantics in TypeScript alone (to reject).

use oxc::allocator::Vec as ArenaVec;
use oxc::ast::ast::{
    AccessorProperty, ArrowFunctionExpression, Class, ClassElement, ExportFromDeclaration,
    ExportNamedDeclaration, ExportSpecifier, FormalParameter, FunctionBody, ImportDeclaration,
    ImportDeclarationSpecifier, MethodDefinition, Program, PropertyDefinition, PropertyKey,
    Statement, TSAsExpression, TSClassImplements, TSEnumDeclaration, TSExportAssignment,
    TSExternalModuleDeclaration, TSGlobalDeclaration, TSImportEqualsDeclaration, TSIndexSignature,
    TSInterfaceDeclaration, TSNamespaceDeclaration, TSNamespaceDeclarationKind,
    TSNamespaceExportDeclaration, TSNonNullExpression, TSSatisfiesExpression, TSThisParameter,
    TSType, TSTypeAliasDeclaration, TSTypeAnnotation, TSTypeAssertion, TSTypeParameterDeclaration,
    TSTypeParameterInstantiation, VariableDeclarator,
};
use oxc::ast_visit::{Visit, walk};
use oxc::parser::{Kind, Token};
use oxc::span::{GetSpan, Span};

use super::edits::{Edits, has_line_terminator};
use super::erasable::{is_type_only_member, is_type_only_statement};
use super::seams::{Seam, SeamKind};

const ENUM: &str = "`enum` is not erasable TypeScript: use an object literal with `as const` \
                    (or a union of literal types) instead";
const PARAMETER_PROPERTY: &str = "a constructor parameter property is not erasable TypeScript: \
                                  declare the field in the class body and assign it in the constructor";
const IMPORT_EQUALS: &str = "`import ... =` is not erasable TypeScript: write \
                             `const x = require(\"...\")` or `const x = N.y` instead";
const EXPORT_EQUALS: &str = "`export =` is not erasable TypeScript: use `export default` instead";
const ANGLE_ASSERTION: &str = "a `<T>expr` type assertion is not supported (nor is JSX): write \
                               `expr as T` instead";
const RETURN_TYPE_LINE: &str = "this arrow function's return type cannot be blanked without \
                                moving `=>`: put the return type on the line of `)`";

/// A construct that cannot be blanked, at the byte offset where it starts.
#[derive(Debug)]
pub(super) struct Rejection {
    pub(super) offset: u32,
    pub(super) message: String,
}

/// Collects the edits, the seams to re-check once all blanks are known, and the earliest
/// rejection.
pub(super) struct Eraser<'s> {
    source: &'s str,
    tokens: &'s [Token],
    pub(super) edits: Edits,
    pub(super) seams: Vec<Seam>,
    pub(super) rejection: Option<Rejection>,
}

impl<'s> Eraser<'s> {
    pub(super) fn new(source: &'s str, tokens: &'s [Token]) -> Self {
        Self {
            source,
            tokens,
            edits: Edits::default(),
            seams: Vec::new(),
            rejection: None,
        }
    }

    fn blank(&mut self, span: Span) {
        self.edits.blank(span.start, span.end);
    }

    fn reject(&mut self, offset: u32, message: impl Into<String>) {
        if self
            .rejection
            .as_ref()
            .is_none_or(|earlier| offset < earlier.offset)
        {
            self.rejection = Some(Rejection {
                offset,
                message: message.into(),
            });
        }
    }

    /// Index of the first token that starts at or after `offset`.
    fn token_index_at(&self, offset: u32) -> usize {
        self.tokens.partition_point(|token| token.start() < offset)
    }

    /// The first token of `kind` that starts in `from..to`.
    fn find_token(&self, kind: Kind, from: u32, to: u32) -> Option<Span> {
        self.tokens[self.token_index_at(from)..]
            .iter()
            .take_while(|token| token.start() < to)
            .find(|token| token.kind() == kind)
            .map(Token::span)
    }

    /// The token that starts at or after `offset`, if it is of `kind`.
    fn token_after(&self, offset: u32, kind: Kind) -> Option<Span> {
        self.tokens
            .get(self.token_index_at(offset))
            .filter(|token| token.kind() == kind)
            .map(Token::span)
    }

    /// The last token that starts before `offset`, if it is of `kind`.
    fn token_before(&self, offset: u32, kind: Kind) -> Option<Span> {
        let index = self.token_index_at(offset).checked_sub(1)?;
        self.tokens
            .get(index)
            .filter(|token| token.kind() == kind)
            .map(Token::span)
    }

    fn text(&self, from: u32, to: u32) -> &'s str {
        self.source
            .get(from as usize..to as usize)
            .unwrap_or_default()
    }

    /// Blanks the `?` or `!` that follows a name (`x?: T`, `x!: T`), searched in `from..to`.
    fn blank_marker(&mut self, kind: Kind, from: u32, to: u32) {
        if let Some(marker) = self.find_token(kind, from, to) {
            self.blank(marker);
        }
    }

    /// Blanks a specifier and the comma after it: `{ type A, B }` becomes `{         B }`.
    fn blank_specifier(&mut self, span: Span) {
        let end = self
            .token_after(span.end, Kind::Comma)
            .map_or(span.end, |comma| comma.end);
        self.edits.blank(span.start, end);
    }

    /// Blanks the statements that are type-only, walks the others, and records the seams
    /// between kept neighbours. `preceding` is the directive before the list, if any.
    fn erase_statements(
        &mut self,
        statements: &ArenaVec<'_, Statement<'_>>,
        preceding: Option<Span>,
    ) {
        let mut previous = preceding;
        for statement in statements {
            let span = statement.span();
            if is_type_only_statement(statement) {
                self.blank(span);
                continue;
            }
            if let Some(previous) = previous {
                self.seams.push(Seam {
                    before_end: previous.end,
                    after_start: span.start,
                    kind: SeamKind::Statements,
                });
            }
            previous = Some(span);
            self.visit_statement(statement);
        }
    }

    /// Blanks `public`, `private`, `protected`, `readonly` and `override` before a member's
    /// name (decorators and JavaScript modifiers such as `static` and `accessor` stay).
    fn blank_member_modifiers(&mut self, member: &ClassElement<'_>) {
        let (start, key, decorators) = match member {
            ClassElement::MethodDefinition(method)
                if method.accessibility.is_some() || method.r#override =>
            {
                (method.span.start, &method.key, &method.decorators)
            }
            ClassElement::PropertyDefinition(property)
                if property.accessibility.is_some() || property.r#override || property.readonly =>
            {
                (property.span.start, &property.key, &property.decorators)
            }
            ClassElement::AccessorProperty(accessor)
                if accessor.accessibility.is_some() || accessor.r#override =>
            {
                (accessor.span.start, &accessor.key, &accessor.decorators)
            }
            _ => return,
        };
        let from = decorators
            .last()
            .map_or(start, |decorator| decorator.span.end);
        let to = key.span().start;
        let first = self.token_index_at(from);
        let modifiers: Vec<Span> = self.tokens[first..]
            .iter()
            .take_while(|token| token.start() < to)
            .filter(|token| {
                matches!(
                    token.kind(),
                    Kind::Public
                        | Kind::Private
                        | Kind::Protected
                        | Kind::Readonly
                        | Kind::Override
                )
            })
            .map(Token::span)
            .collect();
        for modifier in modifiers {
            self.blank(modifier);
        }
    }

    fn reject_namespace(&mut self, offset: u32, keyword: &str) {
        self.reject(
            offset,
            format!(
                "`{keyword}` with runtime code is not erasable TypeScript: use a plain object or \
                 top-level declarations instead (`declare {keyword}` and a {keyword} holding only \
                 types are fine)"
            ),
        );
    }
}

impl<'a> Visit<'a> for Eraser<'_> {
    fn visit_program(&mut self, it: &Program<'a>) {
        self.erase_statements(
            &it.body,
            it.directives.last().map(|directive| directive.span),
        );
    }

    fn visit_function_body(&mut self, it: &FunctionBody<'a>) {
        self.erase_statements(
            &it.statements,
            it.directives.last().map(|directive| directive.span),
        );
    }

    fn visit_statements(&mut self, it: &ArenaVec<'a, Statement<'a>>) {
        self.erase_statements(it, None);
    }

    fn visit_class_elements(&mut self, it: &ArenaVec<'a, ClassElement<'a>>) {
        let mut previous_field: Option<(u32, SeamKind)> = None;
        for member in it {
            if is_type_only_member(member) {
                self.blank(member.span());
                continue;
            }
            self.blank_member_modifiers(member);
            if let Some((before_end, kind)) = previous_field.take() {
                self.seams.push(Seam {
                    before_end,
                    after_start: member.span().start,
                    kind,
                });
            }
            previous_field = match member {
                ClassElement::PropertyDefinition(property) => Some((
                    property.span.end,
                    SeamKind::AfterField {
                        initialized: property.value.is_some(),
                        name_continues: property.value.is_none()
                            && matches!(&property.key, PropertyKey::StaticIdentifier(name)
                                if matches!(name.name.as_str(), "get" | "set" | "static")),
                    },
                )),
                ClassElement::AccessorProperty(accessor) => Some((
                    accessor.span.end,
                    SeamKind::AfterField {
                        initialized: accessor.value.is_some(),
                        name_continues: false,
                    },
                )),
                _ => None,
            };
            self.visit_class_element(member);
        }
    }

    fn visit_class(&mut self, it: &Class<'a>) {
        if it.declare {
            self.blank(it.span);
            return;
        }
        if it.r#abstract {
            let from = it
                .decorators
                .last()
                .map_or(it.span.start, |decorator| decorator.span.end);
            if let Some(class_keyword) = self.find_token(Kind::Class, from, it.body.span.start)
                && let Some(abstract_keyword) =
                    self.token_before(class_keyword.start, Kind::Abstract)
            {
                self.blank(abstract_keyword);
            }
        }
        if let (Some(first), Some(last)) = (it.implements.first(), it.implements.last())
            && let Some(keyword) = self.token_before(first.span.start, Kind::Implements)
        {
            self.edits.blank(keyword.start, last.span.end);
        }
        walk::walk_class(self, it);
    }

    fn visit_ts_class_implements(&mut self, _it: &TSClassImplements<'a>) {}

    fn visit_method_definition(&mut self, it: &MethodDefinition<'a>) {
        if it.optional {
            let to = it
                .value
                .type_parameters
                .as_ref()
                .map_or(it.value.params.span.start, |tp| tp.span.start);
            self.blank_marker(Kind::Question, it.key.span().end, to);
        }
        walk::walk_method_definition(self, it);
    }

    fn visit_property_definition(&mut self, it: &PropertyDefinition<'a>) {
        let to = it
            .type_annotation
            .as_ref()
            .map(|annotation| annotation.span.start)
            .or_else(|| it.value.as_ref().map(|value| value.span().start))
            .unwrap_or(it.span.end);
        if it.optional {
            self.blank_marker(Kind::Question, it.key.span().end, to);
        }
        if it.definite {
            self.blank_marker(Kind::Bang, it.key.span().end, to);
        }
        walk::walk_property_definition(self, it);
    }

    fn visit_accessor_property(&mut self, it: &AccessorProperty<'a>) {
        if it.definite {
            let to = it
                .type_annotation
                .as_ref()
                .map_or(it.span.end, |annotation| annotation.span.start);
            self.blank_marker(Kind::Bang, it.key.span().end, to);
        }
        walk::walk_accessor_property(self, it);
    }

    fn visit_ts_index_signature(&mut self, it: &TSIndexSignature<'a>) {
        self.blank(it.span);
    }

    fn visit_variable_declarator(&mut self, it: &VariableDeclarator<'a>) {
        if it.definite {
            let to = it
                .type_annotation
                .as_ref()
                .map_or(it.span.end, |annotation| annotation.span.start);
            self.blank_marker(Kind::Bang, it.id.span().end, to);
        }
        walk::walk_variable_declarator(self, it);
    }

    fn visit_formal_parameter(&mut self, it: &FormalParameter<'a>) {
        if it.accessibility.is_some() || it.readonly || it.r#override {
            self.reject(it.span.start, PARAMETER_PROPERTY);
            return;
        }
        if it.optional {
            let to = it
                .type_annotation
                .as_ref()
                .map_or(it.span.end, |annotation| annotation.span.start);
            self.blank_marker(Kind::Question, it.pattern.span().end, to);
        }
        walk::walk_formal_parameter(self, it);
    }

    fn visit_ts_this_parameter(&mut self, it: &TSThisParameter<'a>) {
        self.blank_specifier(it.span);
    }

    fn visit_arrow_function_expression(&mut self, it: &ArrowFunctionExpression<'a>) {
        if let Some(type_parameters) = &it.type_parameters {
            let open = self.find_token(Kind::LParen, type_parameters.span.end, it.params.span.end);
            match open {
                // `async <T>⏎(x) => x` or `return <T>⏎(x) => x`: a line break before `(` would
                // end the arrow's `async` (or the `return`), so `(` moves up to `<`.
                Some(open)
                    if has_line_terminator(self.text(type_parameters.span.start, open.start)) =>
                {
                    self.edits.blank(type_parameters.span.start, open.end);
                    self.edits.mark(type_parameters.span.start, b'(');
                }
                _ => self.blank(type_parameters.span),
            }
        }
        self.visit_formal_parameters(&it.params);
        if let Some(return_type) = &it.return_type {
            let close = self
                .tokens
                .get(..self.token_index_at(return_type.span.start))
                .and_then(|before| before.last())
                .filter(|token| token.kind() == Kind::RParen)
                .map(Token::span);
            match close {
                // `(x):⏎ T => x`: `)` and `=>` must share a line, so `)` moves down to the
                // last ASCII byte of the return type's last line.
                Some(close) if has_line_terminator(self.text(close.end, return_type.span.end)) => {
                    // Only whitespace and comments lie between the type and `=>`.
                    let end = self
                        .token_after(return_type.span.end, Kind::Arrow)
                        .map_or(return_type.span.end, |arrow| arrow.start);
                    let last_line_start = self
                        .text(close.start, return_type.span.end)
                        .rfind(['\n', '\r', '\u{2028}', '\u{2029}'])
                        .map_or(close.start, |index| close.start + index as u32 + 1);
                    let is_ascii = |offset: &u32| {
                        self.source
                            .as_bytes()
                            .get(*offset as usize)
                            .is_some_and(u8::is_ascii)
                    };
                    let slot = (last_line_start..return_type.span.end)
                        .rev()
                        .chain(return_type.span.end..end)
                        .find(is_ascii);
                    match slot {
                        Some(slot) => {
                            self.edits.blank(close.start, end);
                            self.edits.mark(slot, b')');
                        }
                        None => self.reject(return_type.span.start, RETURN_TYPE_LINE),
                    }
                }
                _ => self.blank(return_type.span),
            }
        }
        self.visit_arrow_function_body(&it.body);
    }

    fn visit_ts_type_annotation(&mut self, it: &TSTypeAnnotation<'a>) {
        self.blank(it.span);
    }

    fn visit_ts_type_parameter_declaration(&mut self, it: &TSTypeParameterDeclaration<'a>) {
        self.blank(it.span);
    }

    fn visit_ts_type_parameter_instantiation(&mut self, it: &TSTypeParameterInstantiation<'a>) {
        self.blank(it.span);
    }

    fn visit_ts_type(&mut self, it: &TSType<'a>) {
        self.blank(it.span());
    }

    fn visit_ts_as_expression(&mut self, it: &TSAsExpression<'a>) {
        self.visit_expression(&it.expression);
        self.edits.blank(it.expression.span().end, it.span.end);
    }

    fn visit_ts_satisfies_expression(&mut self, it: &TSSatisfiesExpression<'a>) {
        self.visit_expression(&it.expression);
        self.edits.blank(it.expression.span().end, it.span.end);
    }

    fn visit_ts_non_null_expression(&mut self, it: &TSNonNullExpression<'a>) {
        self.visit_expression(&it.expression);
        if let Some(bang) = self.token_before(it.span.end, Kind::Bang) {
            self.blank(bang);
        }
    }

    fn visit_ts_type_assertion(&mut self, it: &TSTypeAssertion<'a>) {
        self.reject(it.span.start, ANGLE_ASSERTION);
    }

    fn visit_import_declaration(&mut self, it: &ImportDeclaration<'a>) {
        for specifier in it.specifiers.iter().flatten() {
            if let ImportDeclarationSpecifier::ImportSpecifier(specifier) = specifier
                && specifier.import_kind.is_type()
            {
                self.blank_specifier(specifier.span);
            }
        }
    }

    fn visit_export_named_declaration(&mut self, it: &ExportNamedDeclaration<'a>) {
        self.visit_export_specifiers(&it.specifiers);
    }

    fn visit_export_from_declaration(&mut self, it: &ExportFromDeclaration<'a>) {
        self.visit_export_specifiers(&it.specifiers);
    }

    fn visit_export_specifier(&mut self, it: &ExportSpecifier<'a>) {
        if it.export_kind.is_type() {
            self.blank_specifier(it.span);
        }
    }

    fn visit_ts_type_alias_declaration(&mut self, it: &TSTypeAliasDeclaration<'a>) {
        self.blank(it.span);
    }

    fn visit_ts_interface_declaration(&mut self, it: &TSInterfaceDeclaration<'a>) {
        self.blank(it.span);
    }

    fn visit_ts_namespace_export_declaration(&mut self, it: &TSNamespaceExportDeclaration<'a>) {
        self.blank(it.span);
    }

    fn visit_ts_enum_declaration(&mut self, it: &TSEnumDeclaration<'a>) {
        if it.declare {
            self.blank(it.span);
        } else {
            self.reject(it.span.start, ENUM);
        }
    }

    fn visit_ts_namespace_declaration(&mut self, it: &TSNamespaceDeclaration<'a>) {
        let keyword = match it.kind {
            TSNamespaceDeclarationKind::Module => "module",
            TSNamespaceDeclarationKind::Namespace => "namespace",
        };
        self.reject_namespace(it.span.start, keyword);
    }

    fn visit_ts_external_module_declaration(&mut self, it: &TSExternalModuleDeclaration<'a>) {
        self.reject_namespace(it.span.start, "module");
    }

    fn visit_ts_global_declaration(&mut self, it: &TSGlobalDeclaration<'a>) {
        self.reject_namespace(it.span.start, "global");
    }

    fn visit_ts_import_equals_declaration(&mut self, it: &TSImportEqualsDeclaration<'a>) {
        self.reject(it.span.start, IMPORT_EQUALS);
    }

    fn visit_ts_export_assignment(&mut self, it: &TSExportAssignment<'a>) {
        self.reject(it.span.start, EXPORT_EQUALS);
    }
}
