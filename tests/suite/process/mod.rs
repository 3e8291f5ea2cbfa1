//! Integration tests of `process` (the sandbox's fail-closed path and its diagnostics).

mod sandbox;
