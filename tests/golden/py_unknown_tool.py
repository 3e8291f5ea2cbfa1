# A tool the scope does not see has no binding: reading it raises AttributeError (KeyError by
# subscript), and nothing reaches the pipeline.
try:
    await tools.nope({"a": 1})
except AttributeError as e:
    return [type(e).__name__, str(e), "nope" in tools]
