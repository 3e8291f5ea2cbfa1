//! Commands of the binary besides `serve`: run a program, print the SDK, serve MCP,
//! check the sandbox, generate protocol files; and the orderly-shutdown signal they share.

mod elicit;
mod live;
mod mcp;
mod run;
pub mod sandbox;
mod terminate;

pub use elicit::ElicitPolicy;
pub use mcp::{HttpAccess, HttpLimitArgs, http_options, serve_mcp};
pub use run::{run_program, sdk_text};
pub use terminate::{EofOnCancel, on_terminate};
