/// { "tools": ["a", "b", "c"] }
// Overlapping safe calls resolve to their own values in program order.
const [a, b, c] = await Promise.all([tools.a({ n: 1 }), tools.b({ n: 2 }), tools.c({ n: 3 })]);
return [a, b, c];
