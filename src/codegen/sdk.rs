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
    write_maps(&ordered, &mut out);
    out.push_str(EPILOGUE);
    out
}

/// [`typescript_sdk`] over `tools`, followed by the one-line listing of `deferred` (tools
/// bound on `tools` but declared only once `search_tools` loads them); exactly
/// `typescript_sdk(tools)` when nothing is deferred.
pub fn typescript_sdk_deferring(tools: &[SdkTool], deferred: &[SdkTool]) -> String {
    let mut out = typescript_sdk(tools);
    write_deferred(DEFERRED_TS, deferred, &mut out);
    out
}

/// One tool's entries of `ToolArgsMap` and `ToolOutputMap`, as the SDK declares them (the
/// interfaces merge with the SDK's own): what `search_tools` returns inside a TypeScript
/// program for each match.
pub fn typescript_declaration(tool: &SdkTool) -> String {
    let mut out = String::new();
    write_maps(&[tool], &mut out);
    out
}

/// `interface ToolArgsMap { ... }` and `interface ToolOutputMap { ... }` over `ordered`.
fn write_maps(ordered: &[&SdkTool], out: &mut String) {
    out.push_str("interface ToolArgsMap {");
    for tool in ordered {
        if let Some(comment) = doc_comment(tool.description, 1) {
            out.push_str("\n  ");
            out.push_str(&comment);
        }
        out.push_str("\n  ");
        out.push_str(&property_key(tool.name));
        out.push_str(": ");
        write_type(tool.input_schema, 1, out);
        out.push(';');
    }
    out.push_str(if ordered.is_empty() { "}" } else { "\n}" });
    out.push_str("\n\ninterface ToolOutputMap {");
    for tool in ordered {
        out.push_str("\n  ");
        out.push_str(&property_key(tool.name));
        out.push_str(": ");
        write_type(tool.output_schema, 1, out);
        out.push(';');
    }
    out.push_str(if ordered.is_empty() { "}" } else { "\n}" });
}

/// The heading of the deferred listing in the TypeScript SDK.
const DEFERRED_TS: &str = "\n\n### Deferred tools: call `await tools.search_tools({ query })` for their declarations\n\n\
Each tool below is a binding on `tools` like those declared above, callable without a search, but shown only by its name and the first sentence of its description. \
`await tools.search_tools({ query: \"what you want to do\" })` returns the best matches (`limit`: 1 to 20, default 5) with their declarations as text (`declaration`) and their schemas; \
`{ query: \"select:name1,name2\" }` fetches named ones. Found tools are declared in full above from the next turn on.\n";

/// The heading of the deferred listing in the Python SDK.
pub(super) const DEFERRED_PY: &str = "\n\n### Deferred tools: call `await tools.search_tools({\"query\": ...})` for their declarations\n\n\
Each tool below is a binding on `tools` like those declared above, callable without a search, but shown only by its name and the first sentence of its description. \
`await tools.search_tools({\"query\": \"what you want to do\"})` returns the best matches (`limit`: 1 to 20, default 5) with their declarations as text (`declaration`) and their schemas; \
`{\"query\": \"select:name1,name2\"}` fetches named ones. Found tools are declared in full above from the next turn on.\n";

/// Appends `heading` and one `- name — first sentence` line per deferred tool (byte order of
/// names), or nothing when none is deferred.
pub(super) fn write_deferred(heading: &str, deferred: &[SdkTool], out: &mut String) {
    if deferred.is_empty() {
        return;
    }
    let mut ordered: Vec<&SdkTool> = deferred.iter().collect();
    ordered.sort_by(|left, right| left.name.cmp(right.name));
    out.push_str(heading);
    for tool in ordered {
        out.push_str("\n- ");
        out.push_str(&one_line(tool.name));
        let sentence = first_sentence(tool.description);
        if !sentence.is_empty() {
            out.push_str(" — ");
            out.push_str(&sentence);
        }
    }
}

/// Longest first sentence a deferred listing shows, in characters.
const MAX_SENTENCE_CHARS: usize = 160;

/// The first sentence of `description`: its first line up to the first `.`, `!` or `?`
/// followed by a space (or the line's end), at most [`MAX_SENTENCE_CHARS`] characters
/// (then cut with `…`).
pub fn first_sentence(description: &str) -> String {
    let line = description
        .trim()
        .split(['\n', '\r'])
        .next()
        .unwrap_or_default()
        .trim();
    let mut end = line.len();
    let mut chars = line.char_indices().peekable();
    while let Some((index, character)) = chars.next() {
        let stops = matches!(character, '.' | '!' | '?');
        if stops && chars.peek().is_none_or(|(_, next)| next.is_whitespace()) {
            end = index + character.len_utf8();
            break;
        }
    }
    let sentence = &line[..end];
    match sentence.char_indices().nth(MAX_SENTENCE_CHARS) {
        Some((cut, _)) => format!("{}…", sentence[..cut].trim_end()),
        None => sentence.to_owned(),
    }
}

/// A name as one line of text: line breaks and other control characters become spaces.
pub fn one_line(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
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
    fn first_sentences_stop_at_the_first_full_stop_of_the_first_line() {
        let check = |description: &str, expected: &str| {
            assert_eq!(first_sentence(description), expected, "{description:?}");
        };
        check("Read a file. Then more.", "Read a file.");
        check(
            "  Search v1.2 of the index! More",
            "Search v1.2 of the index!",
        );
        check("First line\nSecond line.", "First line");
        check("Is it? Yes.", "Is it?");
        check("", "");
        check("No stop at all", "No stop at all");
        let long = "x".repeat(200);
        assert_eq!(first_sentence(&long), format!("{}…", "x".repeat(160)));
    }

    #[test]
    fn deferred_tools_are_listed_after_the_block_one_line_each() {
        let schema = json!({"type": "object"});
        let tool = |name: &'static str, description: &'static str| SdkTool {
            name,
            description,
            input_schema: &schema,
            output_schema: &schema,
        };
        let declared = [tool("read", "Read.")];
        assert_eq!(
            typescript_sdk_deferring(&declared, &[]),
            typescript_sdk(&declared)
        );
        let deferred = [tool("zeta", "Last one. Really."), tool("alpha\nbeta", "")];
        let text = typescript_sdk_deferring(&declared, &deferred);
        assert_eq!(
            text,
            format!(
                "{}{DEFERRED_TS}\n- alpha beta\n- zeta — Last one.",
                typescript_sdk(&declared)
            )
        );
        assert_eq!(
            typescript_declaration(&declared[0]),
            "interface ToolArgsMap {\n  /** Read. */\n  read: {\n    [key: string]: JsonValue;\n  };\n}\n\ninterface ToolOutputMap {\n  read: {\n    [key: string]: JsonValue;\n  };\n}"
        );
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
