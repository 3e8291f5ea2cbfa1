/// { "tools": ["flaky"], "answers": { "flaky": { "error": "disk full" } } }
// An uncaught ToolCallError fails the run (no program position for tool failures).
console.log("before");
await tools.flaky({});
console.log("after");
