//! Integration tests of `policy`.

mod approvals;
mod bypass;
mod corpus;
mod decisions;
mod protected;
mod rules;
