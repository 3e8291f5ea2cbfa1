//! Integration tests of `providers` (issue 45): `tools/prompt` and `tools/schemas` in each
//! provider's shape over the wire, the weakened-schema report, results as tool-result
//! blocks, validation against the official SDKs' types, and automatic deferral.

mod auto_defer;
mod catalog;
mod sdk;
mod wire;
