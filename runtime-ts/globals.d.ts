// globals.d.ts: what a Code Mode program sees besides the ECMAScript standard library.
//
// A program is the body of an async function (top-level `await` and `return` work). The
// global object keeps the standard library (Object, Array, JSON, Math, Promise, Map, Set,
// typed arrays, Proxy, Reflect, Intl-free Date, RegExp, BigInt, Symbol, WeakRef, Iterator,
// DisposableStack, eval, Function, atob, btoa, ...) and adds exactly the declarations below.
// Not present: Atomics and SharedArrayBuffer (a blocking wait could outlive every budget),
// Intl and Temporal (the engine only had partial stand-ins), WebAssembly, performance,
// queueMicrotask, ShadowRealm, gc, Deno, and every engine-private name. `import()` rejects.
// The generated SDK (codegen) narrows `tools` to the visible tools' argument and result types.

/** A value that crosses the tool boundary without loss. */
type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * One tool binding. The argument is snapshotted as lossless JSON before the call: undefined
 * anywhere, BigInt, -0, NaN, Infinity, functions, symbols, cycles, sparse arrays, accessors,
 * non-enumerable or symbol-keyed properties and objects other than plain objects and arrays
 * reject that one call with a ToolCallError, without reaching the tool; so does calling it
 * with no argument (pass an object such as `{}`).
 * The promise resolves with the tool's canonical JSON value or rejects with ToolCallError.
 */
type ToolBinding = (args: JsonValue) => Promise<JsonValue>;

/**
 * One own, enumerable binding per tool the scope saw when the run started (`run_code`
 * excluded), exotic names included: `tools["my-tool"]`, `tools.__proto__`,
 * `tools.constructor`. Reading any other name throws a ToolCallError listing the closest
 * names and how many tools are visible (test with `"name" in tools`); the object cannot be
 * modified.
 */
declare const tools: { readonly [name: string]: ToolBinding };

/** A failed tool call. `toolName` names the tool; `message` is human-readable. */
declare class ToolCallError extends Error {
  constructor(toolName: string, message: string);
  readonly name: "ToolCallError";
  toolName: string;
}

/**
 * Five methods, each appending one line to the run's logs: strings raw, other primitives via
 * String(), Errors as `name: message`, objects and arrays as JSON (cycles become
 * "[Circular]", BigInts "<n>n"), functions as `[Function: name]`, joined by spaces.
 */
declare const console: {
  log(...data: unknown[]): void;
  info(...data: unknown[]): void;
  warn(...data: unknown[]): void;
  error(...data: unknown[]): void;
  debug(...data: unknown[]): void;
};

/**
 * Run-scoped timers: a pending timer neither keeps the run alive nor fires after the run ends.
 * An error thrown by the callback fails the run. Waiting spends no compute budget.
 */
declare function setTimeout<A extends unknown[]>(
  callback: (...args: A) => void,
  delay?: number,
  ...args: A
): number;
declare function clearTimeout(id: number | undefined): void;
