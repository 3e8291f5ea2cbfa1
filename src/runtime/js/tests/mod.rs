//! Tests of the runtime through its public API: golden programs, hostile programs, and pool behavior.

mod cost;
mod golden;
mod hostile;
mod lossless;
mod pool;
mod run_cost;
mod support;
mod surface;
