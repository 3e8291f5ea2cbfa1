//! The `run_code` transport tool as the model sees it: name, input schema, description.

use dsh_tools_protocol::CodeLanguage;
use serde_json::{Value, json};

/// What `run_code` does and takes, in the reference's wording: both required arguments
/// (`code` and `description`) are named, so a model that reads only the tool definition
/// still fills both. The SDK section (or, over MCP, the rest of the description) carries the
/// detail. (The reference's sentence about image-bearing sub-tool results is left out: this
/// host does not attach them.)
const SUMMARY: &str = "Execute a TypeScript program against the available tools. Takes two required \
arguments: `code`, the BODY of an async function (erasable syntax only; top-level `await` and \
`return` work), and `description`, a short summary of what the program does. Call tools as \
`await tools.name(args)` per the declarations in the system prompt. Only what you print or \
return is program output — curate it.";

/// The Python flavor of [`SUMMARY`].
const PYTHON_SUMMARY: &str = "Execute a Python program against the available tools. Takes two required \
arguments: `code`, the BODY of an async function (top-level `await` and `return` work), and \
`description`, a short summary of what the program does. Call tools as `await tools.name(args)` \
per the declarations in the system prompt. Use `print(...)` and/or `return <value>` for program \
output — curate it.";

/// `run_code`'s input schema (TypeScript flavor): exactly `code` and `description`, both
/// required strings.
pub fn run_code_input_schema() -> Value {
    run_code_input_schema_in(CodeLanguage::Typescript)
}

/// `run_code`'s input schema with `code` described in `language`'s terms.
pub fn run_code_input_schema_in(language: CodeLanguage) -> Value {
    let code = match language {
        CodeLanguage::Typescript => "The program: the body of an async TypeScript function.",
        CodeLanguage::Python => "The program: the body of an async Python function.",
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
            "{\"type\":\"object\",\"properties\":{\"code\":{\"type\":\"string\",\"description\":\"The program: the body of an async TypeScript function.\"},\"description\":{\"type\":\"string\",\"description\":\"A short summary of what the program does.\"}},\"required\":[\"code\",\"description\"],\"additionalProperties\":false}"
        );
    }

    #[test]
    fn description_carries_the_sdk_when_given() {
        assert_eq!(run_code_description(""), SUMMARY);
        assert_eq!(run_code_description(" \n"), SUMMARY);
        assert_eq!(run_code_description("SDK"), format!("{SUMMARY}\n\nSDK"));
        assert_eq!(
            run_code_description_in(CodeLanguage::Python, "SDK"),
            format!("{PYTHON_SUMMARY}\n\nSDK")
        );
        assert_eq!(
            run_code_input_schema_in(CodeLanguage::Python)["properties"]["code"]["description"],
            "The program: the body of an async Python function."
        );
        for language in [CodeLanguage::Typescript, CodeLanguage::Python] {
            let description = run_code_description_in(language, "");
            assert!(
                description.contains("`code`") && description.contains("`description`"),
                "{description}"
            );
        }
    }
}
