/// { "tools": ["echo"] }
// A binding is a function that always answers with a promise: never a constructor, no
// prototype, and a refusal (two arguments here) is a rejection, not a synchronous throw.
const echo = tools.echo;
let constructed = "no";
try {
  new (echo as any)({});
  constructed = "yes";
} catch (error) {
  constructed = (error as Error).constructor.name;
}
const refused = (echo as any)(1, 2);
const answered = echo({ n: 1 });
let reason = "";
try {
  await refused;
} catch (error) {
  reason = `${(error as ToolCallError).name}: ${(error as ToolCallError).message}`;
}
return {
  type: typeof echo,
  name: echo.name,
  prototype: "prototype" in echo,
  constructed,
  refusedIsPromise: refused instanceof Promise,
  answeredIsPromise: answered instanceof Promise,
  value: await answered,
  reason,
};
