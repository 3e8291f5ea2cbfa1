//! The `tools:sdk` prompt section for a TypeScript code runtime: the fixed usage
//! instructions followed by the declarations of every visible tool.

use serde_json::Value;

use super::ts_text::{doc_comment, property_key};
use super::typescript::write_type;

/// One visible tool as the SDK declares it.
#[derive(Debug, Clone, Copy)]
pub struct SdkTool<'a> {
    /// The callable name; unique within the scope being rendered.
    pub name: &'a str,
    /// Shown as the `/** */` comment above the tool's `ToolArgsMap` entry.
    pub description: &'a str,
    /// Rendered as `ToolArgsMap[name]`.
    pub input_schema: &'a Value,
    /// Rendered as `ToolOutputMap[name]`, the canonical value a call resolves to.
    pub output_schema: &'a Value,
}

/// The seed's "Code Mode SDK instructions", verbatim.
const INSTRUCTIONS: &str = r#"## Writing code for run_code

`run_code` takes two required arguments: `code` — the body of an async TypeScript function (erasable syntax only — no `enum` or namespaces; type annotations are advisory, the code runs type-stripped) — and `description`, a short summary of what the program does. Inside the program:

- Call tools as `await tools.name(args)` — quoted access for exotic names: `tools["my-tool"](args)`. Every call resolves to the tool's typed canonical JSON value. Tool arguments must be lossless JSON.
- A FAILED tool call rejects with `ToolCallError`, whose `toolName` identifies the failed tool and whose `message` is human-readable — `try/catch` it to handle and continue.
- Independent read-only calls MAY overlap under `Promise.all` (safe calls run concurrently; mutating calls run alone, in submission order). Sequence dependent work with `await`.
- Emit results with `return` and/or `console.log(...)`. ONLY what you print or return comes back to you — intermediate tool results never enter the conversation, so extract just what you need.

The available tools:"#;

const PRELUDE: &str = "\n\n```ts\ntype JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };\n\n";

const EPILOGUE: &str = "\n\ntype ToolName = keyof ToolArgsMap;\n\n\
declare class ToolCallError extends Error { readonly toolName: ToolName; readonly message: string; }\n\n\
declare const tools: { readonly [K in ToolName]: (args: ToolArgsMap[K]) => Promise<ToolOutputMap[K]> };\n```";

/// The `tools:sdk` section text: instructions, then a ```` ```ts ```` block declaring
/// `JsonValue`, `ToolArgsMap`, `ToolOutputMap`, `ToolName`, `ToolCallError` and `tools`.
/// Tools appear in byte order of their names whatever the input order, so an unchanged tool
/// set yields byte-identical text (prefix-cache friendly). Names are unique in a scope (the
/// registry guarantees it); exotic ones are declared as quoted keys, which the instructions
/// tell the model to call as `tools["my-tool"](args)`.
pub fn typescript_sdk(tools: &[SdkTool]) -> String {
    let mut ordered: Vec<&SdkTool> = tools.iter().collect();
    ordered.sort_by(|left, right| left.name.cmp(right.name));
    let mut out = String::from(INSTRUCTIONS);
    out.push_str(PRELUDE);
    out.push_str("interface ToolArgsMap {");
    for tool in &ordered {
        if let Some(comment) = doc_comment(tool.description, 1) {
            out.push_str("\n  ");
            out.push_str(&comment);
        }
        out.push_str("\n  ");
        out.push_str(&property_key(tool.name));
        out.push_str(": ");
        write_type(tool.input_schema, 1, &mut out);
        out.push(';');
    }
    out.push_str(if ordered.is_empty() { "}" } else { "\n}" });
    out.push_str("\n\ninterface ToolOutputMap {");
    for tool in &ordered {
        out.push_str("\n  ");
        out.push_str(&property_key(tool.name));
        out.push_str(": ");
        write_type(tool.output_schema, 1, &mut out);
        out.push(';');
    }
    out.push_str(if ordered.is_empty() { "}" } else { "\n}" });
    out.push_str(EPILOGUE);
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    const DECLARATIONS_TAIL: &str = "type ToolName = keyof ToolArgsMap;

declare class ToolCallError extends Error { readonly toolName: ToolName; readonly message: string; }

declare const tools: { readonly [K in ToolName]: (args: ToolArgsMap[K]) => Promise<ToolOutputMap[K]> };
```";

    fn expected_sdk(maps: &str) -> String {
        format!(
            "{INSTRUCTIONS}\n\n```ts\ntype JsonValue = string | number | boolean | null | JsonValue[] | {{ [key: string]: JsonValue }};\n\n{maps}\n\n{DECLARATIONS_TAIL}"
        )
    }

    #[test]
    fn instructions_are_the_seed_block() {
        let seed_lines = [
            "## Writing code for run_code",
            "",
            "`run_code` takes two required arguments: `code` — the body of an async TypeScript function (erasable syntax only — no `enum` or namespaces; type annotations are advisory, the code runs type-stripped) — and `description`, a short summary of what the program does. Inside the program:",
            "",
            "- Call tools as `await tools.name(args)` — quoted access for exotic names: `tools[\"my-tool\"](args)`. Every call resolves to the tool's typed canonical JSON value. Tool arguments must be lossless JSON.",
            "- A FAILED tool call rejects with `ToolCallError`, whose `toolName` identifies the failed tool and whose `message` is human-readable — `try/catch` it to handle and continue.",
            "- Independent read-only calls MAY overlap under `Promise.all` (safe calls run concurrently; mutating calls run alone, in submission order). Sequence dependent work with `await`.",
            "- Emit results with `return` and/or `console.log(...)`. ONLY what you print or return comes back to you — intermediate tool results never enter the conversation, so extract just what you need.",
            "",
            "The available tools:",
        ];
        assert_eq!(INSTRUCTIONS, seed_lines.join("\n"));
    }

    #[test]
    fn zero_tools_still_declare_everything() {
        assert_eq!(
            typescript_sdk(&[]),
            expected_sdk("interface ToolArgsMap {}\n\ninterface ToolOutputMap {}")
        );
    }

    #[test]
    fn one_tool_with_typed_arguments_and_output() {
        let input = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Absolute file path"},
                "offset": {"type": "number"},
                "limit": {"type": "number"}
            },
            "required": ["path"]
        });
        let output = json!({"type": "string"});
        let tool = SdkTool {
            name: "read_file",
            description: "Read a file from disk.",
            input_schema: &input,
            output_schema: &output,
        };
        assert_eq!(
            typescript_sdk(&[tool]),
            expected_sdk(
                "interface ToolArgsMap {
  /** Read a file from disk. */
  read_file: {
    /** Absolute file path */
    path: string;
    offset?: number;
    limit?: number;
    [key: string]: JsonValue | undefined;
  };
}

interface ToolOutputMap {
  read_file: string;
}"
            )
        );
    }

    fn exotic_tools<'a>(schema: &'a Value, names: &[&'a str]) -> Vec<SdkTool<'a>> {
        names
            .iter()
            .map(|name| SdkTool {
                name,
                description: "",
                input_schema: schema,
                output_schema: schema,
            })
            .collect()
    }

    #[test]
    fn exotic_names_are_quoted_keys_in_byte_order() {
        let closed = json!({"type": "object", "additionalProperties": false});
        let names = [
            "with space",
            "my-tool",
            "__proto__",
            "constructor",
            "a.b",
            "café",
            "mcp__srv__tool",
            "Zeta",
            "",
        ];
        let per_map = |indented_type: &str| {
            [
                "\"\"",
                "Zeta",
                "\"__proto__\"",
                "\"a.b\"",
                "\"café\"",
                "\"constructor\"",
                "mcp__srv__tool",
                "\"my-tool\"",
                "\"with space\"",
            ]
            .iter()
            .map(|key| format!("\n  {key}: {indented_type};"))
            .collect::<String>()
        };
        let entries = per_map("Record<string, never>");
        assert_eq!(
            typescript_sdk(&exotic_tools(&closed, &names)),
            expected_sdk(&format!(
                "interface ToolArgsMap {{{entries}\n}}\n\ninterface ToolOutputMap {{{entries}\n}}"
            ))
        );
    }

    #[test]
    fn tool_order_does_not_depend_on_input_order() {
        let first_schema =
            json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]});
        let second_schema = json!({"type": "array", "items": {"enum": ["x", "y"]}});
        let alpha = SdkTool {
            name: "alpha",
            description: "First tool.\n\nTwo paragraphs.",
            input_schema: &first_schema,
            output_schema: &second_schema,
        };
        let beta = SdkTool {
            name: "beta-tool",
            description: "  ",
            input_schema: &second_schema,
            output_schema: &first_schema,
        };
        let forward = typescript_sdk(&[alpha, beta]);
        assert_eq!(forward, typescript_sdk(&[beta, alpha]));
        assert_eq!(
            forward,
            expected_sdk(
                "interface ToolArgsMap {
  /**
   * First tool.
   *
   * Two paragraphs.
   */
  alpha: {
    q: string;
    [key: string]: JsonValue;
  };
  \"beta-tool\": (\"x\" | \"y\")[];
}

interface ToolOutputMap {
  alpha: (\"x\" | \"y\")[];
  \"beta-tool\": {
    q: string;
    [key: string]: JsonValue;
  };
}"
            )
        );
    }
}
