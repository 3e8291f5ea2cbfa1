//! JSON-RPC over the transport: the connection loop, the lifecycle gate, the router and its
//! method table, conversions at the wire boundary, and client-executed tools.

mod anticipate;
mod backpressure;
mod batch;
mod client_tool;
mod convert;
mod elicit;
mod errors;
mod hooks;
mod lifecycle;
mod list_changed;
mod methods;
mod nesting;
mod notifiers;
mod open_url;
mod params;
mod permissions;
mod progress;
mod reply;
mod requests;
mod router;
mod server;
mod session;
mod shapes;

pub use server::{ServeOptions, serve};
