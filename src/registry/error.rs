//! Registration errors: each is a JSON-RPC error whose `data.code` is `code()`.

use crate::tool::DefinitionError;

/// Why a registry operation was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// A tool of that name exists in the layer.
    #[error("tool \"{0}\" is already registered in this layer")]
    DuplicateTool(String),
    /// A host tool's name (its role says what for).
    #[error(
        "\"{name}\" is reserved for {purpose} and cannot be registered, reserved or restricted"
    )]
    ReservedName { name: String, purpose: &'static str },
    /// Names must be non-empty.
    #[error("tool name must be a non-empty string")]
    EmptyName,
    /// Agent ids must be non-empty (the global scope is the absence of one).
    #[error("agent id must be a non-empty string")]
    EmptyAgent,
    /// The definition itself is malformed (output, input or timeout declarations).
    #[error(transparent)]
    Definition(#[from] DefinitionError),
    /// The agent scope is not open.
    #[error("unknown agent \"{0}\" (open it with agents/open first)")]
    UnknownAgent(String),
    /// The agent scope is open already.
    #[error("agent \"{0}\" is already open")]
    AgentExists(String),
    /// No such registration id.
    #[error("unknown registration \"{0}\"")]
    UnknownRegistration(String),
    /// `restrict` or `presentAs` from the global scope.
    #[error("{0} needs an agent scope: the process-wide setting is the host config")]
    NeedsAgent(&'static str),
    /// `restrict` without names.
    #[error("restrict needs exactly one non-empty allow or deny list")]
    EmptyFilter,
    /// `restrict` naming a name the agent does not inherit from any layer.
    #[error(
        "restrict names unknown tool \"{0}\" (register or reserve it globally or in an ancestor scope first)"
    )]
    UnknownName(String),
    /// `restrict` naming a tool local to the agent.
    #[error(
        "restrict names \"{0}\", which is local to agent \"{1}\": restrictions mask inherited tools only"
    )]
    LocalName(String, String),
    /// A second `presentAs` in one scope.
    #[error("agent \"{0}\" already declared a presentation")]
    PresentationDeclared(String),
    /// `install_host_tool` with a definition whose role is not a host role.
    #[error("tool \"{0}\" is not a host tool: only a definition with a host role is installed")]
    NotAHostTool(String),
}

impl RegistryError {
    /// The `data.code` string.
    pub fn code(&self) -> &'static str {
        match self {
            RegistryError::DuplicateTool(_) => "DUPLICATE_TOOL",
            RegistryError::ReservedName { .. } => "RESERVED_NAME",
            RegistryError::EmptyName | RegistryError::EmptyAgent => "INVALID_NAME",
            RegistryError::Definition(error) => error.code(),
            RegistryError::UnknownAgent(_) => "UNKNOWN_AGENT",
            RegistryError::AgentExists(_) => "AGENT_EXISTS",
            RegistryError::UnknownRegistration(_) => "UNKNOWN_REGISTRATION",
            RegistryError::NeedsAgent(_) => "NEEDS_AGENT",
            RegistryError::EmptyFilter => "EMPTY_FILTER",
            RegistryError::UnknownName(_) => "UNKNOWN_NAME",
            RegistryError::LocalName(..) => "LOCAL_NAME",
            RegistryError::PresentationDeclared(_) => "PRESENTATION_DECLARED",
            RegistryError::NotAHostTool(_) => "NOT_A_HOST_TOOL",
        }
    }
}
