//! What the built-in tools' UI cards share: soft parsing of arguments and metadata, file
//! locations, search rows and syntax hints. Each tool's own card lives beside the tool.
//!
//! Every card is pure over its arguments and the durable result (content and `meta`, never
//! the execution-local value), so a UI gets the same card live and on log replay. Arguments
//! or metadata that do not parse (an older log, a hand-edited one) yield `None`, the generic
//! fallback.

use crate::cards::{FileLocation, GenericCallView, ToolCallKind, ToolCallView};
use crate::tool::DurableResult;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::path::Path;

/// Soft validation: the shape a card needs, or `None`.
pub(crate) fn parse<T: DeserializeOwned>(value: &Value) -> Option<T> {
    T::deserialize(value).ok()
}

/// The metadata of a successful result, parsed.
pub(crate) fn success_meta<T: DeserializeOwned>(result: &DurableResult) -> Option<T> {
    if result.is_error {
        return None;
    }
    parse(result.meta.as_ref()?)
}

pub(crate) fn location(path: &str, line: Option<u64>) -> Option<Vec<FileLocation>> {
    Some(vec![FileLocation {
        path: path.to_owned(),
        line,
    }])
}

#[derive(Deserialize)]
pub(crate) struct SearchCall {
    pattern: String,
    path: Option<String>,
}

pub(crate) fn search_title(tool: &str, call: SearchCall) -> String {
    match call.path {
        Some(path) => format!("{tool} {} in {path}", call.pattern),
        None => format!("{tool} {}", call.pattern),
    }
}

pub(crate) fn search_call(tool: &str, arguments: &Value) -> Option<Value> {
    ToolCallView::Generic(GenericCallView {
        title: search_title(tool, parse(arguments)?),
        kind: Some(ToolCallKind::Search),
        raw_input: None,
        content: None,
        locations: None,
    })
    .to_json()
}

/// A syntax-highlighting hint from the file extension.
pub(crate) fn language_of(path: &str) -> Option<&'static str> {
    let extension = Path::new(path).extension()?.to_str()?;
    Some(match extension {
        "rs" => "rust",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "tsx",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "jsx",
        "py" => "python",
        "go" => "go",
        "java" => "java",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" => "cpp",
        "rb" => "ruby",
        "sh" | "bash" => "bash",
        "json" => "json",
        "toml" => "toml",
        "yaml" | "yml" => "yaml",
        "md" => "markdown",
        "html" => "html",
        "css" => "css",
        "sql" => "sql",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_come_from_extensions() {
        let cases = [
            ("src/main.rs", Some("rust")),
            ("a/b.test.ts", Some("typescript")),
            ("Makefile", None),
            ("notes.txt", None),
            ("x.YML", None),
        ];
        for (path, expected) in cases {
            assert_eq!(language_of(path), expected, "{path}");
        }
    }
}
