//! Golden programs: completion values, console lines, exceptions with positions, tool calls and timers.

#![allow(clippy::unwrap_used)]

use serde_json::json;

use super::support::{check, failed, ok, run};
use crate::runtime::{FailureKind, LogStream};

#[tokio::test]
async fn completions_are_returned_as_json() {
    check("return 1", &[], ok(json!(1))).await;
    check(
        "return {a: [1, 'x', null, true], b: {c: 1.5, d: -2}}",
        &[],
        ok(json!({"a": [1, "x", null, true], "b": {"c": 1.5, "d": -2}})),
    )
    .await;
    check("return null", &[], ok(json!(null))).await;
    check("return 'héllo\\n'", &[], ok(json!("héllo\n"))).await;
    check("return", &[], Ok(None)).await;
    check("const x = 1;", &[], Ok(None)).await;
    check("return Object.create(null)", &[], ok(json!({}))).await;
    check("return 1e21", &[], ok(json!(1e21))).await;
    check(
        "const a = await Promise.resolve(2);\nreturn a * 3;",
        &[],
        ok(json!(6)),
    )
    .await;
    // The body may end in a line comment.
    check("return 5 // done", &[], ok(json!(5))).await;
}

#[tokio::test]
async fn tool_calls_resolve_with_the_host_value() {
    let (outcome, host) = run("const r = await tools.echo({x: 1, y: [true]});\nreturn r;").await;
    assert_eq!(outcome.result, ok(json!({"x": 1, "y": [true]})));
    assert_eq!(
        *host.calls.lock(),
        vec![("echo".to_owned(), json!({"x": 1, "y": [true]}))]
    );

    let (outcome, host) = run("return await tools.echo({})").await;
    assert_eq!(outcome.result, ok(json!({})));
    assert_eq!(*host.calls.lock(), vec![("echo".to_owned(), json!({}))]);

    let (outcome, host) =
        run("return await Promise.all([tools.a({n: 1}), tools.b({n: 2}), tools.c(3)])").await;
    assert_eq!(outcome.result, ok(json!([{"n": 1}, {"n": 2}, 3])));
    let names: Vec<String> = host
        .calls
        .lock()
        .iter()
        .map(|(name, _)| name.clone())
        .collect();
    assert_eq!(names, ["a", "b", "c"]);

    // Slow tools: the program waits without spending compute.
    check(
        "return await tools.slow({ok: true})",
        &[],
        ok(json!({"ok": true})),
    )
    .await;
}

/// `tools` is a frozen object whose own enumerable functions are exactly the run's tools:
/// `__proto__` and `constructor` are ordinary keys; reading any other name (inherited
/// `Object` methods and `run_code` included) throws a `ToolCallError` naming it, while `in`
/// answers false and `then` reads undefined (so `await tools` stays quiet).
#[tokio::test]
async fn tools_binds_exactly_the_runs_tools() {
    let (outcome, host) = run(concat!(
        "const thrown = (read) => { try { read(); return 'read'; }\n",
        "  catch (e) { return e instanceof ToolCallError ? e.toolName : String(e); } };\n",
        "return [await tools['my-tool']({}), await tools.__proto__({}), await tools.constructor({}),\n",
        "  thrown(() => tools.toString), thrown(() => tools.hasOwnProperty), thrown(() => tools.run_code),\n",
        "  thrown(() => tools['héllo wörld']), tools['my-tool'].name, typeof tools.then,\n",
        "  'anything' in tools, 'x' in tools, Object.hasOwn(tools, 'x'), tools.x === tools.x,\n",
        "  Object.keys(tools).join(), Object.isFrozen(tools)];",
    ))
    .await;
    assert_eq!(
        outcome.result,
        ok(json!([
            {},
            {},
            {},
            "toString",
            "hasOwnProperty",
            "run_code",
            "héllo wörld",
            "my-tool",
            "undefined",
            false,
            true,
            true,
            true,
            super::support::TOOLS.join(","),
            true
        ]))
    );
    let names: Vec<String> = host
        .calls
        .lock()
        .iter()
        .map(|(name, _)| name.clone())
        .collect();
    assert_eq!(names, ["my-tool", "__proto__", "constructor"]);
    check(
        "'use strict';\ntry { tools.x = 1; return 'assigned'; } catch (e) { return e.name; }",
        &[],
        ok(json!("TypeError")),
    )
    .await;
    check(
        "'use strict';\ntry { tools.added = () => 1; return 'added'; } catch (e) { return e.name; }",
        &[],
        ok(json!("TypeError")),
    )
    .await;
}

/// A binding called with no argument (or `undefined`) rejects before anything is sent.
#[tokio::test]
async fn a_binding_called_without_arguments_rejects_without_a_call() {
    let (outcome, host) = run(concat!(
        "const why = async (call) => { try { await call(); return 'sent'; } catch (e) {\n",
        "  return [e instanceof ToolCallError, e.toolName, e.message]; } };\n",
        "return [await why(() => tools.echo()), await why(() => tools.echo(undefined))];",
    ))
    .await;
    let refusal = json!([
        true,
        "echo",
        "arguments must be lossless JSON: arguments is undefined (pass an object such as {})"
    ]);
    assert_eq!(outcome.result, ok(json!([refusal, refusal])));
    assert!(host.calls.lock().is_empty());
}

#[tokio::test]
async fn failed_tool_calls_reject_with_tool_call_error() {
    check(
        concat!(
            "try { await tools.fail({}); } catch (e) {\n",
            "  return [e instanceof ToolCallError, e instanceof Error, e.name, e.toolName, e.message,\n",
            "    String(e), Object.keys(e)];\n",
            "}",
        ),
        &[],
        ok(json!([true, true, "ToolCallError", "fail", "denied", "ToolCallError: denied", ["toolName"]])),
    )
    .await;
    check(
        "await tools.fail({});",
        &[],
        failed(FailureKind::Exception, "ToolCallError: denied"),
    )
    .await;
    check(
        "const e = new ToolCallError('t', 'm'); return [e.toolName, e.message, e.name, e instanceof Error]",
        &[],
        ok(json!(["t", "m", "ToolCallError", true])),
    )
    .await;
    check(
        "throw new ToolCallError('t', 'made here');",
        &[],
        failed(FailureKind::Exception, "ToolCallError: made here"),
    )
    .await;
}

#[tokio::test]
async fn console_lines_are_formatted_and_forwarded() {
    check(
        concat!(
            "console.log('a', 1, true, null, undefined, {a: 1}, [1, 'b'], new TypeError('boom'), 5n, Symbol('s'));\n",
            "const o = {n: 1n}; o.self = o; console.log(o);\n",
            "console.log(function named() {}, () => 1, 'multi\\nline');\n",
            "console.log();\n",
            "console.log(new Error(''), -0, 1.5, [undefined]);\n",
            "console.log(tools);",
        ),
        &[
            "a 1 true null undefined {\"a\":1} [1,\"b\"] TypeError: boom 5 Symbol(s)",
            "{\"n\":\"1n\",\"self\":\"[Circular]\"}",
            "[Function: named] [Function (anonymous)] multi\nline",
            "",
            "Error 0 1.5 [null]",
            "[tools]",
        ],
        Ok(None),
    )
    .await;
    let (outcome, host) = run(concat!(
        "console.log('l'); console.info('i'); console.warn('w'); console.error('e'); console.debug('d');\n",
        "return Object.keys(console);",
    ))
    .await;
    assert_eq!(outcome.logs, ["l", "i", "w", "e", "d"]);
    assert_eq!(
        outcome.result,
        ok(json!(["log", "info", "warn", "error", "debug"]))
    );
    assert_eq!(
        *host.lines.lock(),
        vec![
            (LogStream::Log, "l".to_owned()),
            (LogStream::Info, "i".to_owned()),
            (LogStream::Warn, "w".to_owned()),
            (LogStream::Error, "e".to_owned()),
            (LogStream::Debug, "d".to_owned()),
        ]
    );
}

#[tokio::test]
async fn thrown_errors_name_their_position_in_the_program() {
    check(
        "const x = 1;\nthrow new Error('boom');",
        &[],
        failed(FailureKind::Exception, "Error: boom at program.ts:2:7"),
    )
    .await;
    check(
        "const x = 1;\n  null.foo;",
        &[],
        failed(
            FailureKind::Exception,
            "TypeError: Cannot read properties of null (reading 'foo') at program.ts:2:8",
        ),
    )
    .await;
    check(
        "function inner() {\n  throw new RangeError('deep');\n}\nawait null;\ninner();",
        &[],
        failed(FailureKind::Exception, "RangeError: deep at program.ts:2:9"),
    )
    .await;
    check(
        "class MyError extends Error { constructor(m) { super(m); this.name = 'MyError'; } }\nthrow new MyError('mine');",
        &[],
        failed(FailureKind::Exception, "MyError: mine at program.ts:2:7"),
    )
    .await;
    check(
        "console.log('before');\nthrow 'xy';",
        &["before"],
        failed(FailureKind::Exception, "xy"),
    )
    .await;
    check("throw 42", &[], failed(FailureKind::Exception, "42")).await;
    check("throw null", &[], failed(FailureKind::Exception, "null")).await;
    check(
        "throw {a: 1}",
        &[],
        failed(FailureKind::Exception, "[object Object]"),
    )
    .await;
    check(
        "function f(n) { return f(n + 1); }\nf(0);",
        &[],
        failed(
            FailureKind::Exception,
            "RangeError: Maximum call stack size exceeded at program.ts:1:24",
        ),
    )
    .await;
}

/// Syntax errors come from the type stripper or, past it, the engine: either way an exception
/// named SyntaxError with a position in the model's source.
#[tokio::test]
async fn syntax_errors_are_exceptions_with_positions() {
    for (code, position) in [
        ("const a = 1;\nlet b = ;", " at program.ts:2:9"),
        ("enum Color { Red }", " at program.ts:1:"),
    ] {
        let (outcome, _) = run(code).await;
        assert_eq!(outcome.logs, Vec::<String>::new());
        let failure = outcome.result.unwrap_err();
        assert_eq!(failure.kind, FailureKind::Exception);
        assert!(
            failure.message.starts_with("SyntaxError: ") && failure.message.contains(position),
            "{failure:?}"
        );
    }
}

#[tokio::test]
async fn uncaught_errors_outside_the_main_flow_fail_the_run() {
    check(
        "Promise.reject(new Error('unhandled'));\nawait new Promise((r) => setTimeout(r, 10));\nreturn 1;",
        &[],
        failed(FailureKind::Exception, "Error: unhandled at program.ts:1:16"),
    )
    .await;
    check(
        "setTimeout(() => { throw new Error('in timer'); }, 1);\nawait new Promise((r) => setTimeout(r, 50));",
        &[],
        failed(FailureKind::Exception, "Error: in timer at program.ts:1:26"),
    )
    .await;
    check(
        "tools.fail({});\nawait new Promise((r) => setTimeout(r, 10));",
        &[],
        failed(FailureKind::Exception, "ToolCallError: denied"),
    )
    .await;
    check(
        "await new Promise(() => {});",
        &[],
        failed(
            FailureKind::WorkerExit,
            "program never settled: it awaits a promise that nothing is left to resolve",
        ),
    )
    .await;
}

#[tokio::test]
async fn timers_are_run_scoped() {
    check(
        concat!(
            "const out = [];\n",
            "setTimeout(() => out.push('second'), 20);\n",
            "setTimeout((a, b) => out.push(a + b), 5, 'fir', 'st');\n",
            "const cleared = setTimeout(() => out.push('cleared'), 1);\n",
            "clearTimeout(cleared);\n",
            "await new Promise((resolve) => setTimeout(resolve, 40));\n",
            "return [out, typeof cleared];",
        ),
        &[],
        ok(json!([["first", "second"], "number"])),
    )
    .await;
    // A pending timer does not keep the run alive, and never fires after it.
    let (outcome, host) = run("setTimeout(() => console.log('late'), 30);\nreturn 1;").await;
    assert_eq!(outcome.result, ok(json!(1)));
    assert_eq!(outcome.logs, Vec::<String>::new());
    assert!(host.lines.lock().is_empty());
    // clearTimeout with the id of something else cancels nothing.
    check(
        "const pending = tools.slow({ok: 1});\nfor (let id = 0; id < 10; id++) clearTimeout(id);\nreturn await pending;",
        &[],
        ok(json!({"ok": 1})),
    )
    .await;
    check(
        "try { setTimeout('code', 1); } catch (e) { return e.name }",
        &[],
        ok(json!("TypeError")),
    )
    .await;
}
