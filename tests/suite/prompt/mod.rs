//! Integration tests of `prompt`.

mod assembly;
