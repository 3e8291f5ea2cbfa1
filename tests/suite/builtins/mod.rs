//! Integration tests of `builtins`.

mod bash;
mod fs;
mod sandbox;
