//! What a program's `tools` object is, in both languages, through the real binary: exactly
//! the calling scope's visible tools when the run starts (`run_code` excluded, exotic names
//! ordinary keys, every other name absent), and a binding called with no argument rejects
//! with a `ToolCallError` before anything is dispatched.

use crate::support::code::{Framing, Host, any_spec, echo_spec, with_method};
use serde_json::{Value, json};

/// A code-mode host speaking `language`, with `echo` (a DSL tool) and the exotic names.
fn host(language: &str) -> Host {
    let mut host = Host::code_mode(
        Framing::Ndjson,
        "code",
        json!({ "codeRuntime": { "language": language, "poolSize": 1 } }),
    );
    host.register(echo_spec("echo"));
    for name in ["__proto__", "constructor", "my-tool", "hidden"] {
        host.register(any_spec(name, true));
    }
    host
}

/// Runs `code` in `agent`'s scope, answering `echo` with its text and any other tool with its
/// name; returns the outer result and every other message.
fn run(host: &mut Host, agent: Option<&str>, code: &str) -> (Value, Vec<Value>) {
    let id = json!("run");
    let mut params = json!({ "callId": "c", "name": "run_code",
        "arguments": { "code": code, "description": "bindings" } });
    if let Some(agent) = agent {
        params["agent"] = json!(agent);
    }
    host.send_request(id.clone(), "tools/execute", params);
    let (response, transcript) = host.serve_until(&id, |call| {
        let answer = match call["name"].as_str() {
            Some("echo") => call["arguments"]["text"].clone(),
            other => json!(other),
        };
        Some(Ok(json!({ "value": answer })))
    });
    (response["result"].clone(), transcript)
}

/// An agent that cannot see `hidden`, so the scope's view (not the registry) decides.
fn open_restricted(host: &mut Host) {
    host.request("agents/open", json!({ "agent": "a" }));
    let restricted = host.request(
        "tools/restrict",
        json!({ "agent": "a", "deny": ["hidden"] }),
    );
    assert!(
        restricted["result"]["registration"].is_string(),
        "{restricted}"
    );
}

#[test]
fn the_typescript_tools_object_binds_exactly_the_scopes_visible_tools() {
    let mut host = host("typescript");
    open_restricted(&mut host);
    let program = "return [Object.keys(tools), Object.getPrototypeOf(Object.getPrototypeOf(tools)),\n\
        'hasOwnProperty' in tools, 'toString' in tools, 'run_code' in tools,\n\
        'hidden' in tools, Object.isFrozen(tools), await tools.__proto__({}),\n\
        await tools.constructor({}), await tools['my-tool']({})];";
    let (result, _) = run(&mut host, Some("a"), program);
    assert_eq!(
        result["value"]["result"],
        json!([
            ["__proto__", "constructor", "echo", "my-tool"],
            null,
            false,
            false,
            false,
            false,
            true,
            "__proto__",
            "constructor",
            "my-tool"
        ]),
        "{result}"
    );
    assert_eq!(host.finish(), 0);
}

#[test]
fn the_python_tools_object_binds_exactly_the_scopes_visible_tools() {
    let mut host = host("python");
    open_restricted(&mut host);
    let program = "def missing(read):\n    try:\n        read()\n        return 'found'\n    \
        except (AttributeError, KeyError) as error:\n        return [type(error).__name__, str(error)]\n\
        return [list(tools), dir(tools), len(tools), 'echo' in tools, 'hidden' in tools,\n\
        'run_code' in tools, missing(lambda: tools.run_code), missing(lambda: tools['hidden']),\n\
        await tools['__proto__']({}), await tools.constructor({}), await tools['my-tool']({})]";
    let (result, _) = run(&mut host, Some("a"), program);
    let names = json!(["__proto__", "constructor", "echo", "my-tool"]);
    assert_eq!(
        result["value"]["result"],
        json!([
            names,
            names,
            4,
            true,
            false,
            false,
            [
                "UnknownToolError",
                "no tool named \"run_code\" (4 tools visible)"
            ],
            [
                "UnknownToolError",
                "no tool named \"hidden\" (4 tools visible)"
            ],
            "__proto__",
            "constructor",
            "my-tool"
        ]),
        "{result}"
    );
    assert_eq!(host.finish(), 0);
}

/// A name that is not a binding throws a `ToolCallError` (in Python one that is also the
/// `AttributeError`/`KeyError` `hasattr` expects) naming the closest bindings and the visible
/// count, caught or failing the run; reads that are not lookups (`await tools`, symbols)
/// stay quiet.
#[test]
fn an_unknown_binding_throws_a_tool_call_error_naming_the_closest_names() {
    let cases = [
        (
            "typescript",
            "const why = (read) => { try { read(); return 'found'; } catch (e) {\n\
             return [e instanceof ToolCallError, e.name, e.toolName, e.message]; } };\n\
             const awaited = await tools;\n\
             return [why(() => tools.ecoh({})), why(() => tools.My_Tool), why(() => tools.zzz),\n\
             awaited === tools, String(tools[Symbol.iterator]), await tools.echo({ text: 'still' })];",
            "await tools.nope({});",
            "ToolCallError: no tool named \"nope\" (5 tools visible)",
        ),
        (
            "python",
            "def why(read):\n    try:\n        read()\n        return 'found'\n    \
             except ToolCallError as e:\n        return [isinstance(e, (AttributeError, KeyError)), 'ToolCallError', e.tool_name, e.message]\n\
             return [why(lambda: tools.ecoh), why(lambda: tools['My_Tool']), why(lambda: tools.zzz),\n\
             hasattr(tools, 'zzz'), getattr(tools, 'zzz', None), await tools.echo({'text': 'still'})]",
            "await tools.nope({})",
            "ToolCallError: no tool named \"nope\" (5 tools visible)",
        ),
    ];
    for (language, program, failing, message) in cases {
        let mut host = host(language);
        let (result, _) = run(&mut host, None, program);
        // TypeScript: `e instanceof ToolCallError`; Python: also an AttributeError/KeyError.
        let caught = |name: &str, text: &str| json!([true, "ToolCallError", name, text]);
        let tail = if language == "typescript" {
            json!([true, "undefined", "still"])
        } else {
            json!([false, null, "still"])
        };
        let mut expected = vec![
            caught(
                "ecoh",
                "no tool named \"ecoh\" (5 tools visible; closest: \"echo\")",
            ),
            caught(
                "My_Tool",
                "no tool named \"My_Tool\" (5 tools visible; closest: \"my-tool\")",
            ),
            caught("zzz", "no tool named \"zzz\" (5 tools visible)"),
        ];
        expected.extend(tail.as_array().unwrap().iter().cloned());
        assert_eq!(
            result["value"]["result"],
            json!(expected),
            "{language}: {result}"
        );
        let (failed, _) = run(&mut host, None, failing);
        assert_eq!(failed["isError"], true, "{language}: {failed}");
        assert_eq!(
            failed["error"]["message"],
            format!("code run failed (exception): {message}"),
            "{language}"
        );
        assert_eq!(host.finish(), 0);
    }
}

/// The refusal is the program's: no dispatch event, no `client/executeTool`, and the next
/// call is dispatch 1.
fn assert_refused_before_dispatch(result: &Value, transcript: &[Value], expected: Value) {
    assert_eq!(result["value"]["result"], expected, "{result}");
    let starts = with_method(transcript, "tools/codeDispatchStart");
    let ids: Vec<&Value> = starts.iter().map(|start| &start["params"]["id"]).collect();
    assert_eq!(ids, [&json!("c:code:1")], "{transcript:?}");
    assert_eq!(with_method(transcript, "client/executeTool").len(), 1);
}

#[test]
fn a_typescript_binding_called_without_arguments_rejects_before_dispatch() {
    let mut host = host("typescript");
    let program = "const why = async (call) => { try { await call(); return 'sent'; }\n\
        catch (e) { return [e instanceof ToolCallError, e.toolName, e.message]; } };\n\
        return [await why(() => tools.echo()), await why(() => tools.echo(undefined)),\n\
        await tools.echo({ text: 'first' })];";
    let (result, transcript) = run(&mut host, None, program);
    let refusal = json!([
        true,
        "echo",
        "arguments must be lossless JSON: arguments is undefined (pass an object such as {})"
    ]);
    assert_refused_before_dispatch(&result, &transcript, json!([refusal, refusal, "first"]));
    assert_eq!(host.finish(), 0);
}

#[test]
fn a_python_binding_called_without_arguments_rejects_before_dispatch() {
    let mut host = host("python");
    let program = "try:\n    await tools.echo()\n    refusal = 'sent'\n\
        except ToolCallError as error:\n    refusal = [error.tool_name, error.message]\n\
        return [refusal, await tools.echo({'text': 'first'})]";
    let (result, transcript) = run(&mut host, None, program);
    let refusal = json!([
        "echo",
        "arguments must be lossless JSON: no arguments were given (pass an object such as {})"
    ]);
    assert_refused_before_dispatch(&result, &transcript, json!([refusal, "first"]));
    assert_eq!(host.finish(), 0);
}

/// `tools` is fixed when the run starts; a tool unregistered while the run goes on keeps its
/// binding, whose call then fails in the pipeline as an unknown tool.
#[test]
fn a_tool_unregistered_during_the_run_fails_as_unknown_tool() {
    let mut host = Host::code_mode(Framing::Ndjson, "code", json!({}));
    host.register(any_spec("first", false));
    let later = host.request(
        "tools/register",
        json!({ "tool": any_spec("later", false) }),
    );
    let registration = later["result"]["registration"].clone();
    let program = "await tools.first({});\n\
        try { await tools.later({}); return 'ran'; }\n\
        catch (e) { return [typeof tools.later, e.toolName, e.message]; }";
    host.send_run_code(json!("run"), "c", program);
    let response = loop {
        let message = host.next_message();
        if message["id"] == json!("run") && message.get("method").is_none() {
            break message;
        }
        if message["method"] == "client/executeTool" {
            assert_eq!(message["params"]["name"], "first", "{message}");
            let gone = host.request("tools/unregister", json!({ "registration": registration }));
            assert_eq!(gone["result"], json!(null), "{gone}");
            host.answer(&message, json!({ "value": null }));
        }
    };
    assert_eq!(
        response["result"]["value"]["result"],
        json!(["function", "later", "unknown tool \"later\""]),
        "{response}"
    );
    assert_eq!(host.finish(), 0);
}
