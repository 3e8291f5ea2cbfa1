//! Integration tests of `runtime::python`.

mod fork_server;
mod hostile;
mod languages;
mod sandbox;
