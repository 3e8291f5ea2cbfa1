## { "tools": ["flaky"], "answers": { "flaky": { "error": "disk full" } } }
# An uncaught ToolCallError fails the run (no program position for tool failures).
print("before")
await tools.flaky({})
print("after")
