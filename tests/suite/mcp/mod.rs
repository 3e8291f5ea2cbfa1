//! Integration tests of `mcp`.

mod fixture;
mod ingest;
mod lifecycle;
mod sandbox;
