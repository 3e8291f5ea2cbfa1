/// { "tools": [{ "name": "count", "description": "Counts.", "parameters": {}, "output": { "schema": { "type": "integer" } }, "concurrencySafe": true }],
///   "answers": { "count": { "result": { "value": "seven" } } } }
// A client value that breaks the declared output schema fails the sub-call.
try {
  await tools.count({});
} catch (e) {
  return e.message;
}
