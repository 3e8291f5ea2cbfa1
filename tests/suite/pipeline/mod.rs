//! Integration tests of `pipeline`.

mod arguments;
mod cancellation;
mod dispatch;
mod policy;
mod post_execute;
mod scheduling;
mod spill;
