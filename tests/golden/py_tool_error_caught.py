## { "tools": ["flaky"], "answers": { "flaky": { "error": "disk full" } } }
# A failed call raises ToolCallError carrying only tool_name and message.
try:
    await tools.flaky({"path": "/tmp/x"})
    return "unreachable"
except ToolCallError as e:
    return {
        "isToolCallError": isinstance(e, ToolCallError),
        "isException": isinstance(e, Exception),
        "name": type(e).__name__,
        "tool_name": e.tool_name,
        "message": e.message,
        "str": str(e),
    }
