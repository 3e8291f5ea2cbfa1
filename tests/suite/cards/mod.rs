//! Integration tests of `cards`.

mod builtins;
