//! Integration tests of `runtime`.

mod deep_values;
mod depth;
mod python;
