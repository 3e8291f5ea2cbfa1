//! What a program can reach is the same whichever way its isolate started (restored from the
//! startup snapshot or bootstrapped from source), but for what the engine's snapshot has always
//! lost, and holds no Temporal: the host turns the engine's Temporal polyfill off
//! (snapshot.rs). Before, isolates built from source (a new host's first few) also showed
//! `Date.prototype.toTemporalInstant`; restored ones never did.

#![allow(clippy::unwrap_used)]

use crate::runtime::js::isolate::FreshIsolate;
use crate::runtime::js::slot::ISOLATE_STACK_BYTES;
use crate::runtime::js::snapshot::Startup;

/// Every object reachable from the global object (own keys, accessors, prototypes) as a line
/// saying whether it is extensible, and each of its properties as `path key: type [primitive
/// value] attributes` (`w`ritable, `e`numerable, `c`onfigurable), each object named by the
/// first sorted path reaching it.
const SURFACE: &str = r#"
(() => {
  const lines = [];
  const names = new Map([[globalThis, "globalThis"]]);
  const queue = [globalThis];
  const keyName = (key) => typeof key === "symbol" ? "[" + String(key) + "]" : key;
  const visit = (path, value) => {
    if ((typeof value === "object" || typeof value === "function") && value !== null
        && !names.has(value)) {
      names.set(value, path);
      queue.push(value);
    }
  };
  while (queue.length > 0) {
    const item = queue.shift();
    const path = names.get(item);
    lines.push(path + (Object.isExtensible(item) ? " extensible" : " not extensible"));
    const keys = Reflect.ownKeys(item).map((key) => [keyName(key), key]);
    keys.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    for (const [name, key] of keys) {
      const d = Object.getOwnPropertyDescriptor(item, key);
      if (d === undefined) continue;
      const kind = "value" in d ? typeof d.value : "accessor";
      const shown = ["number", "string", "boolean"].includes(kind) ? " " + String(d.value) : "";
      const flags = (d.writable ? "w" : "-") + (d.enumerable ? "e" : "-")
        + (d.configurable ? "c" : "-");
      lines.push(path + " " + name + ": " + kind + shown + " " + flags);
      visit(path + "." + name, d.value);
      visit(path + "." + name + "<get>", d.get);
      visit(path + "." + name + "<set>", d.set);
    }
    visit(path + "<proto>", Object.getPrototypeOf(item));
  }
  return lines.join("\n");
})()
"#;

/// What v8x's snapshot restore has always lost (seen with the engine as published, before
/// the Temporal flag): the `length` and `name` of the `[Symbol.species]` getters, the
/// `prototype` of the `Intl` stand-in's `Date.prototype.toLocaleString`, and the `name` (once
/// the `length`) of a function that shares its native code with another, which a restore
/// resolves to the first one it finds (`Date.prototype.valueOf` is named `getTime`). Listed,
/// with every attribute and primitive value, so that any other difference fails: a restore
/// that defined a property with other attributes or another value, or left an object
/// extensible or not when its source did the other.
const ONLY_FROM_SOURCE: [&str; 28] = [
    "globalThis.ArrayBuffer.[Symbol(Symbol.species)]<get> extensible",
    "globalThis.ArrayBuffer.[Symbol(Symbol.species)]<get> length: number 0 --c",
    "globalThis.ArrayBuffer.[Symbol(Symbol.species)]<get> name: string get [Symbol.species] --c",
    "globalThis.Map.[Symbol(Symbol.species)]<get> extensible",
    "globalThis.Map.[Symbol(Symbol.species)]<get> length: number 0 --c",
    "globalThis.Map.[Symbol(Symbol.species)]<get> name: string get [Symbol.species] --c",
    "globalThis.Object.defineProperty name: string defineProperty --c",
    "globalThis.Promise.[Symbol(Symbol.species)]<get> extensible",
    "globalThis.Promise.[Symbol(Symbol.species)]<get> length: number 0 --c",
    "globalThis.Promise.[Symbol(Symbol.species)]<get> name: string get [Symbol.species] --c",
    "globalThis.RegExp.[Symbol(Symbol.species)]<get> extensible",
    "globalThis.RegExp.[Symbol(Symbol.species)]<get> length: number 0 --c",
    "globalThis.RegExp.[Symbol(Symbol.species)]<get> name: string get [Symbol.species] --c",
    "globalThis.Set.[Symbol(Symbol.species)]<get> extensible",
    "globalThis.Set.[Symbol(Symbol.species)]<get> length: number 0 --c",
    "globalThis.Set.[Symbol(Symbol.species)]<get> name: string get [Symbol.species] --c",
    "globalThis.BigInt64Array<proto>.[Symbol(Symbol.species)]<get> extensible",
    "globalThis.BigInt64Array<proto>.[Symbol(Symbol.species)]<get> length: number 0 --c",
    "globalThis.BigInt64Array<proto>.[Symbol(Symbol.species)]<get> name: string get [Symbol.species] --c",
    "globalThis.Date.prototype.toLocaleString length: number 2 --c",
    "globalThis.Date.prototype.toLocaleString name: string  --c",
    "globalThis.Date.prototype.toLocaleString prototype: object w--",
    "globalThis.Date.prototype.valueOf name: string valueOf --c",
    "globalThis.String.prototype.toLowerCase name: string toLowerCase --c",
    "globalThis.String.prototype.toString name: string toString --c",
    "globalThis.String.prototype.toUpperCase name: string toUpperCase --c",
    "globalThis.Date.prototype.toLocaleString.prototype extensible",
    "globalThis.Date.prototype.toLocaleString.prototype constructor: function w-c",
];

/// The other side of [`ONLY_FROM_SOURCE`]: those functions' names as a restore gives them.
const ONLY_FROM_SNAPSHOT: [&str; 7] = [
    "globalThis.Object.defineProperty name: string Object.defineProperty --c",
    "globalThis.Date.prototype.toLocaleString length: number 0 --c",
    "globalThis.Date.prototype.toLocaleString name: string toLocaleString --c",
    "globalThis.Date.prototype.valueOf name: string getTime --c",
    "globalThis.String.prototype.toLowerCase name: string toLocaleLowerCase --c",
    "globalThis.String.prototype.toString name: string valueOf --c",
    "globalThis.String.prototype.toUpperCase name: string toLocaleUpperCase --c",
];

/// The surface a fresh isolate from `startup` shows, on a thread of its own as in the pool,
/// after its warm-up for an anticipated run when `warmed`.
fn surface_of(startup: Startup, warmed: bool) -> String {
    std::thread::Builder::new()
        .stack_size(ISOLATE_STACK_BYTES)
        .spawn(move || {
            let mut isolate = FreshIsolate::new(64, startup).unwrap();
            if warmed {
                isolate.warm();
            }
            isolate.evaluate(SURFACE).unwrap()
        })
        .unwrap()
        .join()
        .unwrap()
}

#[test]
fn programs_see_the_same_surface_from_the_snapshot_and_from_source_and_no_temporal() {
    let startup = super::support::startup_with_snapshot();
    let restored = surface_of(startup, false);
    let bootstrapped = surface_of(startup.without_snapshot(), false);
    assert!(restored.lines().count() > 1000, "{restored}");
    assert!(restored.contains("globalThis.Date.prototype getTime: function"));
    assert!(!restored.contains("Temporal"), "{restored}");
    let lines = |lines: &[&str]| -> Vec<String> { lines.iter().map(|l| (*l).to_owned()).collect() };
    let only = |a: &str, b: &str| -> Vec<String> {
        let b: std::collections::HashSet<&str> = b.lines().collect();
        a.lines()
            .filter(|line| !b.contains(line))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(
        (
            only(&restored, &bootstrapped),
            only(&bootstrapped, &restored)
        ),
        (lines(&ONLY_FROM_SNAPSHOT), lines(&ONLY_FROM_SOURCE)),
        "(only from the snapshot, only from source)"
    );
}

#[test]
fn a_warm_up_leaves_nothing_a_program_can_see() {
    let startup = super::support::startup_with_snapshot();
    let warmed = surface_of(startup, true);
    assert!(warmed.lines().count() > 1000, "{warmed}");
    assert_eq!(warmed, surface_of(startup, false));
}
