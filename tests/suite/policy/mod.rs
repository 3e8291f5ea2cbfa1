//! Integration tests of `policy`.

mod bypass;
mod corpus;
mod decisions;
mod rules;
mod approvals;
mod protected;
