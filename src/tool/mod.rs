//! What a tool is: its definition, one execution of it, and the result it produces.

mod definition;
mod execution;
mod presenter;
mod result;
mod signal;

pub use definition::*;
pub use dsh_tools_protocol::{ContentBlock, ContextContent, ContextMessage, ContextRole};
pub use execution::*;
pub use presenter::*;
pub use result::*;
pub use signal::Signal;
