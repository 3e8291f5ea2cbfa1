/// { "tools": ["numbers"], "answers": { "numbers": { "result": { "value": { "f": 1.10, "e": 1e2, "int": 100 } } } } }
// Client numbers reach the program as JavaScript numbers and print canonically.
const v = await tools.numbers({});
console.log(JSON.stringify(v));
return v;
