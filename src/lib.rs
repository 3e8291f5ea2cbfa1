//! dsh-tools: a tool registry and execution pipeline for LLM agents, served over JSON-RPC
//! on stdio and embeddable as a library ([`ToolRuntime`]).
//!
//! The modules form layers: each may import only the layers below it. ARCHITECTURE.md
//! holds the one layer table (and the data flow); `tests/suite/tidy.rs` fails on any
//! import that goes against it.

pub mod builtins;
pub mod cards;
pub mod code_mode;
pub mod codegen;
pub mod config;
pub mod discovery;
pub mod egress;
pub mod frontends;
pub mod host;
pub mod json;
pub mod mcp;
pub mod pipeline;
pub mod policy;
pub mod process;
pub mod prompt;
pub mod providers;
pub mod registry;
pub mod runtime;
pub mod schema;
pub mod spill;
pub mod tokens;
pub mod tool;
pub mod transport;

pub use pipeline::ToolRuntime;
pub use tool::{ToolDefinition, ToolExecutionInput, ToolExecutionResult};
