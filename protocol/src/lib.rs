//! Wire types of the dsh-tools JSON-RPC protocol (see `protocol/README.md`).
//!
//! These are the only `Serialize` types that cross stdio. Every type derives
//! `schemars::JsonSchema` and `ts_rs::TS`, so `generated/` can carry a JSON Schema and a
//! TypeScript declaration file for front ends; a test in the main crate fails when the
//! checked-in files are stale.

pub mod client;
pub mod config;
pub mod content;
pub mod exec;
pub mod execution;
pub mod generate;

pub mod lifecycle;
pub mod mcp;
pub mod network;
pub mod permissions;
pub mod providers;
pub mod registry;
pub mod sandbox;

pub use client::*;
pub use config::*;
pub use content::*;
pub use exec::*;
pub use execution::*;
pub use lifecycle::*;
pub use mcp::*;
pub use network::*;
pub use permissions::*;
pub use providers::*;
pub use registry::*;
pub use sandbox::*;

/// JSON value as it travels: key order kept, numbers in canonical text.
pub type JsonValue = serde_json::Value;
/// An agent scope name chosen by the client.
pub type AgentId = String;

/// JSON-RPC error codes used by the host beyond the standard ones.
pub mod error_codes {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i32 = -32700;
    /// The JSON sent is not a valid request object, or the host is shutting down.
    pub const INVALID_REQUEST: i32 = -32600;
    /// The method does not exist.
    pub const METHOD_NOT_FOUND: i32 = -32601;
    /// Invalid method parameters; the message names the field.
    pub const INVALID_PARAMS: i32 = -32602;
    /// Internal host fault (a panicking handler is answered with this).
    pub const INTERNAL_ERROR: i32 = -32603;
    /// A request arrived before `initialize` (LSP's ServerNotInitialized).
    pub const SERVER_NOT_INITIALIZED: i32 = -32002;
    /// A registry or policy rule rejected the request; `data.code` says which.
    pub const REQUEST_FAILED: i32 = -32803;
    /// The request was cancelled (LSP's RequestCancelled).
    pub const REQUEST_CANCELLED: i32 = -32800;
}
