## { "tools": [{ "name": "echo", "description": "Echo the text back.", "parameters": { "text": { "type": "string", "required": true } }, "output": { "schema": { "type": "string" } }, "concurrencySafe": true }],
##   "answers": { "echo": "text" } }
# A binding call resolves to the tool's canonical value.
reply = await tools.echo({"text": "hi"})
print("got", reply)
return reply.upper()
