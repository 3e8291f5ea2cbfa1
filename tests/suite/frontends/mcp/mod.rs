//! Integration tests of `frontends::mcp`.

mod approvals;
mod http;
mod http_access;
mod http_sessions;
mod policy;
mod progress;
mod serve;
mod versions;
