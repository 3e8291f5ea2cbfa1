//! Integration tests of `discovery` (progressive tool discovery): over the wire, in Code
//! Mode, over MCP (ingested and served), and the retrieval quality of `search_tools`.

mod code_mode;
mod mcp;
mod retrieval;
mod wire;
