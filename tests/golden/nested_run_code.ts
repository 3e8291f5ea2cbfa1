// run_code reached from inside a program.
try {
  return await tools.run_code({ code: "return 'inner'", description: "nested" });
} catch (e) {
  return ["rejected", e.toolName, e.message];
}
