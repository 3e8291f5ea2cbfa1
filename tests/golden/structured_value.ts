/// { "tools": ["lookup"], "answers": { "lookup": { "result": { "value": { "rows": [{ "id": 1, "name": "a" }, { "id": 2, "name": "b" }], "total": 2 }, "content": [{ "type": "text", "text": "two rows (model-facing text the program never sees)" }] } } } }
// The program gets the canonical value, not the content, and extracts what it needs.
const found = await tools.lookup({ query: "all" });
return found.rows.map((row: { name: string }) => row.name).join(",") + " of " + found.total;
