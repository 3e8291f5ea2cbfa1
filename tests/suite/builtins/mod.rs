//! Integration tests of `builtins`.

mod bash;
mod egress;
mod fs;
mod fs_hostile;
mod grep_args;
mod grep_rg;
mod read_media;
mod sandbox;
mod sessions;
mod stale_edits;
mod web;
