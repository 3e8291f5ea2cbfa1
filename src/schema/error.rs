//! The error every schema operation returns: which spec or schema node, and what is wrong.

/// A schema the DSL or the enforced subset does not accept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct SchemaError {
    /// Where in the spec, rooted at the caller's name (`parameters.config.properties.host`).
    pub path: String,
    pub message: String,
}
