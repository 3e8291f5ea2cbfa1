//! Which whole statements and class members are type-only, so they are blanked entirely.

use oxc::ast::ast::{
    AccessorPropertyType, ClassElement, Declaration, ExportDefaultDeclarationKind,
    MethodDefinitionType, PropertyDefinitionType, Statement, TSModuleBlock, TSNamespaceDeclaration,
    TSNamespaceDeclarationBody,
};

/// A node still to be checked; namespaces nest to any depth, so the check keeps its own
/// work stack instead of recursing.
enum Pending<'r, 'a> {
    Statement(&'r Statement<'a>),
    Declaration(&'r Declaration<'a>),
    Namespace(&'r TSNamespaceDeclaration<'a>),
    Block(&'r TSModuleBlock<'a>),
}

/// True when `statement` produces no JavaScript at all: type declarations, `declare ...`,
/// overload signatures, type-only imports and exports, `declare enum`, and namespaces
/// (`namespace`, `module`, `global`) that are `declare`d or hold only such statements.
pub(super) fn is_type_only_statement(statement: &Statement<'_>) -> bool {
    let mut pending = vec![Pending::Statement(statement)];
    while let Some(item) = pending.pop() {
        let type_only = match item {
            Pending::Statement(statement) => match statement {
                Statement::ImportDeclaration(import) => import.import_kind.is_type(),
                Statement::ExportNamedDeclaration(export) => export.export_kind.is_type(),
                Statement::ExportFromDeclaration(export) => export.export_kind.is_type(),
                Statement::ExportAllDeclaration(export) => export.export_kind.is_type(),
                Statement::ExportDeclaration(export) => {
                    pending.push(Pending::Declaration(&export.declaration));
                    true
                }
                Statement::ExportDefaultDeclaration(export) => match &export.declaration {
                    ExportDefaultDeclarationKind::TSInterfaceDeclaration(_) => true,
                    ExportDefaultDeclarationKind::FunctionDeclaration(function) => {
                        function.body.is_none()
                    }
                    _ => false,
                },
                Statement::TSNamespaceExportDeclaration(_) => true,
                _ => match statement.as_declaration() {
                    Some(declaration) => {
                        pending.push(Pending::Declaration(declaration));
                        true
                    }
                    None => false,
                },
            },
            Pending::Declaration(declaration) => match declaration {
                Declaration::VariableDeclaration(variable) => variable.declare,
                Declaration::FunctionDeclaration(function) => {
                    function.declare || function.body.is_none()
                }
                Declaration::ClassDeclaration(class) => class.declare,
                Declaration::TSTypeAliasDeclaration(_) | Declaration::TSInterfaceDeclaration(_) => {
                    true
                }
                Declaration::TSEnumDeclaration(declaration) => declaration.declare,
                Declaration::TSExternalModuleDeclaration(module) => {
                    if !module.declare
                        && let Some(body) = &module.body
                    {
                        pending.push(Pending::Block(body));
                    }
                    true
                }
                Declaration::TSNamespaceDeclaration(namespace) => {
                    pending.push(Pending::Namespace(namespace));
                    true
                }
                Declaration::TSGlobalDeclaration(global) => {
                    if !global.declare {
                        pending.push(Pending::Block(&global.body));
                    }
                    true
                }
                Declaration::TSImportEqualsDeclaration(import) => import.import_kind.is_type(),
            },
            Pending::Namespace(namespace) => {
                if !namespace.declare {
                    match &namespace.body {
                        TSNamespaceDeclarationBody::TSNamespaceDeclaration(inner) => {
                            pending.push(Pending::Namespace(inner));
                        }
                        TSNamespaceDeclarationBody::TSModuleBlock(block) => {
                            pending.push(Pending::Block(block));
                        }
                    }
                }
                true
            }
            Pending::Block(block) => {
                pending.extend(
                    block
                        .body
                        .iter()
                        .filter(|statement| !matches!(statement, Statement::EmptyStatement(_)))
                        .map(Pending::Statement),
                );
                true
            }
        };
        if !type_only {
            return false;
        }
    }
    true
}

/// True when a class member produces no JavaScript: index signatures, `declare` and
/// `abstract` members, and method overload signatures (methods without a body).
pub(super) fn is_type_only_member(member: &ClassElement<'_>) -> bool {
    match member {
        ClassElement::TSIndexSignature(_) => true,
        ClassElement::MethodDefinition(method) => {
            method.r#type == MethodDefinitionType::TSAbstractMethodDefinition
                || method.value.body.is_none()
        }
        ClassElement::PropertyDefinition(property) => {
            property.declare
                || property.r#type == PropertyDefinitionType::TSAbstractPropertyDefinition
        }
        ClassElement::AccessorProperty(accessor) => {
            accessor.r#type == AccessorPropertyType::TSAbstractAccessorProperty
        }
        ClassElement::StaticBlock(_) => false,
    }
}
