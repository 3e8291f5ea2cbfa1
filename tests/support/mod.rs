//! Helpers shared by the suites: the wire test client (`wire`) and the helpers each family
//! builds on it or on a library `ToolRuntime`.

pub mod builtins;
pub mod code;
pub mod mcp;
pub mod pipeline;
pub mod policy;
pub mod runtime;
pub mod sandbox;
pub mod spill;
pub mod wire;
