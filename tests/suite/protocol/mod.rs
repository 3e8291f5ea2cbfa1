//! Integration tests of `protocol`.

mod generated;
