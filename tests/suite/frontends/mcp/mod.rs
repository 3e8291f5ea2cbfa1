//! Integration tests of `frontends::mcp`.

mod policy;
mod serve;
