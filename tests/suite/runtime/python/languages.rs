//! Both Code Mode runtimes in one host, through the real binary: `codeRuntime.languages`
//! loads TypeScript and Python, `tools/presentAs` gives each agent its language, and an
//! agent whose language has no loaded runtime fails prompt assembly and `run_code` loudly.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::code as code_support;

use code_support::{FRAMINGS, Host, echo_spec, sdk_of};
use serde_json::{Value, json};

/// Runs `code` as `agent`'s `run_code`, answering its echo calls, and returns the wire result.
fn run_as(host: &mut Host, agent: &str, code: &str) -> Value {
    let id = json!(format!("{agent}-request"));
    host.send_request(
        id.clone(),
        "tools/execute",
        json!({ "callId": format!("{agent}-run"), "name": "run_code", "agent": agent,
            "arguments": { "code": code, "description": "which language" } }),
    );
    let (response, _) = host.serve_until(&id, |call| {
        Some(Ok(json!({ "value": call["arguments"]["text"] })))
    });
    response["result"].clone()
}

fn open_presented(host: &mut Host, agent: &str, language: Option<&str>) {
    let response = host.request("agents/open", json!({ "agent": agent }));
    assert_eq!(response["result"], json!(null), "{response}");
    let mut params = json!({ "agent": agent, "mode": "code" });
    if let Some(language) = language {
        params["language"] = json!(language);
    }
    let response = host.request("tools/presentAs", params);
    assert!(response["result"]["registration"].is_string(), "{response}");
}

#[test]
fn one_host_serves_typescript_and_python_agents_side_by_side() {
    for framing in FRAMINGS {
        let mut host = Host::code_mode(
            framing,
            "native",
            json!({ "codeRuntime": { "languages": ["typescript", "python"], "poolSize": 1 } }),
        );
        host.register(echo_spec("echo"));
        open_presented(&mut host, "ts-agent", None);
        open_presented(&mut host, "py-agent", Some("python"));
        let python_prompt = host.request("tools/prompt", json!({ "agent": "py-agent" }));
        let python_sdk = sdk_of(&python_prompt);
        assert!(
            python_sdk.contains("```py\n") && python_sdk.contains("class Tools:"),
            "{python_sdk}"
        );
        let typescript_sdk = sdk_of(&host.request("tools/prompt", json!({ "agent": "ts-agent" })));
        assert!(
            typescript_sdk.contains("```ts\n") && typescript_sdk.contains("declare const tools"),
            "{typescript_sdk}"
        );
        let run_code_of = |prompt: &Value| {
            prompt["result"]["tools"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["name"] == "run_code")
                .map(|t| t["description"].as_str().unwrap().to_owned())
                .unwrap()
        };
        assert!(run_code_of(&python_prompt).starts_with("Execute a Python program"));

        let python = run_as(
            &mut host,
            "py-agent",
            "import sys\nprint(sys.version_info.major)\nreturn await tools.echo({'text': 'py'})",
        );
        assert_eq!(
            python["value"],
            json!({ "logs": ["3"], "result": "py" }),
            "{python}"
        );
        let typescript = run_as(
            &mut host,
            "ts-agent",
            "const n: number = 3;\nconsole.log(typeof n);\nreturn await tools.echo({ text: 'ts' });",
        );
        assert_eq!(
            typescript["value"],
            json!({ "logs": ["number"], "result": "ts" }),
            "{typescript}"
        );
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn an_agent_whose_language_has_no_loaded_runtime_is_refused_loudly() {
    let mut host = Host::code_mode(code_support::Framing::Ndjson, "native", json!({}));
    open_presented(&mut host, "py-agent", Some("python"));
    let prompt = host.request("tools/prompt", json!({ "agent": "py-agent" }));
    assert_eq!(
        prompt["error"]["message"],
        "Code Mode language \"python\" has no runtime loaded in this host (codeRuntime.language / codeRuntime.languages)"
    );
    assert_eq!(prompt["error"]["data"]["code"], "NO_CODE_RUNTIME");
    let run = run_as(&mut host, "py-agent", "return 1");
    assert_eq!(run["isError"], json!(true), "{run}");
    assert_eq!(
        run["error"]["message"],
        "Code Mode language \"python\" has no runtime loaded in this host (codeRuntime.language / codeRuntime.languages)"
    );
    assert_eq!(host.finish(), 0);
}

#[test]
fn initialize_reports_the_loaded_languages() {
    for (config, expected) in [
        (json!({}), json!(["typescript"])),
        (
            json!({ "codeRuntime": { "language": "python" } }),
            json!(["python"]),
        ),
        (
            json!({ "codeRuntime": { "languages": ["python"] } }),
            json!(["typescript", "python"]),
        ),
    ] {
        let mut host = Host::spawn(code_support::Framing::Lsp);
        let response = host.request(
            "initialize",
            json!({ "protocolVersion": "1", "config": config }),
        );
        assert_eq!(
            response["result"]["capabilities"]["codeLanguages"], expected,
            "{config}"
        );
        assert_eq!(host.finish(), 0);
    }
}

#[test]
fn code_runtime_python_names_the_interpreter() {
    let real = String::from_utf8(
        std::process::Command::new("python3")
            .args(["-c", "import sys; sys.stdout.write(sys.executable)"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let mut host = Host::code_mode(
        code_support::Framing::Ndjson,
        "code",
        json!({ "codeRuntime": { "language": "python", "python": real } }),
    );
    let result = host.run_code("named", "import sys\nreturn sys.executable");
    assert_eq!(result["value"]["result"], json!(real), "{result}");
    assert_eq!(host.finish(), 0);

    let mut host = Host::code_mode(
        code_support::Framing::Ndjson,
        "code",
        json!({ "codeRuntime": { "language": "python", "python": "/nonexistent/python3" } }),
    );
    let result = host.run_code("missing", "return 1");
    assert_eq!(
        result["error"]["message"],
        "the Python Code Mode runtime could not start: the runtime bootstrap failed: could not start /nonexistent/python3: No such file or directory (os error 2)",
        "{result}"
    );
    assert_eq!(host.finish(), 0);
}

#[test]
fn tools_get_describes_run_code_in_the_language_of_the_scope_asking() {
    let mut host = Host::code_mode(
        code_support::Framing::Ndjson,
        "code",
        json!({ "codeRuntime": { "languages": ["typescript", "python"], "poolSize": 1 } }),
    );
    open_presented(&mut host, "py-agent", Some("python"));
    let prompt_tool = |host: &mut Host, agent: Option<&str>| {
        let params = agent.map_or(json!({}), |agent| json!({ "agent": agent }));
        let prompt = host.request("tools/prompt", params);
        let tools = prompt["result"]["tools"].as_array().unwrap().clone();
        tools.into_iter().find(|t| t["name"] == "run_code").unwrap()
    };
    for (agent, summary) in [
        (None, "Execute a TypeScript program"),
        (Some("py-agent"), "Execute a Python program"),
    ] {
        let params = match agent {
            Some(agent) => json!({ "name": "run_code", "agent": agent }),
            None => json!({ "name": "run_code" }),
        };
        let got = host.request("tools/get", params)["result"].clone();
        let expected = prompt_tool(&mut host, agent);
        assert!(
            got["description"].as_str().unwrap().starts_with(summary),
            "{got}"
        );
        assert_eq!(got["description"], expected["description"], "{agent:?}");
        assert_eq!(got["inputSchema"], expected["inputSchema"], "{agent:?}");
    }
    assert_eq!(host.finish(), 0);
}

/// A child of a Python agent inherits its presentation and its language: its SDK and the
/// program its `run_code` runs are Python.
#[test]
fn a_child_inherits_its_parents_code_mode_language() {
    let mut host = Host::code_mode(
        code_support::Framing::Ndjson,
        "native",
        json!({ "codeRuntime": { "languages": ["typescript", "python"], "poolSize": 1 } }),
    );
    host.register(echo_spec("echo"));
    open_presented(&mut host, "py-agent", Some("python"));
    let opened = host.request(
        "agents/open",
        json!({ "agent": "py-child", "parent": "py-agent" }),
    );
    assert_eq!(opened["result"], json!(null), "{opened}");
    let sdk = sdk_of(&host.request("tools/prompt", json!({ "agent": "py-child" })));
    assert!(sdk.contains("```py\n"), "{sdk}");
    let result = run_as(
        &mut host,
        "py-child",
        "return await tools.echo({'text': 'inherited'})",
    );
    assert_eq!(
        result["value"],
        json!({ "logs": [], "result": "inherited" }),
        "{result}"
    );
    assert_eq!(host.finish(), 0);
}
