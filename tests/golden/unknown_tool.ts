// A binding for a tool nobody registered rejects with the pipeline's message.
try {
  await tools.nope({ a: 1 });
} catch (e) {
  return [e.toolName, e.message];
}
