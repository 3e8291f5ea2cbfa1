## { "tools": [{ "name": "echo", "description": "Echo the text back.", "parameters": { "text": { "type": "string", "required": true } }, "output": { "schema": { "type": "string" } }, "concurrencySafe": true }],
##   "answers": { "echo": "text" } }
# Schema validation of a sub-call is the pipeline's: the dispatch happens and fails.
errors = []
for args in [{"text": 5}, {}, {"text": "ok", "extra": True}]:
    try:
        errors.append("ok: " + await tools.echo(args))
    except ToolCallError as e:
        errors.append(e.message)
return errors
