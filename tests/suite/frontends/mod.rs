//! Integration tests of `frontends`.

mod mcp;
mod rpc;
