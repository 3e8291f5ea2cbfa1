//! `protocol/generated/` must match the wire types: regenerate with
//! `cargo run -- generate-protocol` (or `UPDATE_PROTOCOL=1 cargo test --test protocol_generated`).

#![allow(clippy::unwrap_used)]

use dsh_tools_protocol::generate::{json_schema_bundle, typescript_declarations};
use std::path::Path;

fn check(file: &str, expected: String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("protocol/generated")
        .join(file);
    if std::env::var_os("UPDATE_PROTOCOL").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &expected).unwrap();
    }
    let actual = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        actual == expected,
        "{} is stale: run `cargo run -- generate-protocol` and commit the result",
        path.display()
    );
}

#[test]
fn the_typescript_declarations_are_current() {
    check("protocol.d.ts", typescript_declarations());
}

#[test]
fn the_json_schema_bundle_is_current() {
    check(
        "protocol.schema.json",
        serde_json::to_string_pretty(&json_schema_bundle()).unwrap() + "\n",
    );
}
