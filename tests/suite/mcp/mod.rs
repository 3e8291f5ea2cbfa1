//! Integration tests of `mcp`.

mod conformance;
mod elicitation;
mod fixture;
mod http;
mod http_limits;
mod ingest;
mod lifecycle;
mod oauth;
mod progress;
mod sandbox;
mod structured;
mod transport;
mod versions;
