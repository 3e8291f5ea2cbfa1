/// { "tools": ["first"],
///   "answers": { "first": { "result": { "value": 1, "additionalContexts": [{ "role": "user", "content": "kept", "source": "s" }] } } } }
// Contexts survive a program that fails afterwards.
await tools.first({});
throw new Error("later failure");
