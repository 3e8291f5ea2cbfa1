//! Tests of the runtime through its public API: golden programs, hostile programs, and pool behavior.

mod golden;
mod hostile;
mod leftovers;
mod lossless;
mod pool;
mod support;
mod surface;
mod teardowns;
mod termination;
