//! Integration tests of `policy`.

mod rules;
