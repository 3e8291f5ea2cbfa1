# A binding for a tool nobody registered raises the pipeline's message.
try:
    await tools.nope({"a": 1})
except ToolCallError as e:
    return [e.tool_name, e.message]
