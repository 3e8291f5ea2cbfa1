//! The lossless-JSON boundary: lossy binding arguments reject that one call without reaching the host, lossy completions are invalid output.

#![allow(clippy::unwrap_used)]

use serde_json::json;

use super::support::{check, failed, ok, run};
use crate::runtime::FailureKind;

/// Calls `tools.t(<argument>)` and expects a rejection naming `why`, with the host untouched.
async fn check_rejected(setup_and_argument: &str, why: &str) {
    let code = format!(
        "{setup_and_argument}\ntry {{ await tools.t(arg); return 'sent'; }} catch (e) {{\n  return [e instanceof ToolCallError, e.toolName, e.message];\n}}"
    );
    let (outcome, host) = run(&code).await;
    assert_eq!(
        outcome.result,
        ok(json!([
            true,
            "t",
            format!("arguments must be lossless JSON: {why}")
        ])),
        "program:\n{code}"
    );
    assert!(
        host.calls.lock().is_empty(),
        "the host was called for:\n{code}"
    );
}

#[tokio::test]
async fn lossy_arguments_reject_only_that_call() {
    let cases = [
        (
            "const arg = undefined;",
            "arguments is undefined (pass an object such as {})",
        ),
        ("const arg = {a: undefined};", "arguments.a is undefined"),
        ("const arg = [1, undefined];", "arguments[1] is undefined"),
        (
            "const arg = {'my key': {x: undefined}};",
            "arguments[\"my key\"].x is undefined",
        ),
        ("const arg = 1n;", "arguments is a BigInt"),
        ("const arg = {n: [2n]};", "arguments.n[0] is a BigInt"),
        (
            "const arg = {a: {}}; arg.a.back = arg;",
            "arguments.a.back is circular",
        ),
        (
            "const arg = [1, , 3];",
            "arguments[1] is a hole in a sparse array",
        ),
        (
            "const arg = new Array(2);",
            "arguments[0] is a hole in a sparse array",
        ),
        ("const arg = -0;", "arguments is -0"),
        ("const arg = {z: [-0]};", "arguments.z[0] is -0"),
        ("const arg = NaN;", "arguments is NaN"),
        ("const arg = {x: Infinity};", "arguments.x is Infinity"),
        ("const arg = [-Infinity];", "arguments[0] is -Infinity"),
        ("const arg = {f() {}};", "arguments.f is a function"),
        ("const arg = Symbol('s');", "arguments is a symbol"),
        (
            "const arg = new Map();",
            "arguments is not plain JSON data (Map)",
        ),
        (
            "const arg = {s: new Set([1])};",
            "arguments.s is not plain JSON data (Set)",
        ),
        (
            "const arg = new Date(0);",
            "arguments is not plain JSON data (Date)",
        ),
        (
            "const arg = /x/;",
            "arguments is not plain JSON data (RegExp)",
        ),
        (
            "const arg = new Uint8Array(2);",
            "arguments is not plain JSON data (Uint8Array)",
        ),
        (
            "const arg = new ArrayBuffer(2);",
            "arguments is not plain JSON data (ArrayBuffer)",
        ),
        (
            "const arg = Object(1);",
            "arguments is not plain JSON data (Number)",
        ),
        (
            "const arg = new Error('e');",
            "arguments is not plain JSON data (Error)",
        ),
        (
            "const arg = Promise.resolve(1);",
            "arguments is not plain JSON data (Promise)",
        ),
        (
            "const arg = new Proxy({}, {});",
            "arguments is not plain JSON data (Proxy)",
        ),
        (
            "const arg = Object.setPrototypeOf(new Date(0), Object.prototype);",
            "arguments is not plain JSON data (Date)",
        ),
        (
            "class List extends Array {}\nconst arg = [new List()];",
            "arguments[0] is not plain JSON data (List instance)",
        ),
        (
            "const arg = Object.create({});",
            "arguments is not plain JSON data (object with a custom prototype)",
        ),
        (
            "const arg = {g: (function* () {})()};",
            "arguments.g is not plain JSON data (Generator)",
        ),
        (
            "class Point { constructor() { this.x = 1; } }\nconst arg = new Point();",
            "arguments is not plain JSON data (Point instance)",
        ),
        (
            "const arg = {[Symbol('k')]: 1};",
            "arguments has a symbol-keyed property",
        ),
        (
            "const arg = {get a() { return 1; }};",
            "arguments.a is an accessor property",
        ),
        (
            "const arg = Object.defineProperty({}, 'hidden', {value: 1});",
            "arguments.hidden is not enumerable",
        ),
        (
            "const arg = [1]; arg.extra = 2;",
            "arguments has a non-index property \"extra\"",
        ),
        (
            "const arg = '\\uD800';",
            "arguments is a string with a lone surrogate",
        ),
        (
            "let arg = 0; for (let i = 0; i < 101; i++) arg = [arg];",
            "arguments[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0] nests deeper than 100 levels",
        ),
        (
            "function f() { return arguments; }\nconst arg = f(1);",
            "arguments is not plain JSON data (Arguments)",
        ),
    ];
    for (setup, why) in cases {
        check_rejected(setup, why).await;
    }
}

#[tokio::test]
async fn extra_arguments_are_rejected() {
    check(
        "try { await tools.t(1, 2); } catch (e) { return e.message; }",
        &[],
        ok(json!(
            "arguments must be lossless JSON: expected one argument, got 2"
        )),
    )
    .await;
}

#[tokio::test]
async fn plain_data_crosses_unchanged() {
    let (outcome, host) = run(concat!(
        "const bare = Object.create(null); bare.k = 'v';\n",
        "const deep = []; let cursor = deep; for (let i = 0; i < 98; i++) { const next = []; cursor.push(next); cursor = next; }\n",
        "return await tools.echo({bare, list: [1, 2.5, -3, 'é', null, true, {}], deep, big: 12345678901234567890, 'odd key': 1});",
    ))
    .await;
    let mut deep = json!([]);
    for _ in 0..98 {
        deep = json!([deep]);
    }
    let expected = json!({
        "bare": {"k": "v"},
        "list": [1, 2.5, -3, "é", null, true, {}],
        "deep": deep,
        "big": 12345678901234567000_u64,
        "odd key": 1,
    });
    assert_eq!(outcome.result, ok(expected.clone()));
    assert_eq!(*host.calls.lock(), vec![("echo".to_owned(), expected)]);
}

/// Key texts are computed once per isolate and reused (up to a bound): keys that need
/// escaping cross exactly on every call, and keys past the bound still cross exactly.
#[tokio::test]
async fn property_keys_cross_exactly_when_reused_and_past_the_key_cache_bound() {
    let (outcome, host) = run(concat!(
        "const odd = {'say \\\"hi\\\"': 1, 'line\\nbreak': 2, ['__proto__']: 3, '\u{e9}': 4, '\\u2028': 5};\n",
        "const many = {}; for (let i = 0; i < 5000; i++) many['k' + i] = i;\n",
        "await tools.echo(odd); await tools.echo(many); await tools.echo(odd);\n",
        "return await tools.echo({k4999: 'late', ...odd});",
    ))
    .await;
    let mut odd = serde_json::Map::new();
    odd.insert("say \"hi\"".into(), json!(1));
    odd.insert("line\nbreak".into(), json!(2));
    odd.insert("__proto__".into(), json!(3));
    odd.insert("\u{e9}".into(), json!(4));
    odd.insert("\u{2028}".into(), json!(5));
    let many: serde_json::Map<_, _> = (0..5000).map(|i| (format!("k{i}"), json!(i))).collect();
    let mut last = serde_json::Map::new();
    last.insert("k4999".into(), json!("late"));
    last.extend(odd.clone());
    let (odd, many, last) = (json!(odd), json!(many), json!(last));
    assert_eq!(outcome.result, ok(last.clone()));
    let echoed = |value: &serde_json::Value| ("echo".to_owned(), value.clone());
    assert_eq!(
        *host.calls.lock(),
        vec![echoed(&odd), echoed(&many), echoed(&odd), echoed(&last)]
    );
}

#[tokio::test]
async fn lossy_completions_are_invalid_output() {
    for code in [
        "return new Map()",
        "return {a: undefined}",
        "return [1, , 2]",
        "return -0",
        "return NaN",
        "return 1n",
        "return () => 1",
        "return Symbol('s')",
        "const o = {}; o.o = o; return o;",
        "return new Date(0)",
    ] {
        check(
            code,
            &[],
            failed(
                FailureKind::InvalidOutput,
                "program completion must be lossless JSON",
            ),
        )
        .await;
    }
}

#[tokio::test]
async fn patched_built_ins_do_not_break_the_bridge() {
    check(
        concat!(
            "Array.prototype.push = () => { throw new Error('push'); };\n",
            "Object.defineProperty(Array.prototype, '0', { set() { throw new Error('index'); }, configurable: true });\n",
            "Object.prototype.value = 'polluted'; Object.prototype.get = () => 1;\n",
            "JSON.stringify = () => '\"hijacked\"'; JSON.parse = () => 'hijacked';\n",
            "Function.prototype.call = () => 'hijacked'; Function.prototype.apply = () => 'hijacked';\n",
            "String.prototype.slice = () => 'hijacked'; RegExp.prototype.exec = () => null;\n",
            "Reflect.ownKeys = () => []; Object.getOwnPropertyDescriptor = () => undefined;\n",
            "const r = await tools.echo({a: [1, {b: 'c'}]});\n",
            "console.log('logged', 1);\n",
            "return r;",
        ),
        &["logged 1"],
        ok(json!({"a": [1, {"b": "c"}]})),
    )
    .await;
}

#[tokio::test]
async fn console_formatting_survives_a_replaced_json_object() {
    check(
        "JSON.stringify = () => 'hijacked';\nconsole.log({x: 1}, [2]);",
        &["{\"x\":1} [2]"],
        Ok(None),
    )
    .await;
}
