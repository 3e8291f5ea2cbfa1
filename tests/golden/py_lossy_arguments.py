## { "tools": ["echo"] }
# Lossy arguments reject the one call before dispatch: no number, no event, no tools/result.
rejected = []
cyclic = {}
cyclic["self"] = cyclic
for bad in [
    {"n": float("nan")},
    {"n": float("inf")},
    {"deep": [1, {"x": -float("inf")}]},
    {1: "int key"},
    cyclic,
    {"s": {1, 2}},
    {"b": b"bytes"},
    {"o": object()},
    {"s": "\ud800"},
    {"big": 2**53 + 1},
    {"z": -0.0},
]:
    try:
        await tools.echo(bad)
        rejected.append("accepted?")
    except TypeError as e:
        rejected.append(str(e))
for args, kwargs in [(({}, {}), {}), ((), {}), (({},), {"extra": 1})]:
    try:
        await tools.echo(*args, **kwargs)
    except (TypeError, ToolCallError) as e:
        # No argument at all is a ToolCallError that says what to pass instead.
        rejected.append(f"{type(e).__name__}: {e}")
# The first lossless call is dispatch 1; tuples are arrays.
rejected.append(await tools.echo({"ok": True, "t": (1, 2)}))
return rejected
