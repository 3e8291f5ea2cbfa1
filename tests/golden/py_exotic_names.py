## { "tools": ["my-tool", "class", "__proto__", "get"] }
# Exotic names are reached by subscript; any name is a binding, attribute or subscript.
return [
    await tools["my-tool"]({"k": 1}),
    await tools["class"]({"k": 2}),
    await tools["__proto__"]({"k": 3}),
    await tools.get({"k": 4}),
]
