/// { "tools": [{ "name": "echo", "description": "Echo the text back.", "parameters": { "text": { "type": "string", "required": true } }, "output": { "schema": { "type": "string" } }, "concurrencySafe": true }],
///   "answers": { "echo": "text" } }
// Schema validation of a sub-call is the pipeline's: the dispatch happens and fails.
const errors: string[] = [];
for (const args of [{ text: 5 }, {}, { text: "ok", extra: true }]) {
  try {
    errors.push("ok: " + (await tools.echo(args as any)));
  } catch (e) {
    errors.push(e.message);
  }
}
return errors;
