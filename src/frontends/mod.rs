//! Front ends: how a client reaches the registry. [`rpc`] serves the JSON-RPC wire protocol
//! (the editor or agent front end on stdio); [`mcp`] serves the same registry to MCP clients
//! (one on stdio, or many over Streamable HTTP).
//! Both sit on the whole stack below them and never on each other.

pub mod mcp;
pub mod rpc;
