//! Tests of the runtime through its public API: golden programs, hostile programs, and pool behavior.

mod cost;
mod golden;
mod hostile;
mod lossless;
mod pool;
mod support;
mod surface;
