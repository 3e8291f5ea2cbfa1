//! The `run_code` transport tool as the model sees it: name, input schema, description.

use dsh_tools_protocol::CodeLanguage;
use serde_json::{Value, json};

/// The reserved name of the Code Mode transport tool.
pub const RUN_CODE_NAME: &str = "run_code";

/// What `run_code` does, in one breath; the SDK section carries the detail.
const SUMMARY: &str = "Run a TypeScript program that calls the available tools through a typed SDK \
(`await tools.name(args)`). Only what the program prints with `console.log` or returns comes back.";

/// The Python flavor of [`SUMMARY`].
const PYTHON_SUMMARY: &str = "Run a Python program that calls the available tools through a typed SDK \
(`await tools.name(args)`). Only what the program prints with `print(...)` or returns comes back.";

/// `run_code`'s input schema (TypeScript flavor): exactly `code` and `description`, both
/// required strings.
pub fn run_code_input_schema() -> Value {
    run_code_input_schema_in(CodeLanguage::Typescript)
}

/// `run_code`'s input schema with `code` described in `language`'s terms.
pub fn run_code_input_schema_in(language: CodeLanguage) -> Value {
    let code = match language {
        CodeLanguage::Typescript => {
            "The body of an async TypeScript function (erasable syntax only) that calls tools as `await tools.name(args)` and returns or prints its result."
        }
        CodeLanguage::Python => {
            "The body of an async Python function that calls tools as `await tools.name(args)` and returns or prints its result."
        }
    };
    json!({
        "type": "object",
        "properties": {
            "code": {
                "type": "string",
                "description": code
            },
            "description": {
                "type": "string",
                "description": "A short summary of what the program does."
            }
        },
        "required": ["code", "description"],
        "additionalProperties": false
    })
}

/// The `run_code` tool description: a short summary, followed by `sdk` (the
/// [`typescript_sdk`](super::typescript_sdk) text) when the SDK travels inside the
/// description, as it must for clients that only read tool definitions (MCP). An empty
/// `sdk` yields the summary alone, for prompts that carry the SDK as their own section.
pub fn run_code_description(sdk: &str) -> String {
    run_code_description_in(CodeLanguage::Typescript, sdk)
}

/// [`run_code_description`] in `language`'s terms.
pub fn run_code_description_in(language: CodeLanguage, sdk: &str) -> String {
    let summary = match language {
        CodeLanguage::Typescript => SUMMARY,
        CodeLanguage::Python => PYTHON_SUMMARY,
    };
    if sdk.trim().is_empty() {
        summary.to_owned()
    } else {
        format!("{summary}\n\n{sdk}")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn input_schema_is_exact() {
        let schema = run_code_input_schema();
        assert_eq!(
            serde_json::to_string(&schema).unwrap(),
            "{\"type\":\"object\",\"properties\":{\"code\":{\"type\":\"string\",\"description\":\"The body of an async TypeScript function (erasable syntax only) that calls tools as `await tools.name(args)` and returns or prints its result.\"},\"description\":{\"type\":\"string\",\"description\":\"A short summary of what the program does.\"}},\"required\":[\"code\",\"description\"],\"additionalProperties\":false}"
        );
    }

    #[test]
    fn description_carries_the_sdk_when_given() {
        assert_eq!(run_code_description(""), SUMMARY);
        assert_eq!(run_code_description(" \n"), SUMMARY);
        assert_eq!(run_code_description("SDK"), format!("{SUMMARY}\n\nSDK"));
        assert_eq!(RUN_CODE_NAME, "run_code");
        assert_eq!(
            run_code_description_in(CodeLanguage::Python, "SDK"),
            format!("{PYTHON_SUMMARY}\n\nSDK")
        );
        assert_eq!(
            run_code_input_schema_in(CodeLanguage::Python)["properties"]["code"]["description"],
            "The body of an async Python function that calls tools as `await tools.name(args)` and returns or prints its result."
        );
    }
}
