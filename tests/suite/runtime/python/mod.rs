//! Integration tests of `runtime::python`.

mod hostile;
mod languages;
mod sandbox;
