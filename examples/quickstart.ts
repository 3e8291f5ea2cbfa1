// Quickstart: what is this repository made of? Independent read-only calls run in
// parallel through the full pipeline (validation, policy, scheduling); only the small
// summary below comes back to the model, not the file lists.
const [sources, tests, modules, readme] = await Promise.all([
  tools.glob({ pattern: "src/**/*.rs" }),
  tools.glob({ pattern: "tests/suite/**/*.rs" }),
  tools.grep({ pattern: "^pub mod ", path: "src/lib.rs", output_mode: "content" }),
  tools.read({ file_path: "README.md", limit: 1 }),
]);
if (modules.mode !== "content") throw new Error("unexpected grep mode");

console.log(`project: ${readme.lines[0]?.text.replace(/^#\s*/, "")}`);
return {
  rustSourceFiles: sources.total,
  integrationTestFiles: tests.total,
  libraryModules: modules.files.flatMap((f) => f.matches.map((m) => m.line.replace("pub mod ", "").replace(";", ""))),
};
