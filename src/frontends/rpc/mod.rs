//! JSON-RPC over the transport: the method table, lifecycle, conversions at the wire
//! boundary, and client-executed tools.

mod anticipate;
mod client_tool;
mod convert;
mod errors;
mod hooks;
mod methods;
mod nesting;
mod params;
mod progress;
mod reply;
mod server;
mod session;

pub use server::{ServeOptions, serve};
