//! Integration tests of `builtins`.

mod bash;
mod egress;
mod fs;
mod fs_hostile;
mod grep_args;
mod grep_rg;
mod sandbox;
mod sessions;
