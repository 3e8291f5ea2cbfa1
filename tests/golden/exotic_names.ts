/// { "tools": ["my-tool", "constructor", "__proto__"] }
// Exotic names are reached with quoted access; every string key is a binding.
return [await tools["my-tool"]({ k: 1 }), await tools["constructor"]({ k: 2 }), await tools["__proto__"]({ k: 3 })];
