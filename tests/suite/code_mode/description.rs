//! `run_code` as the model reads it, through the real binary, in the reference's wording for
//! each language: the tool description names both required arguments, `code` and
//! `description`, and the language; the `code` parameter says what the program is.

use crate::support::code::{Framing, Host};
use serde_json::{Value, json};

const TYPESCRIPT: &str = "Execute a TypeScript program against the available tools. Takes two required arguments: `code`, the BODY of an async function (erasable syntax only; top-level `await` and `return` work), and `description`, a short summary of what the program does. Call tools as `await tools.name(args)` per the declarations in the system prompt. Only what you print or return is program output — curate it.";
const PYTHON: &str = "Execute a Python program against the available tools. Takes two required arguments: `code`, the BODY of an async function (top-level `await` and `return` work), and `description`, a short summary of what the program does. Call tools as `await tools.name(args)` per the declarations in the system prompt. Use `print(...)` and/or `return <value>` for program output — curate it.";

#[test]
fn run_code_names_code_and_description_in_each_languages_wording() {
    let mut host = Host::code_mode(
        Framing::Ndjson,
        "code",
        json!({ "codeRuntime": { "languages": ["typescript", "python"], "poolSize": 1 } }),
    );
    host.request("agents/open", json!({ "agent": "py" }));
    host.request(
        "tools/presentAs",
        json!({ "agent": "py", "mode": "code", "language": "python" }),
    );
    for (agent, description, code) in [
        (
            None,
            TYPESCRIPT,
            "The program: the body of an async TypeScript function.",
        ),
        (
            Some("py"),
            PYTHON,
            "The program: the body of an async Python function.",
        ),
    ] {
        let mut params = json!({ "name": "run_code" });
        if let Some(agent) = agent {
            params["agent"] = json!(agent);
        }
        let got: Value = host.request("tools/get", params)["result"].clone();
        assert_eq!(got["description"], json!(description), "{agent:?}");
        let properties = &got["inputSchema"]["properties"];
        assert_eq!(properties["code"]["description"], json!(code), "{agent:?}");
        assert_eq!(
            got["inputSchema"]["required"],
            json!(["code", "description"]),
            "{agent:?}"
        );
    }
    assert_eq!(host.finish(), 0);
}
