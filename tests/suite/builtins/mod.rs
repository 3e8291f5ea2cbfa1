//! Integration tests of `builtins`.

mod bash;
mod egress;
mod fs;
mod fs_hostile;
mod sandbox;
mod sessions;
mod web;
