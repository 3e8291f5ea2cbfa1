//! Integration tests of `frontends::rpc`.

mod agent_errors;
mod agents_inheritance;
mod agents_matrix;
mod backpressure;
mod basics;
mod batch_memory;
mod deep;
mod disconnect;
mod dispatch_events;
mod execution;
mod hooks;
mod lifecycle;
mod list_changed;
mod oversized;
mod policy;
mod presentation;
mod progress;
mod prompt_golden;
mod random_input;
mod registry;
mod stdio_kinds;
mod transcripts;
mod transport;
