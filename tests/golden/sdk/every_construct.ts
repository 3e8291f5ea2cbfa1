## Writing code for run_code

`run_code` takes two required arguments: `code` — the body of an async TypeScript function (erasable syntax only — no `enum` or namespaces; type annotations are advisory, the code runs type-stripped) — and `description`, a short summary of what the program does. Inside the program:

- Call tools as `await tools.name(args)` — quoted access for exotic names: `tools["my-tool"](args)`. Every call resolves to the tool's typed canonical JSON value. Tool arguments must be lossless JSON.
- A FAILED tool call rejects with `ToolCallError`, whose `toolName` identifies the failed tool and whose `message` is human-readable — `try/catch` it to handle and continue.
- Independent read-only calls MAY overlap under `Promise.all` (safe calls run concurrently; mutating calls run alone, in submission order). Sequence dependent work with `await`.
- Emit results with `return` and/or `console.log(...)`. ONLY what you print or return comes back to you — intermediate tool results never enter the conversation, so extract just what you need.

The available tools:

```ts
type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

interface ToolArgsMap {
  collections: {
    tags: string[];
    matrix?: number[][];
    any_list?: JsonValue[];
    points?: {
      x: number;
      y: number;
    }[];
    /** Nested settings. */
    config?: {
      host: string;
      retry?: {
        times?: number;
        [key: string]: JsonValue | undefined;
      };
      [key: string]: unknown;
    };
    bag?: {
      [key: string]: JsonValue;
    };
    sealed?: Record<string, never>;
    [key: string]: unknown;
  };
  /** Raw constructs outside the supported subset. */
  degraded: {
    either: unknown;
    tuple?: unknown;
    ref?: unknown;
    [key: string]: unknown;
  };
  /** Enums and consts. */
  literals: {
    mode: "fast" | "deep";
    level?: 1 | 2 | 3;
    fixed?: "v1";
    on?: true;
    [key: string]: JsonValue | undefined;
  };
  /** An exotic name with an exotic field. */
  "my-tool": {
    "my-key": string;
    class?: string;
    [key: string]: JsonValue | undefined;
  };
  /**
   * Every scalar type.
   *
   * With a second paragraph.
   */
  scalars: {
    /** Some text */
    text: string;
    count: number;
    ratio?: number;
    flag?: boolean;
    nothing?: null;
    /** Any JSON */
    anything?: JsonValue;
    [key: string]: JsonValue | undefined;
  };
}

interface ToolOutputMap {
  collections: {
    items: (string | {
      id: number;
      [key: string]: JsonValue;
    })[];
    [key: string]: JsonValue;
  };
  degraded: {
    map?: unknown;
    unions?: number | null;
  };
  literals: "ok" | 0 | 1.5 | false | null;
  "my-tool": {
    ok: boolean;
  };
  scalars: string | null;
}

type ToolName = keyof ToolArgsMap;

declare class ToolCallError extends Error { readonly toolName: ToolName; readonly message: string; }

declare const tools: { readonly [K in ToolName]: (args: ToolArgsMap[K]) => Promise<ToolOutputMap[K]> };
```