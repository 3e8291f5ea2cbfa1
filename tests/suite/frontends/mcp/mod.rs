//! Integration tests of `frontends::mcp`.

mod http;
mod policy;
mod progress;
mod serve;
