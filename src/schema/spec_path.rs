//! Paths of nodes visited while walking a spec or schema with an explicit stack: each node
//! records only its parent and last step, and a full path is rendered only for an error.

use crate::json::{Segment, render_path};

use super::error::SchemaError;

/// One node's place: `None` is the root.
pub(crate) type PathId = Option<usize>;

/// Parent-linked steps of every node visited so far.
#[derive(Default)]
pub(crate) struct SpecPaths<'a> {
    steps: Vec<(PathId, Segment<'a>)>,
}

impl<'a> SpecPaths<'a> {
    pub(crate) fn child(&mut self, parent: PathId, step: Segment<'a>) -> PathId {
        self.steps.push((parent, step));
        Some(self.steps.len() - 1)
    }

    pub(crate) fn render(&self, root: &str, at: PathId) -> String {
        let mut segments = Vec::new();
        let mut cursor = at;
        while let Some((parent, step)) = cursor.and_then(|index| self.steps.get(index)) {
            segments.push(*step);
            cursor = *parent;
        }
        segments.reverse();
        render_path(root, &segments)
    }

    pub(crate) fn error(&self, root: &str, at: PathId, message: impl Into<String>) -> SchemaError {
        SchemaError {
            path: self.render(root, at),
            message: message.into(),
        }
    }
}
