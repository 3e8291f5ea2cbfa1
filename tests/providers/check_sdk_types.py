"""Validates dsh-tools' provider shapes against the official SDKs' own types, offline.

Reads one JSON file (argv[1]) written by tests/suite/providers/sdk.rs:
  { "prompts": { "<format>": <tools/prompt result> },
    "native": <tools/prompt result of anthropic with nativeToolSearch>,
    "results": { "<format>": [<providerResult>, ...] } }
For each provider it builds the SDK's request object (Anthropic MessageCreateParams,
OpenAI Responses and Chat Completions create params, google-genai GenerateContentConfig)
from the tools as given, and validates every tool and result block; OpenAI's strict-mode
rules are then checked one by one on every `strict: true` tool. Prints one line per check
group and exits 1 on the first failure, naming the tool and the rule.
"""

import json
import sys
import typing

import pydantic
import anthropic.types as at
import anthropic.types.beta as bt
from anthropic.types import message_create_params as amc
from anthropic.types.beta import message_create_params as bmc
from openai.types.responses import response_create_params as rcp
from openai.types.chat import completion_create_params as ccp
import openai.types.chat as oc
import openai.types.responses as orr
from openai.types.responses.response_input_item_param import FunctionCallOutput
from google.genai import types as gt
import mcp.types as mt


def fail(message):
    print(f"FAIL {message}")
    sys.exit(1)


def keys_of(typed_dict):
    return set(typing.get_type_hints(typed_dict).keys())


def validate(typed, value, what):
    try:
        validated = pydantic.TypeAdapter(typed).validate_python(value)
    except pydantic.ValidationError as error:
        fail(f"{what}: {error}")
    return validated


def validate_request(typed, request, what):
    """A create-params TypedDict: its `tools` (an `Iterable`, which pydantic would validate
    only as it is consumed) as a list of the element type, the rest as the TypedDict."""
    element = typing.get_args(typing.get_type_hints(typed)["tools"])[0]
    validate(list[element], request["tools"], f"{what} tools")
    validate(typed, {k: v for k, v in request.items() if k != "tools"}, what)


def exact_keys(typed_dict, value, what):
    extra = set(value) - keys_of(typed_dict)
    if extra:
        fail(f"{what}: keys {sorted(extra)} are not in {typed_dict.__name__}")


def check_anthropic(prompt, native):
    tools = prompt["tools"]
    for tool in tools:
        validate(at.ToolParam, tool, f"anthropic tool {tool.get('name')}")
        exact_keys(at.ToolParam, tool, f"anthropic tool {tool.get('name')}")
        if tool["input_schema"].get("type") != "object":
            fail(f"anthropic tool {tool['name']}: input_schema.type is not object")
    request = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 16,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": tools,
    }
    validate_request(amc.MessageCreateParamsNonStreaming, request, "anthropic request")
    # Native deferral: Anthropic's tool search tool first, then the tools, some with defer_loading.
    search = native["tools"][0]
    if native.get("toolSearch") != search:
        fail("anthropic native: toolSearch is not the first tool")
    validate(at.ToolSearchToolBm25_20251119Param, search, "anthropic tool search tool")
    exact_keys(at.ToolSearchToolBm25_20251119Param, search, "anthropic tool search tool")
    deferred = [t for t in native["tools"][1:] if t.get("defer_loading")]
    if not deferred:
        fail("anthropic native: no tool has defer_loading")
    for tool in native["tools"][1:]:
        validate(at.ToolParam, tool, f"anthropic tool {tool.get('name')}")
        exact_keys(at.ToolParam, tool, f"anthropic tool {tool.get('name')}")
    request = dict(request, tools=native["tools"])
    validate_request(amc.MessageCreateParamsNonStreaming, request, "anthropic request with tool search")
    validate_request(bmc.MessageCreateParamsNonStreaming, request, "anthropic beta request with tool search")
    print(f"anthropic: {len(tools)} tools, request valid; native deferral: {len(deferred)} deferred tools + {search['type']}")


STRICT_KEYWORDS = {
    "type", "title", "description", "enum", "const", "$ref", "$defs", "definitions",
    "pattern", "format", "minLength", "maxLength", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems",
    "properties", "required", "additionalProperties", "items", "anyOf",
}
STRICT_FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}


def admits_null(schema):
    t = schema.get("type")
    if t == "null" or (isinstance(t, list) and "null" in t):
        return True
    if None in schema.get("enum", [1]) and "enum" in schema:
        return True
    return any(admits_null(b) for b in schema.get("anyOf", []))


def strict_rules(name, parameters, original, counts):
    """OpenAI strict mode's rules, one by one, with the rule's name on failure."""
    if parameters.get("type") != "object":
        fail(f"{name}: rule 'root is an object' broken")
    if "anyOf" in parameters:
        fail(f"{name}: rule 'root is not anyOf' broken")
    stack = [(parameters, original, "", 0)]
    while stack:
        node, source, path, objects = stack.pop()
        unknown = set(node) - STRICT_KEYWORDS
        if unknown:
            fail(f"{name}{path}: rule 'only supported keywords' broken by {sorted(unknown)}")
        if "format" in node and node["format"] not in STRICT_FORMATS:
            fail(f"{name}{path}: rule 'only supported formats' broken by {node['format']}")
        counts["enum"] += len(node.get("enum", []))
        if node.get("type") == "object" or "properties" in node:
            objects += 1
            if objects > 10:
                fail(f"{name}{path}: rule 'at most 10 object levels' broken")
            properties = node.get("properties", {})
            counts["properties"] += len(properties)
            if node.get("additionalProperties") is not False:
                fail(f"{name}{path}: rule 'additionalProperties: false' broken")
            if sorted(node.get("required", [])) != sorted(properties):
                fail(f"{name}{path}: rule 'every property required' broken")
            source_props = (source or {}).get("properties", {})
            source_required = set((source or {}).get("required", []))
            for key, child in properties.items():
                if key in source_props and key not in source_required and not admits_null(child):
                    fail(f"{name}{path}/properties/{key}: rule 'optional becomes nullable' broken")
                stack.append((child, source_props.get(key), f"{path}/properties/{key}", objects))
        if isinstance(node.get("items"), dict):
            stack.append((node["items"], (source or {}).get("items"), f"{path}/items", objects))
        for i, branch in enumerate(node.get("anyOf", [])):
            stack.append((branch, None, f"{path}/anyOf/{i}", objects))
        for defs in ("$defs", "definitions"):
            for key, child in node.get(defs, {}).items():
                stack.append((child, None, f"{path}/{defs}/{key}", objects))
    if counts["properties"] > 5000:
        fail(f"{name}: rule 'at most 5000 properties' broken")
    if counts["enum"] > 1000:
        fail(f"{name}: rule 'at most 1000 enum values' broken")


def check_openai(responses, chat, originals):
    strict = 0
    for tool in responses["tools"]:
        validate(orr.FunctionToolParam, tool, f"openai-responses tool {tool.get('name')}")
        exact_keys(orr.FunctionToolParam, tool, f"openai-responses tool {tool.get('name')}")
        if tool["strict"]:
            strict += 1
            strict_rules(tool["name"], tool["parameters"], originals.get(tool["name"]), {"properties": 0, "enum": 0})
    request = {"model": "gpt-5", "input": "hi", "tools": responses["tools"]}
    validate_request(rcp.ResponseCreateParamsNonStreaming, request, "openai responses request")
    for tool in chat["tools"]:
        validate(oc.ChatCompletionFunctionToolParam, tool, f"openai-chat tool {tool['function'].get('name')}")
        exact_keys(oc.ChatCompletionFunctionToolParam, tool, "openai-chat tool")
        from openai.types.shared_params import FunctionDefinition
        exact_keys(FunctionDefinition, tool["function"], f"openai-chat function {tool['function']['name']}")
        if tool["function"]["strict"]:
            strict_rules(tool["function"]["name"], tool["function"]["parameters"], originals.get(tool["function"]["name"]), {"properties": 0, "enum": 0})
    request = {"model": "gpt-5", "messages": [{"role": "user", "content": "hi"}], "tools": chat["tools"]}
    validate_request(ccp.CompletionCreateParamsNonStreaming, request, "openai chat request")
    print(f"openai: {len(responses['tools'])} responses tools and {len(chat['tools'])} chat tools, requests valid; strict rules hold on {strict} strict tools")


def check_gemini(prompt):
    declarations = 0
    for tool in prompt["tools"]:
        try:
            validated = gt.Tool.model_validate(tool)
        except pydantic.ValidationError as error:
            fail(f"gemini tool: {error}")
        declarations += len(validated.function_declarations or [])
    try:
        gt.GenerateContentConfig.model_validate({"tools": prompt["tools"]})
    except pydantic.ValidationError as error:
        fail(f"gemini request config: {error}")
    print(f"gemini: {declarations} function declarations, GenerateContentConfig valid")


def check_mcp(prompt):
    for tool in prompt["tools"]:
        try:
            mt.Tool.model_validate(tool)
        except pydantic.ValidationError as error:
            fail(f"mcp tool {tool.get('name')}: {error}")
    print(f"mcp: {len(prompt['tools'])} tools valid")


def check_results(results):
    checks = {
        "anthropic": lambda r: validate(at.ToolResultBlockParam, r, "anthropic tool_result"),
        "openai-responses": lambda r: validate(FunctionCallOutput, r, "openai function_call_output"),
        "openai-chat": lambda r: validate(oc.ChatCompletionToolMessageParam, r, "openai tool message"),
        "gemini": lambda r: gt.Part.model_validate(r),
        "mcp": lambda r: mt.CallToolResult.model_validate(r),
    }
    for format, blocks in results.items():
        for block in blocks:
            try:
                checks[format](block)
            except pydantic.ValidationError as error:
                fail(f"{format} result {block}: {error}")
    print(f"results: {sum(len(b) for b in results.values())} tool-result blocks valid")


def main():
    with open(sys.argv[1]) as file:
        data = json.load(file)
    prompts = data["prompts"]
    originals = {tool["name"]: tool["inputSchema"] for tool in prompts["mcp"]["tools"]}
    check_anthropic(prompts["anthropic"], data["native"])
    check_openai(prompts["openai-responses"], prompts["openai-chat"], originals)
    check_gemini(prompts["gemini"])
    check_mcp(prompts["mcp"])
    check_results(data["results"])
    print("OK")


main()
