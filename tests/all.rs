//! The integration tests as one binary: `suite/` mirrors `src/`, `support/` holds the
//! shared helpers. One binary links deno_core, oxc and rmcp once instead of once per suite.

// A test's unwrap is its assertion.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
mod support;
