//! Integration tests of `codegen`.

mod sdk_golden;
