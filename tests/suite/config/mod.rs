//! Integration tests of `config`.

mod user_files;
