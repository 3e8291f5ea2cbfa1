//! Deep values cross the Code Mode bridge intact, both languages alike, through the real
//! binary (the reference tests 3,000 and 5,000 levels): binding arguments reach the client
//! and the dispatch events whole, a tool result reaches the program whole, and so does the
//! completion. The one depth bound is `transport.maxNestingDepth` (`depth.rs`).

use crate::support::code::{Framing, Host, any_spec, with_method};
use crate::support::wire::with_big_stack;
use serde_json::{Value, json};

/// `levels` arrays around `0`.
fn nest(levels: usize) -> Value {
    (0..levels).fold(json!(0), |inner, _| Value::Array(vec![inner]))
}

/// How many arrays wrap the innermost value (first items only).
fn depth_of(mut value: &Value) -> usize {
    let mut depth = 0;
    while let Some(inner) = value.as_array().and_then(|items| items.first()) {
        value = inner;
        depth += 1;
    }
    depth
}

fn program(language: &str, levels: usize) -> String {
    match language {
        "typescript" => format!(
            "let v = 0; for (let i = 0; i < {levels}; i++) v = [v];\n\
             const r = await tools.take({{ v }});\n\
             let d = 0; let x = r; while (Array.isArray(x)) {{ x = x[0]; d++; }}\n\
             return [d, r];"
        ),
        _ => format!(
            "v = 0\nfor _ in range({levels}):\n    v = [v]\n\
             r = await tools.take({{'v': v}})\n\
             d = 0\nx = r\nwhile isinstance(x, list):\n    x = x[0]\n    d += 1\n\
             return [d, r]"
        ),
    }
}

fn crosses_intact(language: &'static str) {
    with_big_stack(move || {
        let mut host = Host::code_mode(
            Framing::Ndjson,
            "code",
            json!({ "codeRuntime": { "language": language, "poolSize": 1 } }),
        );
        host.register(any_spec("take", true));
        for levels in [3_000, 5_000] {
            let id = json!(format!("deep-{levels}"));
            host.send_run_code(id.clone(), "deep", &program(language, levels));
            let mut sent = None;
            let (response, transcript) = host.serve_until(&id, |call| {
                sent = Some(depth_of(&call["arguments"]["v"]));
                Some(Ok(json!({ "value": nest(levels) })))
            });
            assert_eq!(
                sent,
                Some(levels),
                "{language}: the client got the whole argument"
            );
            for method in ["tools/codeDispatchStart", "tools/codeDispatch"] {
                let events = with_method(&transcript, method);
                let arguments = &events[0]["params"]["arguments"]["v"];
                assert_eq!(depth_of(arguments), levels, "{language}: {method}");
            }
            let result = &response["result"]["value"]["result"];
            assert_eq!(
                result[0],
                json!(levels),
                "{language}: the program got it whole"
            );
            assert_eq!(
                depth_of(&result[1]),
                levels,
                "{language}: the completion is whole"
            );
        }
        assert_eq!(host.finish(), 0);
    });
}

#[test]
fn typescript_values_5000_levels_deep_cross_the_bridge_both_ways() {
    crosses_intact("typescript");
}

#[test]
fn python_values_5000_levels_deep_cross_the_bridge_both_ways() {
    crosses_intact("python");
}
