//! Helpers shared by the suites: the wire test client (`wire`), the agent-scope scenario
//! player (`agents`) and the helpers each family builds on them or on a library `ToolRuntime`.

pub mod agents;
pub mod builtins;
pub mod catalog;
pub mod code;
pub mod discovery;
pub mod http;
pub mod mcp;
pub mod pipeline;
pub mod policy;
pub mod raw;
pub mod runtime;
pub mod sandbox;
pub mod spill;
pub mod wire;
