//! Integration tests of `frontends::mcp`.

mod approvals;
mod http;
mod policy;
mod progress;
mod serve;
