//! dsh-tools: a tool registry and execution pipeline for LLM agents, served over JSON-RPC
//! on stdio and embeddable as a library ([`ToolRuntime`]).
//!
//! Modules in reading order (each knows only the ones listed after it; see ARCHITECTURE.md):
//! - [`rpc`]: the method table, lifecycle and wire conversions over [`transport`];
//! - [`builtins`]: the opt-in file and bash tools; [`present`]: UI cards of tools' calls;
//! - [`mcp`]: MCP servers ingested as tools (rmcp client) and the registry served over MCP;
//! - [`transport`]: framing, the single writer task, host→client requests;
//! - [`pipeline`]: one execution from arguments to final result, hooks, scheduling;
//! - [`policy`]: permission rules (Claude Code syntax), retry and metrics wrappers;
//! - [`prompt`]: prompt assembly per scope (native definitions, Code Mode sections);
//! - [`registry`]: layers, shadowing, restrictions, presentation, resolution;
//! - [`tool`]: definitions, executions and results;
//! - [`code_mode`]: the `run_code` tool and its binding bridge over [`runtime`];
//! - [`runtime`]: deno_core isolates, budgets and type stripping (the only deno_core user);
//! - [`codegen`]: the TypeScript SDK text of Code Mode;
//! - [`schema`] and [`json`]: the schema DSL, the enforced subset, validation, lossless JSON;
//! - [`config`]: host configuration.

pub mod builtins;
pub mod code_mode;
pub mod codegen;
pub mod config;
pub mod json;
pub mod mcp;
pub mod pipeline;
pub mod policy;
pub mod present;
pub mod prompt;
pub mod registry;
pub mod rpc;
pub mod runtime;
pub mod schema;
pub mod tool;
pub mod transport;

pub use pipeline::ToolRuntime;
pub use tool::{ToolDefinition, ToolExecutionInput, ToolExecutionResult};
