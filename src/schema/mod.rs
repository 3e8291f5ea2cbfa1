//! Tool schemas: the authoring DSL compiled to standard JSON Schema, the enforced raw
//! subset, and validation with path-qualified violations in the model-facing wording.
//!
//! Every walk over a spec, a schema or a value uses an explicit stack or an index arena,
//! so valid inputs of any depth are memory-bounded rather than call-stack-bounded.

mod dsl;
mod error;
mod evaluate;
mod spec_path;
mod subset;
mod types;
mod validator;
mod violation;
mod work_stack;

pub use dsl::{compile_parameters, compile_value};
pub use error::SchemaError;
pub use subset::check_supported;
pub use types::JsonType;
pub use validator::{PathRoot, Validator};
pub use violation::{Violation, ViolationKind};
