//! Unit tests of config parsing and validation.

use super::*;
use serde_json::json;

fn error_of(config: Value) -> String {
    parse(config).unwrap_err().0
}

#[test]
fn every_invalid_field_is_named() {
    let cases = [
        (json!({ "tool": {} }), "config.tool: unknown field `tool`"),
        (
            json!({ "tools": { "mode": "fancy" } }),
            "config.tools.mode: unknown variant `fancy`",
        ),
        (
            json!({ "tools": { "maxParallelSubCalls": 0 } }),
            "config.tools.maxParallelSubCalls: must be at least 1",
        ),
        (
            json!({ "codeRuntime": { "maxOutputBytes": 3 } }),
            "config.codeRuntime.maxOutputBytes: must be at least 4",
        ),
        (
            json!({ "codeRuntime": { "computeMs": "x" } }),
            "config.codeRuntime.computeMs: invalid type: string \"x\", expected u64",
        ),
        (
            json!({ "tools": { "mode": 5 } }),
            "config.tools.mode: invalid type: number, expected string or map",
        ),
        (
            json!({ "codeRuntime": { "computeMs": -1 } }),
            "config.codeRuntime.computeMs: invalid value: integer `-1`, expected u64",
        ),
        (
            json!({ "codeRuntime": { "computeMs": 1.5 } }),
            "config.codeRuntime.computeMs: invalid type: floating point `1.5`, expected u64",
        ),
        (
            json!({ "tools": { "maxParallelSubCalls": 4_294_967_296_u64 } }),
            "config.tools.maxParallelSubCalls: invalid value: integer `4294967296`, expected u32",
        ),
        (
            json!({ "pipeline": { "timeout": { "defaultMs": 0 } } }),
            "config.pipeline.timeout.defaultMs: must be positive",
        ),
        (
            json!({ "transport": { "maxNestingDepth": 31 } }),
            "config.transport.maxNestingDepth: must be at least 32",
        ),
        (
            json!({ "spill": { "thresholdBytes": 100 } }),
            "config.spill.thresholdBytes: must be 0 (off) or at least 1024",
        ),
        (
            json!({ "spill": { "previewBytes": 0 } }),
            "config.spill.previewBytes: must be positive",
        ),
        (
            json!({ "spill": { "maxTotalBytes": 0 } }),
            "config.spill.maxTotalBytes: must be positive",
        ),
        (
            json!({ "spill": { "dir": " " } }),
            "config.spill.dir: must not be empty",
        ),
        (
            json!({ "spill": { "keep": "yes" } }),
            "config.spill.keep: invalid type: string \"yes\", expected a boolean",
        ),
        (
            json!({ "spill": { "limit": 1 } }),
            "config.spill.limit: unknown field `limit`",
        ),
        (
            json!({ "sandbox": { "mode": "none" } }),
            "config.sandbox.mode: unknown variant `none`, expected one of `workspace-write`, `read-only`, `off`",
        ),
        (
            json!({ "sandbox": { "network": "yes" } }),
            "config.sandbox.network: invalid type: string \"yes\", expected a boolean or an object { allow, deny }",
        ),
        (
            json!({ "codeRuntime": { "sandbox": { "writable": [] } } }),
            "config.codeRuntime.sandbox.writable: unknown field `writable`",
        ),
        (
            json!({ "builtins": { "bash": { "cwd": ".", "sandbox": { "writableRoots": [" "] } } } }),
            "config.builtins.bash.sandbox.writableRoots: entries must be non-empty paths",
        ),
        (
            json!({ "builtins": { "bash": { "cwd": ".", "limits": { "memoryMb": 8 } } } }),
            "config.builtins.bash.limits.memoryMb: must be at least 16",
        ),
        (
            json!({ "builtins": { "bash": { "cwd": ".", "limits": { "pids": 2 } } } }),
            "config.builtins.bash.limits.pids: must be at least 8",
        ),
        (
            json!({ "builtins": { "bash": { "cwd": ".", "limits": { "cpuPercent": 0 } } } }),
            "config.builtins.bash.limits.cpuPercent: must be at least 1",
        ),
        (
            json!({ "builtins": { "bash": { "cwd": ".", "limits": { "memory": 8 } } } }),
            "config.builtins.bash.limits.memory: unknown field `memory`, expected one of `memoryMb`, `pids`, `cpuPercent`",
        ),
        (
            json!({ "tools": { "deferred": ["mcp__*", "[a"] } }),
            "config.tools.deferred[1]: invalid glob \"[a\": unclosed character class",
        ),
        (
            json!({ "tools": { "alwaysLoaded": "mcp__*" } }),
            "config.tools.alwaysLoaded: invalid type: string \"mcp__*\", expected a sequence",
        ),
        (
            json!({ "mcpServers": { "x": { "command": "x", "deferTools": 1 } } }),
            "config.mcpServers.x.deferTools: invalid type: number, expected a boolean",
        ),
        (
            json!({ "mcpServers": { "x": { "command": "x", "sandbox": { "readOnlyRoots": [""] } } } }),
            "config.mcpServers.x.sandbox.readOnlyRoots: entries must be non-empty paths",
        ),
        (
            json!({ "mcpServers": { "x": { "args": ["a"] } } }),
            "config.mcpServers.x: needs `command` (a program to spawn) or `url` (a Streamable HTTP endpoint)",
        ),
        (
            json!({ "mcpServers": { "x": { "url": "http://h/mcp", "command": "x" } } }),
            "config.mcpServers.x.command: does not apply to a `url` server",
        ),
        (
            json!({ "mcpServers": { "x": { "url": "http://h/mcp", "env": { "A": "b" } } } }),
            "config.mcpServers.x.env: does not apply to a `url` server",
        ),
        (
            json!({ "mcpServers": { "x": { "command": "x", "headers": { "a": "b" } } } }),
            "config.mcpServers.x.headers: only applies to `url` servers",
        ),
        (
            json!({ "mcpServers": { "x": { "command": "x", "oauth": { "clientId": "c" } } } }),
            "config.mcpServers.x.oauth: only applies to `url` servers",
        ),
        (
            json!({ "mcpServers": { "x": { "url": "http://h/mcp", "oauth": { "client": "c" } } } }),
            "config.mcpServers.x.oauth.client: unknown field `client`, expected one of `clientId`, `clientSecret`, `clientMetadataUrl`, `scopes`",
        ),
        (
            json!({ "mcpServers": { "x": { "url": "ftp://h/mcp" } } }),
            "config.mcpServers.x.url: must be an absolute http:// or https:// URL",
        ),
        (
            json!({ "mcpServers": { "x": { "url": "/mcp" } } }),
            "config.mcpServers.x.url: must be an absolute http:// or https:// URL",
        ),
        (
            json!({ "mcpServers": { "x": { "type": "stdio", "url": "http://h/mcp" } } }),
            "config.mcpServers.x: type \"stdio\" needs `command`",
        ),
        (
            json!({ "mcpServers": { "x": { "type": "http", "command": "x" } } }),
            "config.mcpServers.x: type \"http\" needs `url`",
        ),
        (
            json!({ "mcpServers": { "x": { "type": "websocket", "command": "x" } } }),
            "config.mcpServers.x.type: unknown variant `websocket`, expected one of `stdio`, `http`, `sse`",
        ),
        (
            json!({ "mcpServers": { "x": { "command": "x", "startupTimeoutMs": 0 } } }),
            "config.mcpServers.x.startupTimeoutMs: must be positive",
        ),
        (
            json!({ "mcpServers": { "x": { "url": "http://h/mcp", "headers": { "bad header": "v" } } } }),
            "config.mcpServers.x.headers: \"bad header\" is not a valid HTTP header name",
        ),
        (
            json!({ "mcpServers": { "x": { "url": "http://h/mcp", "bearerTokenEnv": "" } } }),
            "config.mcpServers.x.bearerTokenEnv: must name an environment variable",
        ),
    ];
    for (config, expected) in cases {
        let error = error_of(config.clone());
        assert!(
            error.starts_with(expected),
            "{config} gave {error:?}, expected {expected:?}"
        );
    }
}

#[test]
fn merge_is_deep_and_later_wins() {
    let mut base = json!({ "tools": { "mode": "code", "maxParallelSubCalls": 3 }, "codeRuntime": { "computeMs": 5 } });
    merge(&mut base, json!({ "tools": { "mode": "both" } }));
    assert_eq!(
        base,
        json!({ "tools": { "mode": "both", "maxParallelSubCalls": 3 }, "codeRuntime": { "computeMs": 5 } })
    );
    let config = parse(base).unwrap();
    assert_eq!(config.tools.max_parallel_sub_calls, 3);
    assert_eq!(config.code_runtime.compute_ms, 5);
}

#[test]
fn toml_files_parse_like_json() {
    let dir = std::env::temp_dir().join(format!("dsh-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("host.toml");
    std::fs::write(&path, "[tools]\nmode = \"code\"\n").unwrap();
    let config = parse(read_file(&path).unwrap()).unwrap();
    assert_eq!(
        config.tools.mode,
        dsh_tools_protocol::PresentationMode::Code
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn urls_with_references_are_checked_once_expanded_and_sse_servers_load() {
    parse(json!({ "mcpServers": { "x": { "url": "${BASE:-http://h}/mcp" } } })).unwrap();
    parse(json!({ "mcpServers": { "x": { "type": "sse", "url": "http://h/sse" } } })).unwrap();
}
