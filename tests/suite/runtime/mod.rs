//! Integration tests of `runtime`.

mod deep_values;
mod depth;
mod nesting;
mod python;
