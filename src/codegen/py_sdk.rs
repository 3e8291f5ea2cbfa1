//! The `tools:sdk` prompt section for a Python code runtime: the usage instructions in
//! Python terms, then named `TypedDict`s per tool and the `tools` object's `async def`
//! bindings.

use super::python::{
    Classes, comment_lines, is_plain_name, pascal_case, write_annotation, write_classes,
};
use super::sdk::{DEFERRED_PY, SdkTool, write_deferred};
use super::ts_text::json_string;

/// The seed's usage instructions, with the operations in Python syntax.
const INSTRUCTIONS: &str = r#"## Writing code for run_code

`run_code` takes two required arguments: `code` — the body of an async Python function (top-level `await` and `return` work; type hints are advisory) — and `description`, a short summary of what the program does. Inside the program:

- Call tools as `await tools.name(args)` — subscript access for names that are not Python identifiers: `await tools["my-tool"](args)`. Every call resolves to the tool's typed canonical JSON value. Tool arguments must be lossless JSON (`dict` with `str` keys, `list`, `str`, `int`, finite `float`, `bool`, `None`).
- A FAILED tool call raises `ToolCallError`, whose `tool_name` identifies the failed tool and whose `message` is human-readable — `try`/`except ToolCallError` to handle it and continue.
- Independent read-only calls MAY overlap under `asyncio.gather(...)` (safe calls run concurrently; mutating calls run alone, in submission order). Sequence dependent work with `await`.
- Emit results with `return` and/or `print(...)`. ONLY what you print or return comes back to you — intermediate tool results never enter the conversation, so extract just what you need.

The available tools:"#;

const PRELUDE: &str = "\n\n```py\nfrom typing import Any, Awaitable, Callable, Literal, Never, NotRequired, TypedDict, overload\n\n\
JsonValue = str | int | float | bool | None | list[\"JsonValue\"] | dict[str, \"JsonValue\"]\n\n\
class ToolCallError(Exception):\n    tool_name: str\n    message: str\n\n";

/// Names the prelude declares, which generated classes must not reuse.
const RESERVED: &[&str] = &[
    "Any",
    "Awaitable",
    "Callable",
    "Literal",
    "Never",
    "NotRequired",
    "TypedDict",
    "overload",
    "JsonValue",
    "ToolCallError",
    "Tools",
    "tools",
];

/// The Python `tools:sdk` text: instructions, then a ```` ```py ```` block declaring
/// `JsonValue`, `ToolCallError`, `<Tool>Args` / `<Tool>Output` per tool (a `TypedDict` when
/// the schema is an object with legal field names, otherwise an alias), and `tools: Tools`
/// whose methods are the bindings; names that are not Python identifiers are reached by
/// subscript (`__getitem__` overloads). Tools appear in byte order of their names, so an
/// unchanged tool set yields byte-identical text.
pub fn python_sdk(tools: &[SdkTool]) -> String {
    let mut ordered: Vec<&SdkTool> = tools.iter().collect();
    ordered.sort_by(|left, right| left.name.cmp(right.name));
    let mut out = String::from(INSTRUCTIONS);
    out.push_str(PRELUDE);
    write_declarations(&ordered, &mut out);
    out.push_str("\n\ntools: Tools\n```");
    out
}

/// [`python_sdk`] over `tools`, followed by the one-line listing of `deferred`; exactly
/// `python_sdk(tools)` when nothing is deferred.
pub fn python_sdk_deferring(tools: &[SdkTool], deferred: &[SdkTool]) -> String {
    let mut out = python_sdk(tools);
    write_deferred(DEFERRED_PY, deferred, &mut out);
    out
}

/// One tool's `TypedDict`s and its `Tools` binding, as the SDK declares them: what
/// `search_tools` returns inside a Python program for each match.
pub fn python_declaration(tool: &SdkTool) -> String {
    let mut out = String::new();
    write_declarations(&[tool], &mut out);
    out
}

/// The `<Tool>Args` / `<Tool>Output` types of `ordered` and `class Tools` with their
/// bindings.
fn write_declarations(ordered: &[&SdkTool], out: &mut String) {
    let mut classes = Classes::named(RESERVED);
    let mut bindings: Vec<(&SdkTool, String, String)> = Vec::with_capacity(ordered.len());
    for tool in ordered {
        let base = match pascal_case(tool.name) {
            stem if stem.starts_with(|c: char| c.is_ascii_alphabetic()) => stem,
            stem => format!("Tool{stem}"),
        };
        let mut types = Vec::with_capacity(2);
        for (suffix, schema) in [("Args", tool.input_schema), ("Output", tool.output_schema)] {
            let name = classes.claim(&format!("{base}{suffix}"));
            let mut annotation = String::new();
            // The root object, if any, takes the claimed name itself.
            classes.release(&name);
            write_annotation(schema, &name, &mut classes, &mut annotation);
            write_classes(&mut classes, out);
            if annotation != name {
                classes.claim(&name);
                out.push_str(&name);
                out.push_str(" = ");
                out.push_str(&annotation);
                out.push_str("\n\n");
            }
            types.push(name);
        }
        let output = types.pop().unwrap_or_default();
        let args = types.pop().unwrap_or_default();
        bindings.push((tool, args, output));
    }
    out.push_str("class Tools:");
    let mut exotic = Vec::new();
    for (tool, args, output) in &bindings {
        if !is_plain_name(tool.name) {
            exotic.push((tool, args, output));
            continue;
        }
        out.push('\n');
        out.push_str(&comment_lines(tool.description, "    "));
        out.push_str(&format!(
            "    async def {}(self, args: {args}) -> {output}: ...",
            tool.name
        ));
    }
    let overloaded = exotic.len() > 1;
    for (tool, args, output) in &exotic {
        out.push('\n');
        out.push_str(&comment_lines(tool.description, "    "));
        if overloaded {
            out.push_str("    @overload\n");
        }
        out.push_str(&format!(
            "    def __getitem__(self, name: Literal[{}]) -> Callable[[{args}], Awaitable[{output}]]: ...",
            json_string(tool.name)
        ));
    }
    if bindings.is_empty() {
        out.push_str("\n    pass");
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    fn expected_sdk(body: &str) -> String {
        format!("{INSTRUCTIONS}{PRELUDE}{body}\n\ntools: Tools\n```")
    }

    #[test]
    fn zero_tools_still_declare_everything() {
        assert_eq!(python_sdk(&[]), expected_sdk("class Tools:\n    pass"));
    }

    #[test]
    fn one_tool_with_typed_arguments_and_output() {
        let input = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Absolute file path"},
                "offset": {"type": "integer"},
                "options": {"type": "object", "properties": {"follow": {"type": "boolean"}}, "required": ["follow"]}
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
            python_sdk(&[tool]),
            expected_sdk(
                "class ReadFileArgsOptions(TypedDict):
    follow: bool

class ReadFileArgs(TypedDict):
    # Absolute file path
    path: str
    offset: NotRequired[int]
    options: NotRequired[ReadFileArgsOptions]

ReadFileOutput = str

class Tools:
    # Read a file from disk.
    async def read_file(self, args: ReadFileArgs) -> ReadFileOutput: ..."
            )
        );
    }

    #[test]
    fn exotic_names_use_subscript_and_colliding_stems_are_numbered() {
        let schema = json!({"type": "object", "properties": {"my-key": {"type": "string"}}});
        let names = ["my-tool", "my_tool", "class", "__proto__"];
        let tools: Vec<SdkTool> = names
            .iter()
            .map(|name| SdkTool {
                name,
                description: "",
                input_schema: &schema,
                output_schema: &schema,
            })
            .collect();
        let sdk = python_sdk(&tools);
        assert_eq!(
            sdk,
            python_sdk(&tools.iter().rev().copied().collect::<Vec<_>>())
        );
        assert_eq!(
            sdk,
            expected_sdk(
                "ProtoArgs = dict[str, Any]

ProtoOutput = dict[str, Any]

ClassArgs = dict[str, Any]

ClassOutput = dict[str, Any]

MyToolArgs = dict[str, Any]

MyToolOutput = dict[str, Any]

MyToolArgs2 = dict[str, Any]

MyToolOutput2 = dict[str, Any]

class Tools:
    async def my_tool(self, args: MyToolArgs2) -> MyToolOutput2: ...
    @overload
    def __getitem__(self, name: Literal[\"__proto__\"]) -> Callable[[ProtoArgs], Awaitable[ProtoOutput]]: ...
    @overload
    def __getitem__(self, name: Literal[\"class\"]) -> Callable[[ClassArgs], Awaitable[ClassOutput]]: ...
    @overload
    def __getitem__(self, name: Literal[\"my-tool\"]) -> Callable[[MyToolArgs], Awaitable[MyToolOutput]]: ..."
            )
        );
    }
}
