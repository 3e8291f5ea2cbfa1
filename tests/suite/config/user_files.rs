//! Users' own files read as they are, through the real binary: Claude Code's `.mcp.json`
//! and `settings.json` and Codex's `config.toml` (samples under `tests/fixtures/`, written
//! as those tools document them), `${VAR}` / `${VAR:-default}` reaching a real server's
//! environment, `--config` given several times (later files win key by key, each value
//! keeping its file), `dsh-tools config show`, and a configured server that fails to start
//! failing `dsh-tools run` with its name and cause.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::http::Everything;
use crate::support::mcp::installed;
use crate::support::wire::{Framing, Host};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::{Command, Output};

/// A sample file under `tests/fixtures/`.
fn fixture(rest: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rest)
        .to_string_lossy()
        .into_owned()
}

/// A program file of one test, in a directory of its own that goes when this is dropped.
struct Program {
    dir: PathBuf,
    file: PathBuf,
}

impl std::ops::Deref for Program {
    type Target = PathBuf;

    fn deref(&self) -> &PathBuf {
        &self.file
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn program(test: &str, text: &str) -> Program {
    let dir = std::env::temp_dir().join(format!("dsh-user-files-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("program.ts");
    std::fs::write(&file, text).unwrap();
    Program { dir, file }
}

/// `dsh-tools <args>` run where the samples' relative server paths resolve (the installed
/// test servers), with `env` over a host environment cleared of the samples' variables.
fn dsh_tools(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_dsh-tools"));
    command
        .args(args)
        .current_dir(installed(""))
        .env("RUST_BACKTRACE", "0");
    for var in [
        "GREETING",
        "DSH_FIXTURE_API_KEY",
        "EVERYTHING_URL",
        "EVERYTHING_TOKEN",
    ] {
        command.env_remove(var);
    }
    command.envs(env.iter().copied());
    command.output().expect("run dsh-tools")
}

/// The value `dsh-tools run` printed after its header.
fn run_value(output: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let (_, rest) = stdout
        .split_once("── run_code completed")
        .unwrap_or_else(|| panic!("run failed: {output:?}"));
    serde_json::from_str(rest.split_once('\n').unwrap().1).unwrap()
}

const GET_ENV_AND_ECHO: &str = "const env = JSON.parse(await tools['mcp__everything__get-env']({}));\n\
    const echoed = await tools.mcp__remote__echo({ message: 'hi' });\n\
    return { greeting: env.GREETING, key: env.API_KEY, echoed };";

#[test]
fn a_claude_code_mcp_json_loads_unchanged_and_expands_variables_as_documented() {
    let everything = Everything::start();
    let program = program("mcp-json", GET_ENV_AND_ECHO);
    let url = everything.url();
    let base = [
        ("EVERYTHING_URL", url.as_str()),
        ("EVERYTHING_TOKEN", "t0ken"),
        ("DSH_FIXTURE_API_KEY", "k3y"),
    ];
    let mcp_json = fixture("claude-code/.mcp.json");
    let args = ["--config", &mcp_json, "run", program.to_str().unwrap()];
    let output = dsh_tools(&args, &base);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        run_value(&output),
        json!({ "greeting": "hello from .mcp.json", "key": "k3y", "echoed": "Echo: hi" })
    );
    // zod's `$schema` on every server-everything schema is an annotation: no warnings.
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("Schema"), "{stderr}");
    let mut greeted = base.to_vec();
    greeted.push(("GREETING", "set in the environment"));
    let output = dsh_tools(&args, &greeted);
    assert_eq!(
        run_value(&output)["greeting"],
        "set in the environment",
        "{output:?}"
    );
}

#[test]
fn run_fails_naming_each_server_that_did_not_start_and_why() {
    let program = program("failed", "return 1;");
    let mcp_json = fixture("claude-code/.mcp.json");
    // No EVERYTHING_TOKEN: `remote`'s header cannot be expanded; `everything` starts.
    let output = dsh_tools(
        &["--config", &mcp_json, "run", program.to_str().unwrap()],
        &[("DSH_FIXTURE_API_KEY", "k3y")],
    );
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(
        output.stdout.is_empty(),
        "the program did not run: {output:?}"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "dsh-tools run: MCP server \"remote\" failed to start: header \"Authorization\" references the unset environment variable EVERYTHING_TOKEN"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("\"everything\" failed"), "{stderr}");
    let missing = std::env::temp_dir().join(format!("dsh-missing-{}.json", std::process::id()));
    std::fs::write(
        &missing,
        json!({ "mcpServers": {
            "gone": { "command": "definitely-not-a-command-dsh" },
            "legacy": { "type": "sse", "url": "http://127.0.0.1:9/sse" }
        } })
        .to_string(),
    )
    .unwrap();
    let output = dsh_tools(
        &[
            "--config",
            missing.to_str().unwrap(),
            "run",
            program.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("MCP server \"gone\" failed to start: ")
            && stderr.contains("definitely-not-a-command-dsh"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "MCP server \"legacy\" failed to start: type \"sse\" (the deprecated HTTP+SSE transport) is not supported: give the server's Streamable HTTP endpoint with type \"http\""
        ),
        "{stderr}"
    );
    std::fs::remove_file(&missing).unwrap();
}

#[test]
fn a_codex_config_toml_loads_unchanged_with_its_tool_filter_and_disabled_server() {
    let program = program(
        "codex",
        "const env = JSON.parse(await tools['mcp__everything__get-env']({}));\n\
         return [Object.keys(tools), env.GREETING, await tools.mcp__everything__echo({ message: 'hi' })];",
    );
    let codex = fixture("codex/config.toml");
    let output = dsh_tools(&["--config", &codex, "run", program.to_str().unwrap()], &[]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        run_value(&output),
        json!([
            ["mcp__everything__echo", "mcp__everything__get-env"],
            "hello from config.toml",
            "Echo: hi"
        ])
    );
}

#[test]
fn later_config_files_win_key_by_key_and_config_show_names_each_values_file() {
    let mcp_json = fixture("claude-code/.mcp.json");
    let codex = fixture("codex/config.toml");
    let settings = fixture("claude-code/settings.json");
    let output = dsh_tools(
        &[
            "--config", &mcp_json, "--config", &codex, "--config", &settings, "config", "show",
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let shown = String::from_utf8(output.stdout).unwrap();
    for line in [
        // Codex's file came later: its command, args and GREETING win; .mcp.json's other
        // keys stay, each naming its file; env values are masked unless only references.
        format!("mcpServers.everything.type = \"stdio\"  # {mcp_json}"),
        format!("mcpServers.everything.env.GREETING = \"••••\"  # {codex}"),
        format!("mcpServers.everything.env.API_KEY = \"${{DSH_FIXTURE_API_KEY}}\"  # {mcp_json}"),
        format!("mcpServers.everything.timeoutMs = 30000  # {codex}"),
        format!("mcpServers.everything.startupTimeoutMs = 20000  # {codex}"),
        format!("mcpServers.everything.tools.allow = [\"echo\",\"get-env\"]  # {codex}"),
        format!(
            "mcpServers.remote.headers.Authorization = \"Bearer ${{EVERYTHING_TOKEN}}\"  # {mcp_json}"
        ),
        format!("mcpServers.docs.headers.X-Api-Key = \"${{DOCS_API_KEY}}\"  # {codex}"),
        format!("mcpServers.docs.enabled = false  # {codex}"),
        format!("permissions.default = \"ask\"  # {settings}"),
        format!("sandbox.writableRoots = [\"../docs/\"]  # {settings}"),
    ] {
        assert!(shown.lines().any(|l| l == line), "{line:?} in\n{shown}");
    }
    // In the other order, .mcp.json's values win where both set one.
    let output = dsh_tools(
        &["--config", &codex, "--config", &mcp_json, "config", "show"],
        &[],
    );
    let shown = String::from_utf8(output.stdout).unwrap();
    let greeting = format!("mcpServers.everything.env.GREETING = \"••••\"  # {mcp_json}");
    assert!(shown.lines().any(|l| l == greeting), "{shown}");
}

#[test]
fn claude_code_settings_give_rules_that_explain_names_and_a_default() {
    let settings = fixture("claude-code/settings.json");
    let mut host = Host::serve(Framing::Ndjson, &["--config", &settings]);
    host.initialize(json!({}), json!({}));
    let explain = |host: &mut Host, command: &str| {
        host.request(
            "permissions/explain",
            json!({ "name": "bash", "arguments": { "command": command } }),
        )["result"]
            .clone()
    };
    let denied = explain(&mut host, "curl https://example.com");
    assert_eq!(denied["decision"], "deny", "{denied}");
    assert_eq!(denied["parts"][0]["rule"]["origin"], settings, "{denied}");
    let allowed = explain(&mut host, "npm run test -- --watch");
    assert_eq!(allowed["decision"], "allow", "{allowed}");
    assert_eq!(allowed["parts"][0]["rule"]["origin"], settings, "{allowed}");
    // `defaultMode: acceptEdits`: calls no rule matches ask.
    let unmatched = explain(&mut host, "make");
    assert_eq!(unmatched["decision"], "ask", "{unmatched}");
    assert_eq!(host.finish(), 0);
}
