//! Integration tests of `code_mode`.

mod anticipation;
mod bindings;
mod bridge;
mod description;
mod flood;
mod golden;
mod hostile;
mod memory;
mod randomness;
mod rendezvous;
mod runaways;
mod stopping;
