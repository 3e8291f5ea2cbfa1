//! Integration tests of `mcp`.

mod fixture;
mod http;
mod ingest;
mod lifecycle;
mod progress;
mod sandbox;
mod transport;
