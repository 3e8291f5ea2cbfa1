//! Code Mode text generation: JSON Schema → TypeScript types, the `tools:sdk` section a
//! model reads, and the `run_code` transport schema. Pure functions over `serde_json`
//! values, stack-safe for any schema depth, deterministic byte for byte.
//!
//! Rendering rules of [`json_schema_to_ts`], per node: `string`/`number`/`boolean`/`null`
//! as named (`integer` is `number`); a `type` array is a union; arrays are `T[]` (unions
//! parenthesized, no `items` is `JsonValue[]`); objects list `properties` in schema order
//! (`?` unless required, keys quoted unless plain identifiers, `description` as a `/** */`
//! line above) and, when open, end with the narrowest index signature TypeScript accepts
//! (`JsonValue`, `JsonValue | undefined` when a member is optional, `unknown` when a member
//! is not JSON); a closed empty object is `Record<string, never>`; `const`/`enum` are
//! JSON literal types; `oneOf` is the union of its branches; `{}` is `JsonValue`. Any node
//! outside the supported subset (`$ref`, `anyOf`, `allOf`, `not`, tuple `items`,
//! `patternProperties`, `if`/`then`, schema-valued `additionalProperties`, unknown type
//! names, ...) is `unknown`, and only that node.
//!
//! [`json_schema_to_py`] and [`python_sdk`] are the Python flavor over the same plan:
//! `str`/`int`/`float`/`bool`/`None`, `list[T]`, `Literal[...]`, unions with `|`; inside
//! the SDK an object with legal field names is a named `TypedDict` (`NotRequired[...]`
//! unless required), otherwise — and always outside the SDK — `dict[str, Any]`; anything
//! unsupported is `Any`.

mod py_sdk;
mod python;
mod run_code;
mod schema_plan;
mod sdk;
mod ts_text;
mod typescript;
mod untyped;

pub use py_sdk::{python_declaration, python_sdk, python_sdk_deferring};
pub use python::json_schema_to_py;
pub use run_code::{
    run_code_description, run_code_description_in, run_code_input_schema, run_code_input_schema_in,
};
pub use sdk::{
    SdkTool, first_sentence, one_line, typescript_declaration, typescript_sdk,
    typescript_sdk_deferring,
};
pub use typescript::json_schema_to_ts;
pub use untyped::untyped_part;
