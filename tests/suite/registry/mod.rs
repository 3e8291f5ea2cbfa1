//! Integration tests of `registry`.

mod layers;
mod presentation;
mod restrictions;
