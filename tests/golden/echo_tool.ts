/// { "tools": [{ "name": "echo", "description": "Echo the text back.", "parameters": { "text": { "type": "string", "required": true } }, "output": { "schema": { "type": "string" } }, "concurrencySafe": true }],
///   "answers": { "echo": "text" } }
// A binding call resolves to the tool's canonical value.
const reply = await tools.echo({ text: "hi" });
console.log("got", reply);
return reply.toUpperCase();
