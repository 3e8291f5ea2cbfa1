// bootstrap.ts: the isolate side of the runtime, evaluated before any program exists.
//
// It builds what model programs see (`tools`, `ToolCallError`, `console`, run-scoped
// `setTimeout`/`clearTimeout`), the lossless JSON snapshot and the harness. Evaluating it
// defines everything and leaves one global, `__dshFinish`; the host evaluates it once into a
// startup snapshot, and each fresh isolate restored from that snapshot calls `__dshFinish()`,
// which binds the dsh ops, removes every engine internal from the global object (itself
// included), installs the program globals and returns the pair [harness, settle] the host
// keeps: harness runs the compiled program, settle completes tasks (binding calls, timers)
// the host finished later.
//
// It is written in the common subset of TypeScript and JavaScript (no type syntax) so that
// type stripping leaves it byte-identical; the shapes it gives programs are declared in
// `globals.d.ts`. Everything used while a program runs is captured here, before any program
// code exists, so a program that patches built-in prototypes cannot redirect the bridge.
"use strict";

((global) => {
  // ---- captured intrinsics ------------------------------------------------------------
  const ReflectApply = Reflect.apply;
  /**
   * `uncurry(f)(self, ...args)` is `f.call(self, ...args)` without looking anything up on
   * `f` at call time; a bound call is also cheaper than `Reflect.apply` with an argument array.
   */
  const uncurry = (fn) => ReflectApply(Function.prototype.bind, Function.prototype.call, [fn]);
  const ReflectOwnKeys = Reflect.ownKeys;
  const ReflectGetPrototypeOf = Reflect.getPrototypeOf;
  const ReflectDeleteProperty = Reflect.deleteProperty;
  const ObjectDefineProperty = Object.defineProperty;
  const ObjectGetOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
  const ObjectSetPrototypeOf = Object.setPrototypeOf;
  const ObjectFreeze = Object.freeze;
  const ObjectHasOwn = Object.hasOwn;
  const ObjectIs = Object.is;
  const ObjectPrototype = Object.prototype;
  const objectToString = uncurry(Object.prototype.toString);
  const ArrayIsArray = Array.isArray;
  const ArrayPrototype = Array.prototype;
  const JSONStringify = JSON.stringify;
  const JSONParse = JSON.parse;
  const NumberIsFinite = Number.isFinite;
  const MathMin = Math.min;
  const MathTrunc = Math.trunc;
  const StringCtor = String;
  const sliceString = uncurry(String.prototype.slice);
  const StringPrototypeIndexOf = String.prototype.indexOf;
  const StringPrototypeStartsWith = String.prototype.startsWith;
  const charCodeAt = uncurry(String.prototype.charCodeAt);
  const toLowerCase = uncurry(String.prototype.toLowerCase);
  const lastIndexOf = uncurry(String.prototype.lastIndexOf);
  const ProxyCtor = Proxy;
  const MathMax = Math.max;
  const MathFloor = Math.floor;
  const isWellFormed = uncurry(String.prototype.isWellFormed);
  const RegExpPrototypeExec = RegExp.prototype.exec;
  const ErrorCtor = Error;
  const ErrorIsError = typeof Error.isError === "function" ? Error.isError : null;
  const TypeErrorCtor = TypeError;
  const SetCtor = Set;
  const setAdd = uncurry(Set.prototype.add);
  const setHas = uncurry(Set.prototype.has);
  const setDelete = uncurry(Set.prototype.delete);

  const PromiseCtor = Promise;
  const PromiseResolve = Promise.resolve;
  const resolvedWith = ReflectApply(Function.prototype.bind, PromiseResolve, [PromiseCtor]);
  const rejectedWith = ReflectApply(Function.prototype.bind, Promise.reject, [PromiseCtor]);

  // The seven dsh ops, bound by `finish` in the isolate that runs the program (never taken
  // from the snapshot). All are synchronous: no deno_core async-op JavaScript is on the path.
  let opCall;
  let opLog;
  let opTimer;
  let opCancelTimer;
  let opIsProxy;
  let opMaxDepth;
  let opToolNames;
  // The program's `tools` object, also made by `finish`.
  let tools;

  /** A fresh array that never consults Array.prototype, even for index writes. */
  const bareArray = () => ObjectSetPrototypeOf([], null);

  const isError = (value) => {
    if (ErrorIsError !== null) return ReflectApply(ErrorIsError, ErrorCtor, [value]);
    return value instanceof ErrorCtor;
  };

  // ---- tasks the host completes later ---------------------------------------------------

  // Task id -> what to do when the host finishes it: binding calls resolve a promise with
  // the reply, timers run their callback. Ids are unique across both tables.
  const waiting = { __proto__: null };
  const timers = { __proto__: null };

  const waitFor = (id) =>
    new PromiseCtor((resolve) => {
      waiting[id] = resolve;
    });

  /** Called by the host's driver when task `id` finished. */
  const settle = (id, reply) => {
    const table = waiting[id] !== undefined ? waiting : timers;
    const onDone = table[id];
    if (onDone === undefined) return;
    ReflectDeleteProperty(table, id);
    onDone(reply);
  };

  // ---- lossless JSON snapshot ----------------------------------------------------------
  // Serializes plain data (null, booleans, finite numbers other than -0, well-formed strings,
  // real arrays without holes, plain objects with Object.prototype or null prototype and only
  // enumerable string-keyed data properties) and names the first thing that is not.

  // The run's `transport.maxNestingDepth`, read by the harness when the run starts.
  let maxDepth = 0;
  const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

  /** `root.key`, `root["odd key"]`, `root[3]` for the chain of keys in `segments`. */
  const pathOf = (root, segments, depth) => {
    let path = root;
    for (let i = 0; i < depth; i++) {
      const key = segments[i];
      if (typeof key === "number") path += "[" + key + "]";
      else if (ReflectApply(RegExpPrototypeExec, IDENTIFIER, [key]) !== null) path += "." + key;
      else path += "[" + JSONStringify(key) + "]";
    }
    return path;
  };

  /** What a non-plain object is, for the rejection message: its built-in tag or its class. */
  const describeObject = (value, tag) => {
    if (tag !== "[object Object]" && tag !== "[object Array]") {
      return sliceString(tag, 8, -1);
    }
    const proto = ReflectGetPrototypeOf(value);
    if (proto !== null && typeof proto === "object") {
      const ctor = ObjectGetOwnPropertyDescriptor(proto, "constructor");
      if (ctor !== undefined && ObjectHasOwn(ctor, "value") && typeof ctor.value === "function") {
        const name = ObjectGetOwnPropertyDescriptor(ctor.value, "name");
        if (name !== undefined && typeof name.value === "string" && name.value !== "") {
          return name.value + " instance";
        }
      }
    }
    return "object with a custom prototype";
  };

  /**
   * One walk's state, indexed by depth: the containers on the path (`ancestors`), the key or
   * index leading into each (`segments`), each container's own keys and the next member to
   * visit (`keys`, `next`), and the containers deeper than SHALLOW_ANCESTORS in a Set, so
   * that cycle checks stay cheap at any depth. Reused across walks; a walk that starts while
   * another one runs (a program getter reached by the walk calls a tool) gets a fresh one.
   */
  const newWalk = () => ({
    __proto__: null,
    root: "",
    error: "",
    ancestors: bareArray(),
    segments: bareArray(),
    keys: bareArray(),
    next: bareArray(),
    deep: null,
  });
  const SHALLOW_ANCESTORS = 64;
  const idleWalk = newWalk();
  let walking = false;

  /**
   * The JSON text of property keys already seen: a key's text never changes, and computing it
   * is most of the cost of a small object. Bounded, so hostile key floods cost only memory
   * the cap allows.
   */
  const keyTexts = { __proto__: null };
  const KEY_TEXT_LIMIT = 4096;
  let keyTextCount = 0;
  const keyText = (key) => {
    const known = keyTexts[key];
    if (known !== undefined) return known;
    const text = JSONStringify(key);
    if (keyTextCount < KEY_TEXT_LIMIT) {
      keyTexts[key] = text;
      keyTextCount++;
    }
    return text;
  };

  /** Records why the value at `depth` is not lossless; always answers undefined. */
  const fail = (walk, depth, what) => {
    walk.error = pathOf(walk.root, walk.segments, depth) + what;
    return undefined;
  };

  /** The JSON text of a value that is not a container, or undefined after `fail`. */
  const scalarText = (walk, value, depth) => {
    switch (typeof value) {
      case "string":
        if (!isWellFormed(value)) {
          return fail(walk, depth, " is a string with a lone surrogate");
        }
        return JSONStringify(value);
      case "number":
        if (!NumberIsFinite(value)) return fail(walk, depth, " is " + StringCtor(value));
        if (value === 0 && ObjectIs(value, -0)) return fail(walk, depth, " is -0");
        return "" + value;
      case "boolean":
        return value ? "true" : "false";
      case "undefined":
        return fail(walk, depth, " is undefined");
      case "bigint":
        return fail(walk, depth, " is a BigInt");
      case "symbol":
        return fail(walk, depth, " is a symbol");
      case "function":
        return fail(walk, depth, " is a function");
      default:
        return "null";
    }
  };

  /**
   * Opens the container `value` at `depth` (after checking it is plain JSON data, not a
   * Proxy, not on its own path and not too deep): its text so far, or undefined after `fail`.
   */
  const open = (walk, value, depth) => {
    // Proxies first: every later check would run their traps.
    if (opIsProxy(value)) return fail(walk, depth, " is not plain JSON data (Proxy)");
    const ancestors = walk.ancestors;
    const shallow = depth < SHALLOW_ANCESTORS ? depth : SHALLOW_ANCESTORS;
    for (let i = 0; i < shallow; i++) {
      if (ancestors[i] === value) return fail(walk, depth, " is circular");
    }
    if (walk.deep !== null && setHas(walk.deep, value)) return fail(walk, depth, " is circular");
    if (depth >= maxDepth) return fail(walk, depth, " nests deeper than " + maxDepth + " levels");
    // Plain data has the plain prototype and the plain built-in tag; the tag also catches
    // exotic objects (Date, RegExp, Error, arguments, boxed primitives) given a plain prototype.
    const isArray = ArrayIsArray(value);
    const proto = ReflectGetPrototypeOf(value);
    const tag = objectToString(value);
    const plain = isArray
      ? proto === ArrayPrototype && tag === "[object Array]"
      : (proto === ObjectPrototype || proto === null) && tag === "[object Object]";
    if (!plain) {
      return fail(walk, depth, " is not plain JSON data (" + describeObject(value, tag) + ")");
    }
    ancestors[depth] = value;
    if (depth >= SHALLOW_ANCESTORS) {
      if (walk.deep === null) walk.deep = new SetCtor();
      setAdd(walk.deep, value);
    }
    walk.keys[depth] = ReflectOwnKeys(value);
    walk.next[depth] = 0;
    return isArray ? "[" : "{";
  };

  /**
   * The JSON text of `root`, or undefined after `fail`. The walk is iterative: the path of
   * open containers lives in `walk`, so any depth up to `maxDepth` costs no call stack.
   */
  const visit = (walk, root) => {
    let out = "";
    let value = root;
    let depth = 0;
    // The depth of the innermost open container, -1 when none is open.
    let top = -1;
    for (;;) {
      if (value !== null && typeof value === "object") {
        const opened = open(walk, value, depth);
        if (opened === undefined) return undefined;
        out += opened;
        top = depth;
      } else {
        const text = scalarText(walk, value, depth);
        if (text === undefined) return undefined;
        out += text;
      }
      // The next member to visit, closing every container that has none left.
      for (;;) {
        if (top < 0) return out;
        const container = walk.ancestors[top];
        const keys = walk.keys[top];
        const index = walk.next[top];
        if (ArrayIsArray(container)) {
          if (index < container.length) {
            walk.segments[top] = index;
            walk.next[top] = index + 1;
            const descriptor = ObjectGetOwnPropertyDescriptor(container, index);
            if (descriptor === undefined) return fail(walk, top + 1, " is a hole in a sparse array");
            if (!ObjectHasOwn(descriptor, "value")) return fail(walk, top + 1, " is an accessor property");
            if (index > 0) out += ",";
            value = descriptor.value;
            depth = top + 1;
            break;
          }
          if (keys.length !== container.length + 1) {
            for (let i = 0; i < keys.length; i++) {
              const key = keys[i];
              if (typeof key === "symbol") return fail(walk, top, " has a symbol-keyed property");
              if (key !== "length" && !(key === "" + (+key >>> 0) && +key < container.length)) {
                return fail(walk, top, " has a non-index property " + JSONStringify(key));
              }
            }
          }
          out += "]";
        } else {
          if (index < keys.length) {
            const key = keys[index];
            if (typeof key === "symbol") return fail(walk, top, " has a symbol-keyed property");
            walk.segments[top] = key;
            walk.next[top] = index + 1;
            const descriptor = ObjectGetOwnPropertyDescriptor(container, key);
            if (!ObjectHasOwn(descriptor, "value")) return fail(walk, top + 1, " is an accessor property");
            if (!descriptor.enumerable) return fail(walk, top + 1, " is not enumerable");
            out += (index === 0 ? "" : ",") + keyText(key) + ":";
            value = descriptor.value;
            depth = top + 1;
            break;
          }
          out += "}";
        }
        if (top >= SHALLOW_ANCESTORS) setDelete(walk.deep, container);
        walk.keys[top] = undefined;
        top--;
      }
    }
  };

  /** Where the last failed `snapshot` went wrong. */
  let snapshotError = "";

  /** The lossless JSON text of `root`, or undefined with the reason in `snapshotError`. */
  const snapshot = (root, rootPath) => {
    const nested = walking;
    const walk = nested ? newWalk() : idleWalk;
    walking = true;
    walk.root = rootPath;
    let json;
    try {
      json = visit(walk, root);
      if (json === undefined) snapshotError = walk.error;
    } catch (thrown) {
      // Only engine limits (memory) can throw here; report them as this call's failure.
      json = undefined;
      snapshotError = rootPath + " could not be read (" + safeString(thrown) + ")";
    }
    walk.ancestors.length = 0;
    walk.keys.length = 0;
    walk.next.length = 0;
    walk.deep = null;
    if (!nested) walking = false;
    return json;
  };

  /**
   * Parses the host's compact JSON with an explicit stack: the engine's JSON.parse recurses
   * and gives up on values nested a few thousand levels deep, which the host may still send
   * (its bound is `transport.maxNestingDepth`). The text is the host's own serialization, so
   * it is well formed; members are defined as JSON.parse defines them, never assigned.
   */
  const parseDeep = (text) => {
    const stack = bareArray();
    const pendingKey = bareArray();
    let root;
    let keyNext = false;
    const place = (value) => {
      const depth = stack.length;
      if (depth === 0) {
        root = value;
        return;
      }
      const parent = stack[depth - 1];
      const key = ArrayIsArray(parent) ? parent.length : pendingKey[depth - 1];
      ObjectDefineProperty(parent, key, {
        __proto__: null,
        value,
        writable: true,
        enumerable: true,
        configurable: true,
      });
    };
    let i = 0;
    while (i < text.length) {
      const c = text[i];
      if (c === "[" || c === "{") {
        const container = c === "[" ? [] : {};
        place(container);
        stack[stack.length] = container;
        keyNext = c === "{";
        i++;
      } else if (c === "]" || c === "}") {
        stack.length--;
        keyNext = false;
        i++;
      } else if (c === ",") {
        keyNext = !ArrayIsArray(stack[stack.length - 1]);
        i++;
      } else if (c === ":" || c === " " || c === "\n" || c === "\r" || c === "\t") {
        i++;
      } else if (c === "\"") {
        let end = i + 1;
        for (;;) {
          end = ReflectApply(StringPrototypeIndexOf, text, ["\"", end]);
          if (end === -1) throw new TypeErrorCtor("the host sent an unterminated string");
          let slashes = 0;
          while (text[end - 1 - slashes] === "\\") slashes++;
          if (slashes % 2 === 0) break;
          end++;
        }
        const string = JSONParse(sliceString(text, i, end + 1));
        if (keyNext) {
          pendingKey[stack.length - 1] = string;
          keyNext = false;
        } else {
          place(string);
        }
        i = end + 1;
      } else {
        NUMBER_OR_LITERAL.lastIndex = i;
        const match = ReflectApply(RegExpPrototypeExec, NUMBER_OR_LITERAL, [text]);
        const token = match[0];
        place(JSONParse(token));
        i += token.length;
      }
    }
    return root;
  };
  const NUMBER_OR_LITERAL = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null/y;

  /** JSON.parse, falling back to `parseDeep` for what is nested too deeply for it. */
  const parseReply = (text) => {
    try {
      return JSONParse(text);
    } catch {
      return parseDeep(text);
    }
  };

  // ---- describing values ---------------------------------------------------------------

  /** String(value) that never throws. */
  const safeString = (value) => {
    try {
      return StringCtor(value);
    } catch {
      try {
        return objectToString(value);
      } catch {
        return "[unprintable value]";
      }
    }
  };

  /** Reads a property without letting a throwing getter escape. */
  const safeGet = (object, key) => {
    try {
      return object[key];
    } catch {
      return undefined;
    }
  };

  /** `name: message`, as Error.prototype.toString joins them. */
  const errorHeader = (error) => {
    const rawName = safeGet(error, "name");
    const rawMessage = safeGet(error, "message");
    const name = rawName === undefined ? "Error" : safeString(rawName);
    const message = rawMessage === undefined ? "" : safeString(rawMessage);
    if (name === "") return message;
    if (message === "") return name;
    return name + ": " + message;
  };

  // The program is compiled as `(async function () {\n<program>\n})` named program.ts, so
  // engine line numbers are one more than the model's own.
  const PROGRAM_LINE_OFFSET = 1;
  const FRAME_IN_PARENS = /\(program\.ts:(\d+):(\d+)\)$/;
  const FRAME_BARE = /^\s*at (?:async )?program\.ts:(\d+):(\d+)$/;

  /** ` at program.ts:<line>:<column>` for the innermost program frame of an error, or "". */
  const programPosition = (error, header) => {
    const stack = safeGet(error, "stack");
    if (typeof stack !== "string") return "";
    let rest = ReflectApply(StringPrototypeStartsWith, stack, [header])
      ? sliceString(stack, header.length)
      : stack;
    while (rest !== "") {
      const newline = ReflectApply(StringPrototypeIndexOf, rest, ["\n"]);
      const line = newline === -1 ? rest : sliceString(rest, 0, newline);
      rest = newline === -1 ? "" : sliceString(rest, newline + 1);
      const match =
        ReflectApply(RegExpPrototypeExec, FRAME_IN_PARENS, [line]) ||
        ReflectApply(RegExpPrototypeExec, FRAME_BARE, [line]);
      if (match !== null) {
        const lineNumber = +match[1] - PROGRAM_LINE_OFFSET;
        if (lineNumber >= 1) return " at program.ts:" + lineNumber + ":" + match[2];
      }
    }
    return "";
  };

  /** The failure message of a value the program threw. */
  const describeThrown = (thrown) => {
    if (thrown !== null && (typeof thrown === "object" || typeof thrown === "function") && isError(thrown)) {
      const header = errorHeader(thrown);
      if (thrown instanceof ToolCallError) return header;
      return header + programPosition(thrown, header);
    }
    return safeString(thrown);
  };

  // ---- ToolCallError -------------------------------------------------------------------

  class ToolCallError extends ErrorCtor {
    constructor(toolName, message) {
      super(message);
      ObjectDefineProperty(this, "toolName", {
        __proto__: null,
        value: StringCtor(toolName),
        writable: true,
        enumerable: true,
        configurable: true,
      });
    }
  }
  ObjectDefineProperty(ToolCallError.prototype, "name", {
    __proto__: null,
    value: "ToolCallError",
    writable: true,
    enumerable: false,
    configurable: true,
  });

  // ---- tools ---------------------------------------------------------------------------

  const LOSSY = "arguments must be lossless JSON: ";
  /** `tools.x()` and `tools.x(undefined)`: nothing to send, and the fix is one `{}` away. */
  const NO_ARGUMENTS = LOSSY + "arguments is undefined (pass an object such as {})";

  /** A binding's value for the op's reply: "1<json>" resolves, "0<message>" rejects. */
  const settleReply = (name, reply) => {
    const payload = sliceString(reply, 1);
    if (reply[0] === "1") return parseReply(payload);
    throw new ToolCallError(name, payload);
  };

  /** The later answer of task `id` (an `await`, so no program-reachable `then` is used). */
  const awaitReply = async (name, id) => settleReply(name, await waitFor(id));

  // An arrow, not an async function (both are not constructible and have no `prototype`): an
  // immediate answer then costs one promise instead of a promise, an async frame and its
  // resolving functions, cyclic garbage that only QuickJS's collector frees.
  const makeBinding = (name) => {
    const binding = (...args) => {
      try {
        if (args.length > 1) {
          throw new ToolCallError(name, LOSSY + "expected one argument, got " + args.length);
        }
        // Rejected before the op: nothing is dispatched and no dispatch number is used.
        if (args[0] === undefined) throw new ToolCallError(name, NO_ARGUMENTS);
        const json = snapshot(args[0], "arguments");
        if (json === undefined) throw new ToolCallError(name, LOSSY + snapshotError);
        // The op answers "1<json>" for a value, "0<message>" for a failure, or "p<task id>"
        // when the host answers later.
        const reply = opCall(name, json);
        if (reply[0] !== "p") return resolvedWith(settleReply(name, reply));
        return awaitReply(name, +sliceString(reply, 1));
      } catch (error) {
        return rejectedWith(error);
      }
    };
    ObjectDefineProperty(binding, "name", { __proto__: null, value: name, configurable: true });
    return binding;
  };

  // ---- unknown names -------------------------------------------------------------------

  /** The run's binding names, for the unknown-name error (set by `defineBindings`). */
  let boundNames = bareArray();
  const MAX_SUGGESTIONS = 3;

  /** Levenshtein distance of two strings, by UTF-16 code unit. */
  const editDistance = (a, b) => {
    let previous = bareArray();
    for (let j = 0; j <= b.length; j++) previous[j] = j;
    for (let i = 1; i <= a.length; i++) {
      const current = bareArray();
      current[0] = i;
      const code = charCodeAt(a, i - 1);
      for (let j = 1; j <= b.length; j++) {
        const cost = code === charCodeAt(b, j - 1) ? 0 : 1;
        current[j] = MathMin(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
      }
      previous = current;
    }
    return previous[b.length];
  };

  /**
   * How far `name` is from the tool `tool`, ignoring case: the nearer of the whole name and,
   * for `mcp__server__tool`, the part after the last `__` (what a program most often means).
   */
  const distanceToTool = (name, tool) => {
    const wanted = toLowerCase(name);
    const whole = toLowerCase(tool);
    const cut = lastIndexOf(whole, "__");
    const own = cut > 0 ? sliceString(whole, cut + 2) : "";
    const distance = editDistance(wanted, whole);
    return own === "" ? distance : MathMin(distance, editDistance(wanted, own));
  };

  /**
   * `no tool named "x" (N tools visible; closest: "a", "b")`: the visible count, and up to
   * three names within max(2, length / 3) edits, nearest first (ties by name).
   */
  const unknownToolMessage = (name) => {
    const count = boundNames.length;
    const visible =
      count === 0 ? "no tools visible" : count === 1 ? "1 tool visible" : count + " tools visible";
    const limit = MathMax(2, MathFloor(name.length / 3));
    const best = bareArray();
    for (let i = 0; i < count; i++) {
      const tool = boundNames[i];
      const distance = distanceToTool(name, tool);
      if (distance > limit) continue;
      let at = best.length;
      while (at > 0) {
        const nearer = best[at - 1];
        if (nearer[0] < distance || (nearer[0] === distance && nearer[1] < tool)) break;
        best[at] = best[at - 1];
        at--;
      }
      best[at] = [distance, tool];
      if (best.length > MAX_SUGGESTIONS) best.length = MAX_SUGGESTIONS;
    }
    let text = "no tool named " + JSONStringify(name) + " (" + visible;
    for (let i = 0; i < best.length; i++) {
      text += (i === 0 ? "; closest: " : ", ") + JSONStringify(best[i][1]);
    }
    return text + ")";
  };

  /**
   * The prototype of `tools`: a name that is not a binding reaches it and throws a
   * ToolCallError naming the closest bindings, so `tools.nope(...)` says what went wrong
   * instead of "not a function". `in` still answers false; `then` and `toJSON` (asked by
   * `await` and JSON) and symbol keys read undefined, as on a plain object.
   */
  const unknownBindings = new ProxyCtor(ObjectFreeze({ __proto__: null }), {
    __proto__: null,
    get: (_target, key) => {
      if (typeof key !== "string" || key === "then" || key === "toJSON") return undefined;
      throw new ToolCallError(key, unknownToolMessage(key));
    },
  });

  /**
   * Gives `tools` one own, enumerable, read-only binding per name the run may call (the
   * scope's visible tools when the run started, `run_code` excluded). Any other name
   * (`hasOwnProperty`, `toString`, `run_code`) throws a ToolCallError on reading (see
   * `unknownBindings`); tools named `__proto__` or `constructor` are ordinary own keys.
   */
  const defineBindings = (names) => {
    boundNames = names;
    for (let i = 0; i < names.length; i++) {
      const name = names[i];
      ObjectDefineProperty(tools, name, {
        __proto__: null,
        value: makeBinding(name),
        writable: false,
        enumerable: true,
        configurable: false,
      });
    }
    ObjectFreeze(tools);
  };

  // ---- console -------------------------------------------------------------------------

  /** The JSON of a value, tolerating cycles and BigInts. */
  const tolerantJson = (value) => {
    const seen = bareArray();
    return JSONStringify(value, function (_key, item) {
      if (typeof item === "bigint") return StringCtor(item) + "n";
      if (item !== null && typeof item === "object") {
        while (seen.length > 0 && seen[seen.length - 1] !== this) seen.length--;
        for (let i = 0; i < seen.length; i++) if (seen[i] === item) return "[Circular]";
        seen[seen.length] = item;
      }
      return item;
    });
  };

  const formatValue = (value) => {
    switch (typeof value) {
      case "string":
        return value;
      case "undefined":
        return "undefined";
      case "function": {
        const name = ObjectGetOwnPropertyDescriptor(value, "name");
        const text = name !== undefined && typeof name.value === "string" ? name.value : "";
        return text === "" ? "[Function (anonymous)]" : "[Function: " + text + "]";
      }
      case "object":
        break;
      default:
        return safeString(value);
    }
    if (value === null) return "null";
    // Every property of `tools` is a binding: serializing it would call tools.toJSON.
    if (value === tools) return "[tools]";
    if (isError(value)) return errorHeader(value);
    try {
      const json = JSONStringify(value);
      if (typeof json === "string") return json;
    } catch {
      try {
        const json = tolerantJson(value);
        if (typeof json === "string") return json;
      } catch {
        // fall through to String()
      }
    }
    return safeString(value);
  };

  const makeConsoleMethod = (stream, name) => {
    const method = function (...args) {
      let line = "";
      for (let i = 0; i < args.length; i++) line += (i === 0 ? "" : " ") + formatValue(args[i]);
      opLog(stream, line);
    };
    ObjectDefineProperty(method, "name", { __proto__: null, value: name, configurable: true });
    return method;
  };

  // Stream numbers match LogStream on the Rust side: log, info, warn, error, debug.
  const console = {
    log: makeConsoleMethod(0, "log"),
    info: makeConsoleMethod(1, "info"),
    warn: makeConsoleMethod(2, "warn"),
    error: makeConsoleMethod(3, "error"),
    debug: makeConsoleMethod(4, "debug"),
  };

  // ---- run-scoped timers ---------------------------------------------------------------

  const MAX_DELAY_MS = 2147483647;

  const setTimeout = function (callback, delay, ...args) {
    if (typeof callback !== "function") {
      throw new TypeErrorCtor("setTimeout expects a function callback");
    }
    let ms = +delay;
    ms = ms >= 1 ? MathMin(MathTrunc(ms), MAX_DELAY_MS) : 0;
    const id = opTimer(ms);
    timers[id] = () => {
      try {
        ReflectApply(callback, undefined, args);
      } catch (thrown) {
        // An uncaught error in a timer fails the run, as an unhandled rejection does.
        rejectedWith(thrown);
      }
    };
    return id;
  };

  const clearTimeout = function (id) {
    if (typeof id === "number" && timers[id] !== undefined) {
      ReflectDeleteProperty(timers, id);
      opCancelTimer(id);
    }
  };

  // What programs keep: the ECMAScript standard library minus Atomics and SharedArrayBuffer
  // (a blocking wait no budget could interrupt) and Intl (the engine only has a stand-in that
  // formats wrongly and leans on an engine-private helper), plus atob and btoa.
  const KEEP = ObjectFreeze({
    __proto__: null,
    globalThis: true, Infinity: true, NaN: true, undefined: true, eval: true,
    isFinite: true, isNaN: true, parseFloat: true, parseInt: true,
    decodeURI: true, decodeURIComponent: true, encodeURI: true, encodeURIComponent: true,
    escape: true, unescape: true,
    Object: true, Function: true, Boolean: true, Symbol: true, Number: true, BigInt: true,
    Math: true, Date: true, String: true, RegExp: true, Array: true, JSON: true,
    Promise: true, Proxy: true, Reflect: true, Iterator: true,
    Map: true, Set: true, WeakMap: true, WeakSet: true, WeakRef: true, FinalizationRegistry: true,
    ArrayBuffer: true, DataView: true,
    Int8Array: true, Uint8Array: true, Uint8ClampedArray: true, Int16Array: true,
    Uint16Array: true, Int32Array: true, Uint32Array: true, Float16Array: true,
    Float32Array: true, Float64Array: true, BigInt64Array: true, BigUint64Array: true,
    Error: true, AggregateError: true, EvalError: true, RangeError: true, ReferenceError: true,
    SyntaxError: true, TypeError: true, URIError: true, InternalError: true, SuppressedError: true,
    DisposableStack: true, AsyncDisposableStack: true, atob: true, btoa: true,
  });

  // ---- harness -------------------------------------------------------------------------

  /**
   * Runs the compiled program and answers one tagged string: "v<json>" (a lossless
   * completion), "u" (undefined), "i" (a completion that is not lossless JSON) or
   * "e<message>" (the program threw).
   */
  const harness = async function (program) {
    maxDepth = opMaxDepth();
    defineBindings(JSONParse(opToolNames()));
    try {
      const value = await ReflectApply(program, undefined, []);
      if (value === undefined) return "u";
      const json = snapshot(value, "value");
      return json === undefined ? "i" : "v" + json;
    } catch (thrown) {
      return "e" + describeThrown(thrown);
    }
  };

  // ---- finishing in the isolate that runs the program --------------------------------

  /**
   * Everything above may come from a startup snapshot; this runs in each fresh isolate: it
   * binds the ops, removes every engine internal from the global object (itself included),
   * installs the program globals and hands the host [harness, settle].
   */
  const finish = () => {
    const ops = global.Deno.core.ops;
    opCall = ops.op_dsh_call;
    opLog = ops.op_dsh_log;
    opTimer = ops.op_dsh_timer;
    opCancelTimer = ops.op_dsh_cancel_timer;
    opIsProxy = ops.op_dsh_is_proxy;
    opMaxDepth = ops.op_dsh_max_depth;
    opToolNames = ops.op_dsh_tool_names;
    tools = { __proto__: null };
    ObjectSetPrototypeOf(tools, unknownBindings);

    const keys = ReflectOwnKeys(global);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      if (typeof key === "string" && KEEP[key] === true) continue;
      if (!ReflectDeleteProperty(global, key)) {
        throw new TypeErrorCtor("bootstrap could not remove global " + StringCtor(key));
      }
    }

    const define = (name, value, writable) =>
      ObjectDefineProperty(global, name, {
        __proto__: null,
        value,
        writable,
        enumerable: false,
        configurable: writable,
      });
    define("tools", tools, false);
    define("ToolCallError", ToolCallError, true);
    define("console", console, true);
    define("setTimeout", setTimeout, true);
    define("clearTimeout", clearTimeout, true);

    // The host keeps both: the harness runs the program, settle completes host tasks.
    return [harness, settle];
  };
  ObjectDefineProperty(global, "__dshFinish", {
    __proto__: null,
    value: finish,
    writable: false,
    enumerable: false,
    configurable: true,
  });
})(globalThis);
