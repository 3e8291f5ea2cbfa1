// A tool the scope does not see has no binding: `tools.nope` is undefined, so calling it is
// the program's own TypeError, and nothing reaches the pipeline.
try {
  await tools.nope({ a: 1 });
} catch (e) {
  return [typeof tools.nope, "nope" in tools, e.name];
}
