/// { "tools": ["flaky"], "answers": { "flaky": { "error": "disk full" } } }
// A failed call rejects with ToolCallError carrying only toolName and message.
try {
  await tools.flaky({ path: "/tmp/x" });
  return "unreachable";
} catch (e) {
  return {
    isToolCallError: e instanceof ToolCallError,
    isError: e instanceof Error,
    name: e.name,
    toolName: e.toolName,
    message: e.message,
    keys: Object.keys(e),
  };
}
