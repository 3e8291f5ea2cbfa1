# A tool the scope does not see has no binding: reading it raises a ToolCallError (also an
# AttributeError, a KeyError by subscript) naming the closest bindings and the visible count,
# and nothing reaches the pipeline.
try:
    await tools.nope({"a": 1})
except AttributeError as e:
    return [type(e).__name__, isinstance(e, ToolCallError), e.tool_name, str(e), "nope" in tools]
