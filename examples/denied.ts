// A permission rule denies `write` (see examples/denied.toml); the denial reaches the
// program as a ToolCallError it can catch, and the run goes on.
try {
  await tools.write({ file_path: "notes.txt", content: "hello" });
  return "unexpected: the write went through";
} catch (error) {
  if (!(error instanceof ToolCallError)) throw error;
  console.log(`${error.toolName} was refused: ${error.message}`);
}
const readme = await tools.read({ file_path: "README.md", limit: 1 });
return { firstLine: readme.lines[0]?.text ?? "" };
