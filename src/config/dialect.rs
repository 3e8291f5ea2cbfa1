//! The files users already have, read as they are: a file is recognized by its name and
//! shape and translated into this host's configuration. Claude Code's `.mcp.json` needs no
//! translation (its `type`, `command`, `args`, `env`, `url` and `headers` are this host's
//! `mcpServers` keys); Claude Code's `settings.json` gives its permission rules, mode and
//! additional directories; Codex's `config.toml` its `[mcp_servers.NAME]` tables. Keys
//! these files may hold that mean nothing here are ignored with one debug line per file.

use super::ConfigError;
use serde_json::{Map, Value, json};
use std::path::Path;

/// What kind of file a configuration file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// This host's own configuration (Claude Code's `.mcp.json` included).
    Host,
    /// Claude Code's `settings.json` (`settings.local.json`, `managed-settings.json`).
    ClaudeSettings,
    /// Codex's `config.toml`.
    Codex,
}

/// Recognizes `value`, read from `path`: by name (`settings*.json`, a `config.toml` in a
/// `.codex` directory), else by shape (Claude Code's settings `$schema` or a permission
/// mode; Codex's `mcp_servers` table).
pub fn recognize(path: &Path, value: &Value) -> Dialect {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let parent = path
        .parent()
        .and_then(Path::file_name)
        .and_then(|n| n.to_str())
        .unwrap_or("");
    let schema = value.get("$schema").and_then(Value::as_str).unwrap_or("");
    let permissions = value.get("permissions");
    let claude_permissions = ["defaultMode", "additionalDirectories"]
        .iter()
        .any(|key| permissions.is_some_and(|p| p.get(key).is_some()));
    if matches!(
        name,
        "settings.json" | "settings.local.json" | "managed-settings.json"
    ) || schema.contains("claude-code-settings")
        || claude_permissions
    {
        Dialect::ClaudeSettings
    } else if value.get("mcp_servers").is_some() || (parent == ".codex" && name == "config.toml") {
        Dialect::Codex
    } else {
        Dialect::Host
    }
}

/// `value` (read from the file named `origin`) as this host's configuration.
pub fn translate(dialect: Dialect, value: Value, origin: &str) -> Result<Value, ConfigError> {
    match dialect {
        Dialect::Host => Ok(value),
        Dialect::ClaudeSettings => claude_settings(value, origin),
        Dialect::Codex => codex(value, origin),
    }
}

/// Claude Code's `permissions`: `allow`, `ask`, `deny` as they are; `defaultMode` as what a
/// call no rule matches gets (`default`, `acceptEdits` and `plan` ask, `acceptEdits` also
/// allowing `Edit` and `Write`; `dontAsk` denies; `bypassPermissions` allows);
/// `additionalDirectories` as writable roots of the sandbox (`~/` is `HOME`).
fn claude_settings(value: Value, origin: &str) -> Result<Value, ConfigError> {
    let error = |field: &str, message: &str| ConfigError(format!("{origin}: {field}: {message}"));
    let Value::Object(mut settings) = value else {
        return Err(error("settings", "expected a JSON object"));
    };
    let mut ignored: Vec<String> = Vec::new();
    let permissions = match settings.remove("permissions") {
        None => Map::new(),
        Some(Value::Object(permissions)) => permissions,
        Some(_) => return Err(error("permissions", "expected an object")),
    };
    ignored.extend(settings.keys().filter(|k| *k != "$schema").cloned());
    let mut out = Map::new();
    let mut rules = Map::new();
    let mut roots = Vec::new();
    let mut mode_allows: &[&str] = &[];
    for (key, value) in permissions {
        let field = format!("permissions.{key}");
        match key.as_str() {
            "allow" | "ask" | "deny" => {
                rules.insert(key, json!(string_list(value, &field, origin)?));
            }
            "defaultMode" => {
                let mode = value.as_str().unwrap_or_default();
                let (default, allows) = match mode {
                    "default" | "plan" => ("ask", &[][..]),
                    "acceptEdits" => ("ask", &["Edit", "Write"][..]),
                    "dontAsk" => ("deny", &[][..]),
                    "bypassPermissions" => ("allow", &[][..]),
                    _ => {
                        return Err(error(
                            &field,
                            "expected default, acceptEdits, plan, dontAsk or bypassPermissions",
                        ));
                    }
                };
                rules.insert("default".into(), Value::from(default));
                mode_allows = allows;
            }
            "additionalDirectories" => {
                let dirs = string_list(value, &field, origin)?;
                roots.extend(dirs.iter().map(|dir| home_expanded(dir)));
            }
            _ => ignored.push(field),
        }
    }
    if !mode_allows.is_empty() {
        let allow = rules.entry("allow").or_insert_with(|| json!([]));
        if let Value::Array(allow) = allow {
            allow.extend(mode_allows.iter().map(|rule| Value::from(*rule)));
        }
    }
    if !rules.is_empty() {
        out.insert("permissions".into(), Value::Object(rules));
    }
    if !roots.is_empty() {
        out.insert("sandbox".into(), json!({ "writableRoots": roots }));
    }
    log_ignored(origin, &ignored);
    Ok(Value::Object(out))
}

/// Codex's `[mcp_servers.NAME]` tables; the rest of the file (model, approvals, profiles)
/// is Codex's own.
fn codex(value: Value, origin: &str) -> Result<Value, ConfigError> {
    let error = |field: &str, message: &str| ConfigError(format!("{origin}: {field}: {message}"));
    let Value::Object(mut file) = value else {
        return Err(error("config", "expected a table"));
    };
    let servers = match file.remove("mcp_servers") {
        None => Map::new(),
        Some(Value::Object(servers)) => servers,
        Some(_) => return Err(error("mcp_servers", "expected a table of servers")),
    };
    let mut ignored: Vec<String> = file.keys().cloned().collect();
    let mut out = Map::new();
    for (name, server) in servers {
        let at = format!("mcp_servers.{name}");
        let Value::Object(server) = server else {
            return Err(error(&at, "expected a table"));
        };
        let mut host = Map::new();
        let mut headers = Map::new();
        let mut tools = Map::new();
        for (key, value) in server {
            let field = format!("{at}.{key}");
            let renamed = match key.as_str() {
                "command" | "args" | "env" | "cwd" | "url" | "enabled" => Some(key.as_str()),
                "bearer_token_env_var" => Some("bearerTokenEnv"),
                _ => None,
            };
            match (renamed, key.as_str()) {
                (Some(renamed), _) => {
                    host.insert(renamed.to_owned(), value);
                }
                (None, "http_headers") => match value {
                    Value::Object(given) => headers.extend(given),
                    _ => return Err(error(&field, "expected a table of header values")),
                },
                // A header whose value is an environment variable's: `${VAR}` here.
                (None, "env_http_headers") => match value {
                    Value::Object(given) => {
                        for (header, var) in given {
                            let Some(var) = var.as_str() else {
                                return Err(error(&field, "expected variable names"));
                            };
                            headers.insert(header, Value::from(format!("${{{var}}}")));
                        }
                    }
                    _ => return Err(error(&field, "expected a table of variable names")),
                },
                (None, "enabled_tools") => {
                    tools.insert("allow".into(), json!(string_list(value, &field, origin)?));
                }
                (None, "disabled_tools") => {
                    tools.insert("deny".into(), json!(string_list(value, &field, origin)?));
                }
                (None, "startup_timeout_sec" | "tool_timeout_sec") => {
                    let ms = seconds_as_ms(&value)
                        .ok_or_else(|| error(&field, "expected a positive number of seconds"))?;
                    let target = match key.as_str() {
                        "startup_timeout_sec" => "startupTimeoutMs",
                        _ => "timeoutMs",
                    };
                    host.insert(target.into(), Value::from(ms));
                }
                (None, "startup_timeout_ms") => {
                    host.insert("startupTimeoutMs".into(), value);
                }
                (None, _) => ignored.push(field),
            }
        }
        if !headers.is_empty() {
            host.insert("headers".into(), Value::Object(headers));
        }
        if !tools.is_empty() {
            host.insert("tools".into(), Value::Object(tools));
        }
        out.insert(name, Value::Object(host));
    }
    log_ignored(origin, &ignored);
    Ok(json!({ "mcpServers": out }))
}

/// `value` checked to be an array of strings.
fn string_list(value: Value, field: &str, origin: &str) -> Result<Vec<String>, ConfigError> {
    serde_json::from_value(value)
        .map_err(|_| ConfigError(format!("{origin}: {field}: expected an array of strings")))
}

/// A positive number of seconds (TOML integer or float) in whole milliseconds.
fn seconds_as_ms(value: &Value) -> Option<u64> {
    let seconds = value.as_f64().filter(|s| s.is_finite() && *s > 0.0)?;
    Some(((seconds * 1000.0).ceil() as u64).max(1))
}

/// `~/x` with the user's home directory; anything else as written.
fn home_expanded(dir: &str) -> Value {
    match (dir.strip_prefix("~/"), std::env::var("HOME")) {
        (Some(rest), Ok(home)) => Value::from(format!("{home}/{rest}")),
        _ => Value::from(dir),
    }
}

fn log_ignored(origin: &str, ignored: &[String]) {
    if !ignored.is_empty() {
        tracing::debug!(
            "{origin}: ignored (not used by dsh-tools): {}",
            ignored.join(", ")
        );
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
