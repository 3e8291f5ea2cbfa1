//! What a program can reach is the same whichever way its isolate started (restored from the
//! startup snapshot or bootstrapped from source), but for what the engine's snapshot has always
//! lost, and holds no Temporal: the host turns the engine's Temporal polyfill off
//! (snapshot.rs). Before, isolates built from source (a new host's first few) also showed
//! `Date.prototype.toTemporalInstant`; restored ones never did.

#![allow(clippy::unwrap_used)]

use crate::runtime::js::isolate::FreshIsolate;
use crate::runtime::js::slot::ISOLATE_STACK_BYTES;
use crate::runtime::js::snapshot::Startup;

/// Every property reachable from the global object (own keys, accessors, prototypes), one
/// line each as `path key: type`, each object named by the first sorted path reaching it.
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
    const keys = Reflect.ownKeys(item).map((key) => [keyName(key), key]);
    keys.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    for (const [name, key] of keys) {
      const d = Object.getOwnPropertyDescriptor(item, key);
      if (d === undefined) continue;
      const kind = "value" in d ? typeof d.value : "accessor";
      lines.push(path + " " + name + ": " + kind);
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
/// the Temporal flag): the `length` and `name` of the `[Symbol.species]` getters, and the
/// `prototype` of the `Intl` stand-in's `Date.prototype.toLocaleString`. Listed so that any
/// other difference fails.
const SNAPSHOT_LOSES: [&str; 14] = [
    "globalThis.ArrayBuffer.[Symbol(Symbol.species)]<get> length: number",
    "globalThis.ArrayBuffer.[Symbol(Symbol.species)]<get> name: string",
    "globalThis.Map.[Symbol(Symbol.species)]<get> length: number",
    "globalThis.Map.[Symbol(Symbol.species)]<get> name: string",
    "globalThis.Promise.[Symbol(Symbol.species)]<get> length: number",
    "globalThis.Promise.[Symbol(Symbol.species)]<get> name: string",
    "globalThis.RegExp.[Symbol(Symbol.species)]<get> length: number",
    "globalThis.RegExp.[Symbol(Symbol.species)]<get> name: string",
    "globalThis.Set.[Symbol(Symbol.species)]<get> length: number",
    "globalThis.Set.[Symbol(Symbol.species)]<get> name: string",
    "globalThis.BigInt64Array<proto>.[Symbol(Symbol.species)]<get> length: number",
    "globalThis.BigInt64Array<proto>.[Symbol(Symbol.species)]<get> name: string",
    "globalThis.Date.prototype.toLocaleString prototype: object",
    "globalThis.Date.prototype.toLocaleString.prototype constructor: function",
];

/// The surface a fresh isolate from `startup` shows, on a thread of its own as in the pool.
fn surface(startup: Startup) -> String {
    std::thread::Builder::new()
        .stack_size(ISOLATE_STACK_BYTES)
        .spawn(move || {
            let mut isolate = FreshIsolate::new(64, startup).unwrap();
            isolate.evaluate(SURFACE).unwrap()
        })
        .unwrap()
        .join()
        .unwrap()
}

#[test]
fn programs_see_the_same_surface_from_the_snapshot_and_from_source_and_no_temporal() {
    let startup = super::support::startup_with_snapshot();
    let restored = surface(startup);
    let bootstrapped = surface(startup.without_snapshot());
    assert!(restored.lines().count() > 1000, "{restored}");
    assert!(restored.contains("globalThis.Date.prototype getTime: function"));
    assert!(!restored.contains("Temporal"), "{restored}");
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
        (
            Vec::new(),
            SNAPSHOT_LOSES
                .iter()
                .map(|line| (*line).to_owned())
                .collect()
        ),
        "(only from the snapshot, only from source)"
    );
}
