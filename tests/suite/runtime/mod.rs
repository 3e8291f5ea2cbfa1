//! Integration tests of `runtime`.

mod depth;
mod python;
