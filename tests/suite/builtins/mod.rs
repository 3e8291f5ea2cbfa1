//! Integration tests of `builtins`.

mod bash;
mod fs;
mod fs_hostile;
mod sandbox;
mod sessions;
