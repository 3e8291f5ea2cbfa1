//! Both engines bound the JSON a program hands the host at `transport.maxNestingDepth`,
//! through the real binary: binding arguments one level too deep fail that call with the
//! path that is too deep (the program goes on), and so does a completion.

use crate::support::code::{Framing, Host, any_spec};
use serde_json::{Value, json};

const LIMIT: usize = 40;

/// A host with the depth limit whose `codeRuntime.language` is `language`.
fn host(language: &str) -> Host {
    let mut host = Host::code_mode(
        Framing::Ndjson,
        "code",
        json!({ "transport": { "maxNestingDepth": LIMIT },
                "codeRuntime": { "language": language, "poolSize": 1 } }),
    );
    host.register(any_spec("take", true));
    host
}

/// Runs `code`, answering every `take` call with `"taken"`, and returns the outer result.
fn run(host: &mut Host, code: &str) -> Value {
    let id = json!("depth");
    host.send_run_code(id.clone(), "depth-run", code);
    let (response, _) = host.serve_until(&id, |_| Some(Ok(json!({ "value": "taken" }))));
    response["result"].clone()
}

fn assert_bounded(language: &str, program: &str, completion_program: &str) {
    let mut host = host(language);
    let result = run(&mut host, program);
    let answer = &result["value"]["result"];
    // `{ v: <LIMIT - 1 arrays> }` is exactly LIMIT containers deep; one more is refused.
    assert_eq!(answer[0], json!("taken"), "{language}: {result}");
    let refusal = answer[1].as_str().unwrap_or_default();
    assert!(
        refusal.starts_with("arguments must be lossless JSON: arguments")
            && refusal.ends_with(&format!(" nests deeper than {LIMIT} levels")),
        "{language}: {result}"
    );
    let completion = run(&mut host, completion_program);
    assert_eq!(
        completion["isError"],
        json!(true),
        "{language}: {completion}"
    );
    let message = completion["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "code run failed (invalid-output): program completion must be lossless JSON"
        ),
        "{language}: {completion}"
    );
    assert_eq!(host.finish(), 0);
}

#[test]
fn typescript_programs_pass_and_return_json_no_deeper_than_the_transport_limit() {
    let nest = |levels: usize| {
        format!("(() => {{ let v = 0; for (let i = 0; i < {levels}; i++) v = [v]; return v; }})()")
    };
    let program = format!(
        "const fits = await tools.take({{ v: {} }});\n\
         const refused = await tools.take({{ v: {} }}).then(() => 'accepted', (e) => e.message);\n\
         return [fits, refused];",
        nest(LIMIT - 1),
        nest(LIMIT)
    );
    assert_bounded(
        "typescript",
        &program,
        &format!("return {};", nest(LIMIT + 1)),
    );
}

#[test]
fn python_programs_pass_and_return_json_no_deeper_than_the_transport_limit() {
    let nest = |levels: usize| format!("nest({levels})");
    let helper = "def nest(levels):\n    v = 0\n    for _ in range(levels):\n        v = [v]\n    return v\n";
    let program = format!(
        "{helper}fits = await tools.take({{'v': {}}})\n\
         try:\n    await tools.take({{'v': {}}})\n    refused = 'accepted'\n\
         except TypeError as error:\n    refused = str(error)\n\
         return [fits, refused]",
        nest(LIMIT - 1),
        nest(LIMIT)
    );
    assert_bounded(
        "python",
        &program,
        &format!("{helper}return {}", nest(LIMIT + 1)),
    );
}
