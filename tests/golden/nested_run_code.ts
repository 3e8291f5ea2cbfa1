// run_code is not among a program's bindings: a program cannot start a run of its own.
try {
  return await tools.run_code({ code: "return 'inner'", description: "nested" });
} catch (e) {
  return ["rejected", e.toolName, "run_code" in tools, e.name, e.message];
}
