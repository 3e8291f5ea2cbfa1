//! Integration tests of `code_mode`.

mod bridge;
mod golden;
mod hostile;
mod runaways;
