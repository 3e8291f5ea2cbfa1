//! Lossless JSON: canonical JavaScript number text, `JSON.stringify`-exact rendering, and
//! parsing, cloning, comparing and dropping values of any depth without recursion.
//!
//! Values are `serde_json::Value` with `arbitrary_precision`: a number keeps the text it was
//! written with until [`canonicalize`] rewrites it to what JavaScript would print.
//! `Value`'s own `Clone`, `PartialEq`, `Drop` and serializer recurse per nesting level;
//! code that handles input of unbounded depth uses this module's counterparts instead.

mod append;
mod canonical;
mod clone;
mod decimal;
mod drop;
mod equal;
mod number;
mod parse;
mod path;
mod render;

pub use append::append_serialized;
pub use canonical::{LossyJson, canonicalize, check_lossless};
pub use clone::deep_clone;
pub use decimal::is_integer;
pub use drop::drop_deep;
pub use equal::json_equal;
pub use number::number_text;
pub use parse::{ParseError, parse, parse_within};
pub(crate) use path::locate;
pub use path::{Segment, render_path};
pub use render::{render_compact, render_pretty, write_compact, write_json_string};
