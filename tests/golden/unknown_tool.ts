// A tool the scope does not see has no binding: reading `tools.nope` throws a ToolCallError
// naming the closest bindings and the visible count, and nothing reaches the pipeline.
try {
  await tools.nope({ a: 1 });
} catch (e) {
  return [e instanceof ToolCallError, e.toolName, "nope" in tools, e.name, e.message];
}
