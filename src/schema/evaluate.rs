//! The validation machine: an explicit task stack over (schema node, value) pairs, with
//! `oneOf` branches evaluated as nested pass/fail scopes on the same stack, so neither
//! schema nor value depth touches the call stack.

use serde_json::Value;

use crate::json::json_equal;

use super::validator::Node;
use super::work_stack::WorkStack;

/// Tasks kept inline before the stack spills to the heap: enough for typical arguments.
const INLINE_TASKS: usize = 16;

/// A failure, pointing at the offending value or, for property failures, at the object.
/// Paths are worked out afterwards, only when something failed.
pub(super) enum Found<'v, 's> {
    Missing { object: &'v Value, key: &'s str },
    WrongType { value: &'v Value, node: usize },
    NotInEnum { value: &'v Value, node: usize },
    NotConst { value: &'v Value, node: usize },
    Undeclared { object: &'v Value, key: &'v str },
    OneOf { value: &'v Value, matched: usize },
}

impl Found<'_, '_> {
    /// The value whose path the violation names (before `key`).
    pub(super) fn target(&self) -> *const Value {
        match self {
            Found::Missing { object, .. } | Found::Undeclared { object, .. } => *object,
            Found::WrongType { value, .. }
            | Found::NotInEnum { value, .. }
            | Found::NotConst { value, .. }
            | Found::OneOf { value, .. } => *value,
        }
    }

    /// The member key appended to the target's path.
    pub(super) fn key(&self) -> Option<&str> {
        match self {
            Found::Missing { key, .. } => Some(key),
            Found::Undeclared { key, .. } => Some(key),
            Found::WrongType { .. }
            | Found::NotInEnum { .. }
            | Found::NotConst { .. }
            | Found::OneOf { .. } => None,
        }
    }
}

#[derive(Clone, Copy)]
enum Task<'v> {
    Check {
        node: usize,
        value: &'v Value,
    },
    /// The next declared property of an object to look at, then its undeclared keys.
    Members {
        node: usize,
        object: &'v Value,
        next: usize,
    },
    /// The next array item to check against the `items` node.
    Items {
        node: usize,
        items: &'v [Value],
        next: usize,
    },
    OneOf(Choice<'v>),
}

/// A `oneOf` in progress. While a branch runs, the frame is the scope that a failure
/// inside the branch unwinds to.
#[derive(Clone, Copy)]
struct Choice<'v> {
    node: usize,
    value: &'v Value,
    next: usize,
    matched: usize,
    running: bool,
    /// The scope that encloses this one.
    outer: Option<usize>,
}

/// What the stack loop does after a failure.
enum Flow {
    Continue,
    /// A branch failed and its tasks are gone: stop working on the current task.
    BranchFailed,
    /// Pass/fail mode at the root: the whole value is invalid.
    Invalid,
}

pub(super) struct Evaluation<'v, 's, 'f> {
    nodes: &'s [Node],
    tasks: WorkStack<Task<'v>, INLINE_TASKS>,
    /// Stack index of the innermost running `oneOf` frame.
    scope: Option<usize>,
    /// Where root-level failures are collected; `None` means pass/fail mode.
    found: Option<&'f mut Vec<Found<'v, 's>>>,
}

impl<'v, 's, 'f> Evaluation<'v, 's, 'f> {
    pub(super) fn new(nodes: &'s [Node], found: Option<&'f mut Vec<Found<'v, 's>>>) -> Self {
        Evaluation {
            nodes,
            tasks: WorkStack::new(),
            scope: None,
            found,
        }
    }

    /// Validates `value` against node 0; false only in pass/fail mode on a failure.
    pub(super) fn run(mut self, value: &'v Value) -> bool {
        self.tasks.push(Task::Check { node: 0, value });
        while let Some(task) = self.tasks.pop() {
            let flow = match task {
                Task::Check { node, value } => self.check(node, value),
                Task::Members { node, object, next } => self.members(node, object, next),
                Task::Items { node, items, next } => {
                    if let Some(item) = items.get(next) {
                        self.tasks.push(Task::Items {
                            node,
                            items,
                            next: next + 1,
                        });
                        self.tasks.push(Task::Check { node, value: item });
                    }
                    Flow::Continue
                }
                Task::OneOf(choice) => self.choose(choice),
            };
            if let Flow::Invalid = flow {
                return false;
            }
        }
        true
    }

    /// The node's own keywords, then its members, items and `oneOf` in that order.
    fn check(&mut self, id: usize, value: &'v Value) -> Flow {
        let Some(node) = self.nodes.get(id) else {
            return Flow::Continue;
        };
        if let Some(types) = &node.types
            && !types.iter().any(|kind| kind.admits(value))
        {
            return self.fail(Found::WrongType { value, node: id });
        }
        if let Some(Value::Array(allowed)) = &node.allowed
            && !allowed.iter().any(|member| json_equal(member, value))
        {
            return self.fail(Found::NotInEnum { value, node: id });
        }
        if let Some(constant) = &node.constant
            && !json_equal(constant, value)
        {
            return self.fail(Found::NotConst { value, node: id });
        }
        // Pushed first, so it runs after the members or items.
        if !node.branches.is_empty() {
            self.tasks.push(Task::OneOf(Choice {
                node: id,
                value,
                next: 0,
                matched: 0,
                running: false,
                outer: None,
            }));
        }
        match value {
            Value::Object(_) if node.inspects_members() => self.tasks.push(Task::Members {
                node: id,
                object: value,
                next: 0,
            }),
            Value::Array(items) => {
                if let Some(items_node) = node.items {
                    self.tasks.push(Task::Items {
                        node: items_node,
                        items,
                        next: 0,
                    });
                }
            }
            _ => {}
        }
        Flow::Continue
    }

    /// Declared properties in order (missing, or checked against their schema), then keys a
    /// closed object does not declare, in the value's order.
    fn members(&mut self, id: usize, object: &'v Value, next: usize) -> Flow {
        let (Some(node), Value::Object(members)) = (self.nodes.get(id), object) else {
            return Flow::Continue;
        };
        if let Some(property) = node.properties.get(next) {
            self.tasks.push(Task::Members {
                node: id,
                object,
                next: next + 1,
            });
            match members.get(&property.name) {
                Some(member) => {
                    if let Some(child) = property.node {
                        self.tasks.push(Task::Check {
                            node: child,
                            value: member,
                        });
                    }
                }
                None if property.required => {
                    return self.fail(Found::Missing {
                        object,
                        key: &property.name,
                    });
                }
                None => {}
            }
            return Flow::Continue;
        }
        if node.closed {
            for key in members.keys() {
                if !node.declares(key) {
                    match self.fail(Found::Undeclared { object, key }) {
                        Flow::Continue => {}
                        stop @ (Flow::BranchFailed | Flow::Invalid) => return stop,
                    }
                }
            }
        }
        Flow::Continue
    }

    /// Reached when a `oneOf` starts or when its running branch finished without failing.
    fn choose(&mut self, mut choice: Choice<'v>) -> Flow {
        if choice.running {
            choice.matched += 1;
            choice.running = false;
            self.scope = choice.outer;
        }
        let branch = self
            .nodes
            .get(choice.node)
            .and_then(|node| node.branches.get(choice.next))
            .copied();
        match branch {
            Some(branch) => {
                choice.next += 1;
                choice.running = true;
                choice.outer = self.scope;
                self.scope = Some(self.tasks.len());
                self.tasks.push(Task::OneOf(choice));
                self.tasks.push(Task::Check {
                    node: branch,
                    value: choice.value,
                });
                Flow::Continue
            }
            None if choice.matched == 1 => Flow::Continue,
            None => self.fail(Found::OneOf {
                value: choice.value,
                matched: choice.matched,
            }),
        }
    }

    /// Inside a branch, unwinds to its `oneOf` frame and marks the branch failed; at the
    /// root, records the failure or ends pass/fail mode.
    fn fail(&mut self, found: Found<'v, 's>) -> Flow {
        match self.scope {
            Some(index) => {
                self.tasks.truncate(index + 1);
                self.scope = match self.tasks.get_mut(index) {
                    Some(Task::OneOf(choice)) => {
                        choice.running = false;
                        choice.outer
                    }
                    _ => None,
                };
                Flow::BranchFailed
            }
            None => match &mut self.found {
                Some(list) => {
                    list.push(found);
                    Flow::Continue
                }
                None => Flow::Invalid,
            },
        }
    }
}
