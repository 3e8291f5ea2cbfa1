//! Integration tests of `policy`.

mod rules;
mod approvals;
mod protected;
