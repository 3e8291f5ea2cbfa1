//! The walk over brush's AST. Every enum and struct is destructured in full (no `_` arm,
//! no `..`), so a construct this walk does not handle is a compile error, not a hole.

use super::Walker;
use super::word::W;
use brush_parser::ast::{
    AndOr, AndOrList, ArithmeticCommand, ArithmeticForClauseCommand, Assignment, AssignmentName,
    AssignmentValue, BinaryPredicate, BraceGroupCommand, CaseClauseCommand, CaseItem, Command,
    CommandPrefixOrSuffixItem, CompoundCommand, CompoundList, CompoundListItem, CoprocessCommand,
    DoGroupCommand, ElseClause, ExtendedTestExpr, ExtendedTestExprCommand, ForClauseCommand,
    FunctionBody, FunctionDefinition, IfClauseCommand, IoFileRedirectKind, IoFileRedirectTarget,
    IoHereDocument, IoRedirect, Pipeline, ProcessSubstitutionKind, Program, RedirectList,
    SimpleCommand, SubshellCommand, UnaryPredicate, WhileOrUntilClauseCommand,
};

type Inside = Option<String>;

impl Walker {
    pub(super) fn program(&mut self, program: &Program, inside: &Inside) {
        let Program { complete_commands } = program;
        for list in complete_commands {
            self.list(list, inside);
        }
    }

    fn list(&mut self, list: &CompoundList, inside: &Inside) {
        let CompoundList(items) = list;
        for CompoundListItem(and_or, _separator) in items {
            let AndOrList { first, additional } = and_or;
            self.pipeline(first, inside);
            for next in additional {
                match next {
                    AndOr::And(pipeline) | AndOr::Or(pipeline) => self.pipeline(pipeline, inside),
                }
            }
        }
    }

    fn pipeline(&mut self, pipeline: &Pipeline, inside: &Inside) {
        let Pipeline {
            timed: _,
            bang: _,
            seq,
        } = pipeline;
        for command in seq {
            self.command_node(command, inside);
        }
    }

    fn command_node(&mut self, command: &Command, inside: &Inside) {
        match command {
            Command::Simple(simple) => self.simple(simple, inside),
            Command::Compound(compound, redirects) => {
                self.compound(compound, inside);
                self.redirect_list(redirects, inside);
            }
            Command::Function(FunctionDefinition { fname, body }) => {
                let FunctionBody(compound, redirects) = body;
                let inside = Some(format!("function {}", fname.value));
                self.compound(compound, &inside);
                self.redirect_list(redirects, &inside);
            }
            Command::ExtendedTest(ExtendedTestExprCommand { expr, loc: _ }, redirects) => {
                self.test_expr(expr, inside);
                self.redirect_list(redirects, inside);
            }
        }
    }

    fn redirect_list(&mut self, redirects: &Option<RedirectList>, inside: &Inside) {
        if let Some(RedirectList(redirects)) = redirects {
            for redirect in redirects {
                self.redirect(redirect, inside);
            }
        }
    }

    fn do_group(&mut self, group: &DoGroupCommand, inside: &Inside) {
        let DoGroupCommand { list, loc: _ } = group;
        self.list(list, inside);
    }

    fn subshell(&mut self, subshell: &SubshellCommand, inside: &Inside) {
        let SubshellCommand { list, loc: _ } = subshell;
        self.list(list, inside);
    }

    fn compound(&mut self, compound: &CompoundCommand, inside: &Inside) {
        match compound {
            CompoundCommand::Arithmetic(ArithmeticCommand { expr, loc: _ }) => {
                self.arithmetic_text(&expr.value, inside)
            }
            CompoundCommand::ArithmeticForClause(ArithmeticForClauseCommand {
                initializer,
                condition,
                updater,
                body,
                loc: _,
            }) => {
                for expr in [initializer, condition, updater].into_iter().flatten() {
                    self.arithmetic_text(&expr.value, inside);
                }
                self.do_group(body, inside);
            }
            CompoundCommand::BraceGroup(BraceGroupCommand { list, loc: _ }) => {
                self.list(list, inside)
            }
            CompoundCommand::Subshell(subshell) => self.subshell(subshell, inside),
            CompoundCommand::ForClause(ForClauseCommand {
                variable_name: _,
                values,
                body,
                loc: _,
            }) => {
                for value in values.iter().flatten() {
                    self.word(&value.value, inside);
                }
                self.do_group(body, inside);
            }
            CompoundCommand::CaseClause(CaseClauseCommand {
                value,
                cases,
                loc: _,
            }) => {
                self.word(&value.value, inside);
                for CaseItem {
                    patterns,
                    cmd,
                    post_action: _,
                    loc: _,
                } in cases
                {
                    for pattern in patterns {
                        self.word(&pattern.value, inside);
                    }
                    if let Some(cmd) = cmd {
                        self.list(cmd, inside);
                    }
                }
            }
            CompoundCommand::IfClause(IfClauseCommand {
                condition,
                then,
                elses,
                loc: _,
            }) => {
                self.list(condition, inside);
                self.list(then, inside);
                for ElseClause { condition, body } in elses.iter().flatten() {
                    if let Some(condition) = condition {
                        self.list(condition, inside);
                    }
                    self.list(body, inside);
                }
            }
            CompoundCommand::WhileClause(WhileOrUntilClauseCommand(condition, body, _))
            | CompoundCommand::UntilClause(WhileOrUntilClauseCommand(condition, body, _)) => {
                self.list(condition, inside);
                self.do_group(body, inside);
            }
            CompoundCommand::Coprocess(CoprocessCommand {
                name: _,
                body,
                loc: _,
            }) => self.command_node(body, inside),
        }
    }

    fn test_expr(&mut self, expr: &ExtendedTestExpr, inside: &Inside) {
        match expr {
            ExtendedTestExpr::And(left, right) | ExtendedTestExpr::Or(left, right) => {
                self.test_expr(left, inside);
                self.test_expr(right, inside);
            }
            ExtendedTestExpr::Not(inner) | ExtendedTestExpr::Parenthesized(inner) => {
                self.test_expr(inner, inside)
            }
            ExtendedTestExpr::UnaryTest(predicate, operand) => {
                if matches!(predicate, UnaryPredicate::ShellVariableIsSetAndAssigned) {
                    // `-v 'a[$(cmd)]'` evaluates the subscript.
                    self.arithmetic = true;
                }
                self.word(&operand.value, inside);
            }
            ExtendedTestExpr::BinaryTest(predicate, left, right) => {
                if matches!(
                    predicate,
                    BinaryPredicate::ArithmeticEqualTo
                        | BinaryPredicate::ArithmeticNotEqualTo
                        | BinaryPredicate::ArithmeticLessThan
                        | BinaryPredicate::ArithmeticLessThanOrEqualTo
                        | BinaryPredicate::ArithmeticGreaterThan
                        | BinaryPredicate::ArithmeticGreaterThanOrEqualTo
                ) {
                    self.arithmetic = true;
                }
                self.word(&left.value, inside);
                self.word(&right.value, inside);
            }
        }
    }

    fn simple(&mut self, simple: &SimpleCommand, inside: &Inside) {
        let SimpleCommand {
            prefix,
            word_or_name,
            suffix,
        } = simple;
        let mut words: Vec<W> = Vec::new();
        // Environment assignments in front of the command: (name, source text).
        let mut assignments: Vec<(String, String)> = Vec::new();
        let prefix_items = prefix.iter().flat_map(|p| p.0.iter());
        for item in prefix_items {
            self.item(item, inside, &mut words, &mut assignments);
        }
        if let Some(name) = word_or_name {
            words.push(self.word(&name.value, inside));
        }
        for item in suffix.iter().flat_map(|s| s.0.iter()) {
            self.item(item, inside, &mut words, &mut assignments);
        }
        for (name, text) in &assignments {
            if super::env::chooses_program(name) {
                let command: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
                let text = format!("{text} {}", command.join(" "));
                self.unreadable(
                    text.trim_end(),
                    format!("the environment variable {name} chooses what runs"),
                );
            }
        }
        if !words.is_empty() {
            self.command(words, inside);
        }
    }

    fn item(
        &mut self,
        item: &CommandPrefixOrSuffixItem,
        inside: &Inside,
        words: &mut Vec<W>,
        assignments: &mut Vec<(String, String)>,
    ) {
        match item {
            CommandPrefixOrSuffixItem::IoRedirect(redirect) => self.redirect(redirect, inside),
            CommandPrefixOrSuffixItem::Word(word) => words.push(self.word(&word.value, inside)),
            CommandPrefixOrSuffixItem::AssignmentWord(assignment, word) => {
                if words.is_empty() {
                    let name = self.assignment(assignment, inside);
                    assignments.push((name, word.value.clone()));
                } else {
                    // `export A=$(cmd)`: an argument that holds an assignment.
                    words.push(self.word(&word.value, inside));
                }
            }
            CommandPrefixOrSuffixItem::ProcessSubstitution(kind, subshell) => {
                let (shown, label) = match kind {
                    ProcessSubstitutionKind::Read => ("<", "<(...)"),
                    ProcessSubstitutionKind::Write => (">", ">(...)"),
                };
                self.depth += 1;
                self.subshell(subshell, &Some(label.to_string()));
                self.depth -= 1;
                words.push(W {
                    text: format!("{shown}{subshell}"),
                    literal: false,
                });
            }
        }
    }

    /// Walks an assignment's value and subscript; returns the variable's name.
    fn assignment(&mut self, assignment: &Assignment, inside: &Inside) -> String {
        let Assignment {
            name,
            value,
            append: _,
            loc: _,
        } = assignment;
        let name = match name {
            AssignmentName::VariableName(name) => name.clone(),
            AssignmentName::ArrayElementName(name, index) => {
                self.arithmetic_text(index, inside);
                name.clone()
            }
        };
        match value {
            AssignmentValue::Scalar(word) => {
                self.word(&word.value, inside);
            }
            AssignmentValue::Array(elements) => {
                for (index, word) in elements {
                    if let Some(index) = index {
                        self.word(&index.value, inside);
                    }
                    self.word(&word.value, inside);
                }
            }
        }
        name
    }

    pub(super) fn redirect(&mut self, redirect: &IoRedirect, inside: &Inside) {
        match redirect {
            IoRedirect::File(_fd, kind, target) => match target {
                IoFileRedirectTarget::Filename(word) => {
                    let path = self.word(&word.value, inside);
                    match kind {
                        IoFileRedirectKind::Write
                        | IoFileRedirectKind::Append
                        | IoFileRedirectKind::Clobber
                        | IoFileRedirectKind::ReadAndWrite
                        | IoFileRedirectKind::DuplicateOutput => self.write(path, inside),
                        IoFileRedirectKind::Read | IoFileRedirectKind::DuplicateInput => {}
                    }
                }
                IoFileRedirectTarget::Fd(_) => {}
                IoFileRedirectTarget::ProcessSubstitution(kind, subshell) => {
                    let label = match kind {
                        ProcessSubstitutionKind::Read => "<(...)",
                        ProcessSubstitutionKind::Write => ">(...)",
                    };
                    self.depth += 1;
                    self.subshell(subshell, &Some(label.to_string()));
                    self.depth -= 1;
                }
                IoFileRedirectTarget::Duplicate(word) => {
                    let target = self.word(&word.value, inside);
                    let is_fd = target.literal
                        && target
                            .text
                            .trim_end_matches('-')
                            .bytes()
                            .all(|b| b.is_ascii_digit());
                    match kind {
                        // `>&file` writes `file`; `>&2`, `>&-` duplicate or close.
                        IoFileRedirectKind::DuplicateOutput if !is_fd => self.write(target, inside),
                        IoFileRedirectKind::DuplicateOutput
                        | IoFileRedirectKind::Read
                        | IoFileRedirectKind::Write
                        | IoFileRedirectKind::Append
                        | IoFileRedirectKind::ReadAndWrite
                        | IoFileRedirectKind::Clobber
                        | IoFileRedirectKind::DuplicateInput => {}
                    }
                }
            },
            IoRedirect::HereDocument(
                _fd,
                IoHereDocument {
                    remove_tabs: _,
                    requires_expansion,
                    here_end: _,
                    doc,
                },
            ) => {
                if *requires_expansion {
                    self.heredoc(&doc.value);
                } else if doc.value.contains("$(") || doc.value.contains('`') {
                    self.quoted_code = true;
                }
            }
            IoRedirect::HereString(_fd, word) => {
                self.word(&word.value, inside);
            }
            IoRedirect::OutputAndError(word, _append) => {
                let path = self.word(&word.value, inside);
                self.write(path, inside);
            }
        }
    }

    /// A file the command would write.
    pub(super) fn write(&mut self, path: W, inside: &Inside) {
        if !path.literal || path.text.contains(['*', '?', '[', '{']) {
            return self.unreadable(
                format!("> {}", path.text),
                "a write to a path computed at run time",
            );
        }
        if matches!(
            path.text.as_str(),
            "/dev/null" | "/dev/stdout" | "/dev/stderr"
        ) {
            return;
        }
        self.parts.push(super::Part::Write {
            path: path.text,
            inside: inside.clone(),
        });
    }
}
