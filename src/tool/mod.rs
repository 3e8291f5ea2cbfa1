//! What a tool is: its definition, one execution of it, and the result it produces.

mod cards;
mod definition;
mod error;
mod execution;
mod progress;
mod result;
mod role;
mod signal;

pub use cards::*;
pub use definition::*;
pub use dsh_tools_protocol::{ContentBlock, ContextContent, ContextMessage, ContextRole};
pub use error::DefinitionError;
pub use execution::*;
pub use progress::*;
pub use result::*;
pub use role::{HostRole, Presence, ToolRole};
pub use signal::{Signal, SignalToken};
