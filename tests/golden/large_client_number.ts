/// { "tools": ["big"], "answers": { "big": { "result": { "value": { "n": 12345678901234567890, "f": 1.10 } } } } }
// Values reach the program as JavaScript numbers.
const v = await tools.big({});
return [v.n, v.f, typeof v.n];
