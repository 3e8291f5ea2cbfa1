//! Host configuration: `--config FILE` (JSON or TOML; repeatable, later files winning key
//! by key; Claude Code's and Codex's files read as they are) with `initialize.config`
//! merged over it, validated field by field; every error names the field.

pub mod dialect;
pub mod expand;
pub mod layers;
mod show;

pub use layers::Layers;
pub use show::show;

use dsh_tools_protocol::{HostConfig, McpServerKind, SandboxConfig};
use serde_json::Value;
use std::path::Path;

/// A configuration error naming the offending field (`config.tools.mode: ...`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// The deepest `transport.maxNestingDepth` the host accepts: the depth that the wire tests
/// (`tests/suite/frontends/rpc/deep.rs`) take through every recursive path on the stacks
/// the host gives them (runtime workers, isolate threads), with a 2 MiB main thread.
pub const MAX_NESTING_DEPTH: u32 = 50_000;

/// Reads a JSON (`.json`) or TOML (anything else) file into a JSON value.
pub fn read_file(path: &Path) -> Result<Value, ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError(format!("cannot read config file {}: {e}", path.display())))?;
    if path.extension().is_some_and(|ext| ext == "json") {
        serde_json::from_str(&text)
            .map_err(|e| ConfigError(format!("{}: invalid JSON: {e}", path.display())))
    } else {
        let table: toml::Table = toml::from_str(&text)
            .map_err(|e| ConfigError(format!("{}: invalid TOML: {e}", path.display())))?;
        serde_json::to_value(table).map_err(|e| ConfigError(format!("{}: {e}", path.display())))
    }
}

/// Deep-merges `over` into `base`: objects merge key by key, anything else replaces.
pub fn merge(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(base), Value::Object(over)) => {
            for (key, value) in over {
                match base.get_mut(&key) {
                    Some(slot) => merge(slot, value),
                    None => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (slot, value) => *slot = value,
    }
}

/// Parses and validates a merged configuration.
pub fn parse(value: Value) -> Result<HostConfig, ConfigError> {
    let config: HostConfig = match serde_path_to_error::deserialize(&value) {
        Ok(config) => config,
        // With `arbitrary_precision` a `Value` number that does not fit its field (`-1`,
        // `1.5`, `2^32` for a u32) only says "invalid number"; read from text, it says why.
        Err(e) if e.inner().to_string() == "invalid number" => {
            let text = value.to_string();
            let mut json = serde_json::Deserializer::from_str(&text);
            let error = serde_path_to_error::deserialize::<_, HostConfig>(&mut json).err();
            return Err(error.map_or_else(
                || naming(e.path(), "invalid number"),
                |e| {
                    // The position is in text the user never wrote.
                    let inner = e.inner();
                    let position = format!(" at line {} column {}", inner.line(), inner.column());
                    let message = inner.to_string();
                    naming(
                        e.path(),
                        message.strip_suffix(&position).unwrap_or(&message),
                    )
                },
            ));
        }
        Err(e) => return Err(naming(e.path(), &e.inner().to_string())),
    };
    validate(&config)?;
    Ok(config)
}

/// `config.<path>: <message>`.
fn naming(path: &serde_path_to_error::Path, message: &str) -> ConfigError {
    let path = path.to_string();
    if path == "." {
        ConfigError(format!("config: {message}"))
    } else {
        ConfigError(format!("config.{path}: {message}"))
    }
}

/// Every `sandbox` section with the field path that names it.
fn sandboxes(config: &HostConfig) -> Vec<(String, &SandboxConfig)> {
    let mut found = vec![("config.sandbox".to_owned(), &config.sandbox)];
    if let Some(own) = config
        .builtins
        .bash
        .as_ref()
        .and_then(|b| b.sandbox.as_ref())
    {
        found.push(("config.builtins.bash.sandbox".to_owned(), own));
    }
    if let Some(own) = &config.code_runtime.sandbox {
        found.push(("config.codeRuntime.sandbox".to_owned(), own));
    }
    for (name, server) in &config.mcp_servers {
        if let Some(own) = &server.sandbox {
            found.push((format!("config.mcpServers.{name}.sandbox"), own));
        }
    }
    found
}

/// Roots must be non-empty paths (whether they exist is checked when their family starts,
/// which then refuses to, naming the root); a network policy's patterns must parse.
fn validate_sandboxes(config: &HostConfig) -> Result<(), ConfigError> {
    if let Some(policy) = config
        .builtins
        .web
        .as_ref()
        .and_then(|web| web.network.as_ref())
    {
        crate::egress::EgressPolicy::parse(
            &policy.allow,
            &policy.deny,
            "config.builtins.web.network",
        )
        .map_err(ConfigError)?;
    }
    for (field, sandbox) in sandboxes(config) {
        if let Some(policy) = sandbox.network.as_ref().and_then(|n| n.policy()) {
            crate::egress::EgressPolicy::parse(
                &policy.allow,
                &policy.deny,
                &format!("{field}.network"),
            )
            .map_err(ConfigError)?;
        }
        for (name, roots) in [
            ("writableRoots", &sandbox.writable_roots),
            ("readOnlyRoots", &sandbox.read_only_roots),
            ("denyRead", &sandbox.deny_read),
            ("allowUnixSockets", &sandbox.allow_unix_sockets),
        ] {
            if roots.iter().flatten().any(|root| root.trim().is_empty()) {
                return Err(ConfigError(format!(
                    "{field}.{name}: entries must be non-empty paths"
                )));
            }
        }
    }
    Ok(())
}

/// `spill.dir` must lie outside every root a tool or a command may write (the fs root, the
/// bash cwd, every sandbox's `writableRoots`): a command there could replace it with a link
/// and choose where the host writes. Compared with links resolved as far as paths exist.
fn validate_spill_dir(config: &HostConfig) -> Result<(), ConfigError> {
    let Some(dir) = config.spill.dir.as_deref().filter(|d| !d.trim().is_empty()) else {
        return Ok(());
    };
    let builtins = &config.builtins;
    let mut roots: Vec<(String, &str)> = Vec::new();
    if let Some(fs) = &builtins.fs {
        roots.push(("config.builtins.fs.root".into(), &fs.root));
    }
    if let Some(bash) = &builtins.bash {
        roots.push(("config.builtins.bash.cwd".into(), &bash.cwd));
    }
    for (field, sandbox) in sandboxes(config) {
        for root in sandbox.writable_roots.iter().flatten() {
            roots.push((format!("{field}.writableRoots"), root));
        }
    }
    let spill = settled(dir);
    for (field, root) in roots {
        if spill.starts_with(settled(root)) {
            return Err(ConfigError(format!(
                "config.spill.dir: {dir} lies inside the writable root {root} ({field}); \
                 choose a directory outside every root a tool or a command may write"
            )));
        }
    }
    Ok(())
}

/// `path` made absolute, its longest existing prefix canonical.
fn settled(path: &str) -> std::path::PathBuf {
    let Ok(absolute) = std::path::absolute(path) else {
        return path.into();
    };
    let mut existing = absolute.as_path();
    while let Some(parent) = existing.parent() {
        if let Ok(canonical) = existing.canonicalize() {
            let rest = absolute
                .strip_prefix(existing)
                .unwrap_or(std::path::Path::new(""));
            return canonical.join(rest);
        }
        existing = parent;
    }
    absolute
}

/// `tools.deferred` / `tools.alwaysLoaded` entries must be globs the registry can compile
/// (the same `globset` settings as `registry::Deferral`).
fn validate_name_globs(config: &HostConfig) -> Result<(), ConfigError> {
    let lists = [
        ("deferred", &config.tools.deferred),
        ("alwaysLoaded", &config.tools.always_loaded),
    ];
    for (field, patterns) in lists {
        for (index, pattern) in patterns.iter().enumerate() {
            let compiled = globset::GlobBuilder::new(pattern)
                .backslash_escape(true)
                .build();
            if let Err(e) = compiled {
                let why = e.kind();
                return Err(ConfigError(format!(
                    "config.tools.{field}[{index}]: invalid glob {pattern:?}: {why}"
                )));
            }
        }
    }
    Ok(())
}

/// Each server is either spawned (`command`, with `args`, `env`, `cwd`, `sandbox`) or
/// remote (`url`, with `headers`, `bearerTokenEnv`); the URL is absolute `http(s)` and the
/// header names are valid. (Header values are checked, after `${VAR}` expansion, when the
/// server starts: the environment may change in between.)
fn validate_mcp_servers(config: &HostConfig) -> Result<(), ConfigError> {
    for (name, server) in &config.mcp_servers {
        let field = format!("config.mcpServers.{name}");
        let needs = match server.kind {
            Some(McpServerKind::Stdio) => Some(("stdio", "command", server.command.is_some())),
            Some(McpServerKind::Http | McpServerKind::Sse) => {
                Some(("http", "url", server.url.is_some()))
            }
            None => None,
        };
        if let Some((kind, key, false)) = needs {
            return Err(ConfigError(format!(
                "{field}: type \"{kind}\" needs `{key}`"
            )));
        }
        if server.startup_timeout_ms == Some(0) {
            return Err(ConfigError(format!(
                "{field}.startupTimeoutMs: must be positive"
            )));
        }
        let Some(url) = &server.url else {
            if server.command.is_none() {
                return Err(ConfigError(format!(
                    "{field}: needs `command` (a program to spawn) or `url` (a Streamable HTTP endpoint)"
                )));
            }
            let remote_only = [
                ("headers", !server.headers.is_empty()),
                ("bearerTokenEnv", server.bearer_token_env.is_some()),
                ("oauth", server.oauth.is_some()),
            ];
            if let Some((key, _)) = remote_only.iter().find(|(_, set)| *set) {
                return Err(ConfigError(format!(
                    "{field}.{key}: only applies to `url` servers"
                )));
            }
            continue;
        };
        let spawn_only = [
            ("command", server.command.is_some()),
            ("args", !server.args.is_empty()),
            ("env", !server.env.is_empty()),
            ("cwd", server.cwd.is_some()),
            ("sandbox", server.sandbox.is_some()),
        ];
        if let Some((key, _)) = spawn_only.iter().find(|(_, set)| *set) {
            return Err(ConfigError(format!(
                "{field}.{key}: does not apply to a `url` server"
            )));
        }
        // A URL with `${VAR}` is checked once expanded, when the server starts.
        if !expand::references(url) && !is_http_url(url) {
            return Err(ConfigError(format!("{field}.url: {URL_RULE}")));
        }
        for header in server.headers.keys() {
            if http::HeaderName::from_bytes(header.as_bytes()).is_err() {
                return Err(ConfigError(format!(
                    "{field}.headers: {header:?} is not a valid HTTP header name"
                )));
            }
        }
        if server
            .bearer_token_env
            .as_deref()
            .is_some_and(str::is_empty)
        {
            return Err(ConfigError(format!(
                "{field}.bearerTokenEnv: must name an environment variable"
            )));
        }
    }
    Ok(())
}

/// What an MCP server's `url` must be.
pub const URL_RULE: &str = "must be an absolute http:// or https:// URL";

/// Whether `url` is an absolute `http(s)` URL with a host.
pub fn is_http_url(url: &str) -> bool {
    let parsed = url.parse::<http::Uri>().ok();
    let scheme = parsed.as_ref().and_then(|uri| uri.scheme_str());
    let has_host = parsed.as_ref().and_then(|uri| uri.host()).is_some();
    matches!(scheme, Some("http" | "https")) && has_host
}

/// `builtins.bash.limits`: below these even an empty command cannot start.
fn validate_bash_limits(config: &HostConfig) -> Result<(), ConfigError> {
    let Some(bash) = &config.builtins.bash else {
        return Ok(());
    };
    let limits = &bash.limits;
    let checks = [
        (limits.memory_mb >= 16, "memoryMb", "must be at least 16"),
        (limits.pids >= 8, "pids", "must be at least 8"),
        (
            limits.cpu_percent != Some(0),
            "cpuPercent",
            "must be at least 1",
        ),
    ];
    match checks.iter().find(|(ok, _, _)| !ok) {
        Some((_, key, message)) => Err(ConfigError(format!(
            "config.builtins.bash.limits.{key}: {message}"
        ))),
        None => Ok(()),
    }
}

fn validate(config: &HostConfig) -> Result<(), ConfigError> {
    validate_sandboxes(config)?;
    validate_bash_limits(config)?;
    validate_spill_dir(config)?;
    validate_name_globs(config)?;
    validate_mcp_servers(config)?;
    let runtime = &config.code_runtime;
    let spill = &config.spill;
    let checks: [(bool, &str, &str); 17] = [
        (
            config.pipeline.hook_timeout_ms > 0,
            "config.pipeline.hookTimeoutMs",
            "must be positive",
        ),
        (
            config.tools.max_parallel_sub_calls >= 1,
            "config.tools.maxParallelSubCalls",
            "must be at least 1",
        ),
        (
            runtime.compute_ms > 0,
            "config.codeRuntime.computeMs",
            "must be positive",
        ),
        (
            runtime.max_wall_ms > 0,
            "config.codeRuntime.maxWallMs",
            "must be positive",
        ),
        (
            runtime.max_output_bytes >= 4,
            "config.codeRuntime.maxOutputBytes",
            "must be at least 4",
        ),
        (
            runtime.max_heap_mb > 0,
            "config.codeRuntime.maxHeapMb",
            "must be positive",
        ),
        (
            runtime.pool_size >= 1,
            "config.codeRuntime.poolSize",
            "must be at least 1",
        ),
        (
            runtime.max_concurrent_runs >= 1,
            "config.codeRuntime.maxConcurrentRuns",
            "must be at least 1",
        ),
        (
            config.pipeline.timeout.default_ms != Some(0),
            "config.pipeline.timeout.defaultMs",
            "must be positive",
        ),
        (
            config.pipeline.retry.max_attempts >= 1,
            "config.pipeline.retry.maxAttempts",
            "must be at least 1",
        ),
        (
            config.transport.max_message_bytes >= 1024,
            "config.transport.maxMessageBytes",
            "must be at least 1024",
        ),
        // Below this even the protocol's own envelopes (`initialize` with a config,
        // `tools/register` with a schema) would be refused.
        (
            config.transport.max_nesting_depth >= 32,
            "config.transport.maxNestingDepth",
            "must be at least 32",
        ),
        (
            config.transport.max_nesting_depth <= MAX_NESTING_DEPTH,
            "config.transport.maxNestingDepth",
            "must be at most 50000",
        ),
        // Below this the marker and the read-more line alone could fill the preview.
        (
            spill.threshold_bytes == 0 || spill.threshold_bytes >= 1024,
            "config.spill.thresholdBytes",
            "must be 0 (off) or at least 1024",
        ),
        (
            spill.preview_bytes > 0,
            "config.spill.previewBytes",
            "must be positive",
        ),
        (
            spill.max_total_bytes > 0,
            "config.spill.maxTotalBytes",
            "must be positive",
        ),
        (
            spill
                .dir
                .as_deref()
                .is_none_or(|dir| !dir.trim().is_empty()),
            "config.spill.dir",
            "must not be empty",
        ),
    ];
    match checks.iter().find(|(ok, _, _)| !ok) {
        Some((_, field, rule)) => Err(ConfigError(format!("{field}: {rule}"))),
        None => Ok(()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
