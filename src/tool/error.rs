//! Why a tool definition cannot be built: the part of registration errors the tool layer
//! can tell on its own (the registry wraps these in `RegistryError::Definition`).

/// A malformed tool definition.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DefinitionError {
    /// No output declaration.
    #[error(
        "tool definition needs an output declaration: output.schema (DSL) or output.jsonSchema (raw)"
    )]
    MissingOutput,
    /// Both output forms given.
    #[error("output declaration takes exactly one of output.schema or output.jsonSchema")]
    AmbiguousOutput,
    /// Both input forms given.
    #[error("tool definition takes at most one of parameters (DSL) or inputSchema (raw)")]
    AmbiguousInput,
    /// A schema outside the supported DSL or subset.
    #[error("unsupported schema: {0}")]
    UnsupportedSchema(String),
    /// A non-positive or non-finite `timeoutMs`.
    #[error("timeoutMs must be a positive, finite number of milliseconds (got {0})")]
    InvalidTimeout(String),
}

impl DefinitionError {
    /// The `data.code` string.
    pub fn code(&self) -> &'static str {
        match self {
            DefinitionError::MissingOutput => "MISSING_OUTPUT",
            DefinitionError::AmbiguousOutput | DefinitionError::AmbiguousInput => {
                "INVALID_DEFINITION"
            }
            DefinitionError::UnsupportedSchema(_) => "UNSUPPORTED_SCHEMA",
            DefinitionError::InvalidTimeout(_) => "INVALID_TIMEOUT",
        }
    }
}
