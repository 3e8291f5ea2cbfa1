//! `${VAR}` and `${VAR:-default}` in an MCP server's `command`, `args`, `env`, `url` and
//! `headers`, as Claude Code documents them for `.mcp.json`: `${VAR}` is the variable's
//! value; `${VAR:-default}` is its value when it is set (even empty), else `default`
//! (which is taken literally: no nested references). A `$` not followed by `{NAME}` or
//! `{NAME:-...}` is kept as written. An unset variable without a default is an error naming
//! it, so a server never starts with a literal `${TOKEN}` for a secret.

use dsh_tools_protocol::McpServerConfig;

/// `template` with every reference replaced through `env`; `Err(VAR)` names the first
/// unset variable that has no default.
pub fn expand(template: &str, env: &impl Fn(&str) -> Option<String>) -> Result<String, String> {
    substitute(template, |var, default| match (env(var), default) {
        (Some(value), _) => Ok(value),
        (None, Some(default)) => Ok(default.to_owned()),
        (None, None) => Err(var.to_owned()),
    })
}

/// What `template` says by itself: references dropped, defaults kept (a default is text the
/// file holds, so it may be a secret the file holds).
pub fn literal_text(template: &str) -> String {
    substitute(template, |_, default| {
        Ok(default.unwrap_or_default().to_owned())
    })
    .unwrap_or_default()
}

/// `template` with each `${NAME}` / `${NAME:-default}` replaced by `resolve(NAME, default)`.
fn substitute(
    template: &str,
    resolve: impl Fn(&str, Option<&str>) -> Result<String, String>,
) -> Result<String, String> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let inside = &after[..end];
        let (var, default) = match inside.split_once(":-") {
            Some((var, default)) => (var, Some(default)),
            None => (inside, None),
        };
        if is_name(var) {
            out.push_str(&resolve(var, default)?);
        } else {
            out.push_str(&rest[start..start + 2 + end + 1]);
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// `server` with `command`, `args`, `env` and `url` expanded through `env` (`headers` are
/// expanded where they are resolved, beside the token: `mcp::remote`); the error names
/// the field and the unset variable, never a value.
pub fn expand_server(
    server: &McpServerConfig,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<McpServerConfig, String> {
    let unset = |field: String| {
        move |var: String| format!("{field} references the unset environment variable {var}")
    };
    let mut expanded = server.clone();
    if let Some(command) = &server.command {
        expanded.command = Some(expand(command, env).map_err(unset("command".into()))?);
    }
    if let Some(url) = &server.url {
        expanded.url = Some(expand(url, env).map_err(unset("url".into()))?);
    }
    for (index, arg) in server.args.iter().enumerate() {
        expanded.args[index] = expand(arg, env).map_err(unset(format!("args[{index}]")))?;
    }
    for (name, value) in &server.env {
        let value = expand(value, env).map_err(unset(format!("env.{name}")))?;
        expanded.env.insert(name.clone(), value);
    }
    Ok(expanded)
}

/// Whether `text` references a variable (`${NAME}` or `${NAME:-...}`) anywhere.
pub fn references(text: &str) -> bool {
    substitute(text, |_, _| Ok(String::new())).is_ok_and(|stripped| stripped != text)
}

/// A shell-style variable name: ASCII letters, digits and `_`, not empty.
fn is_name(var: &str) -> bool {
    !var.is_empty() && var.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn env(var: &str) -> Option<String> {
        match var {
            "TOKEN" => Some("s3cr3t".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn plain_references_expand_and_unset_ones_are_named() {
        assert_eq!(expand("Bearer ${TOKEN}", &env).unwrap(), "Bearer s3cr3t");
        assert_eq!(expand("${TOKEN}-${TOKEN}", &env).unwrap(), "s3cr3t-s3cr3t");
        assert_eq!(expand("a${MISSING}b", &env), Err("MISSING".to_owned()));
        assert_eq!(
            expand("$TOKEN ${} ${a-b} ${x", &env).unwrap(),
            "$TOKEN ${} ${a-b} ${x"
        );
    }

    #[test]
    fn defaults_apply_only_when_the_variable_is_unset() {
        assert_eq!(
            expand("${MISSING:-https://example.com}/mcp", &env).unwrap(),
            "https://example.com/mcp"
        );
        assert_eq!(expand("${TOKEN:-fallback}", &env).unwrap(), "s3cr3t");
        assert_eq!(expand("[${EMPTY:-fallback}]", &env).unwrap(), "[]");
        assert_eq!(expand("[${MISSING:-}]", &env).unwrap(), "[]");
        assert_eq!(expand("${MISSING:-a:-b}", &env).unwrap(), "a:-b");
    }

    #[test]
    fn a_servers_command_args_env_and_url_expand_and_errors_name_the_field() {
        let server: McpServerConfig = serde_json::from_value(serde_json::json!({
            "command": "${MISSING:-npx}",
            "args": ["-y", "pkg@${MISSING:-1.2}", "--token=${TOKEN}"],
            "env": { "API_KEY": "${TOKEN}", "PLAIN": "$TOKEN" }
        }))
        .unwrap();
        let expanded = expand_server(&server, &env).unwrap();
        assert_eq!(expanded.command.as_deref(), Some("npx"));
        assert_eq!(expanded.args, ["-y", "pkg@1.2", "--token=s3cr3t"]);
        assert_eq!(expanded.env["API_KEY"], "s3cr3t");
        assert_eq!(expanded.env["PLAIN"], "$TOKEN");
        let mut broken = server.clone();
        broken.env.insert("B".into(), "${GONE}".into());
        assert_eq!(
            expand_server(&broken, &env).err().as_deref(),
            Some("env.B references the unset environment variable GONE")
        );
        let remote: McpServerConfig =
            serde_json::from_value(serde_json::json!({ "url": "${HOST:-http://127.0.0.1:9}/mcp" }))
                .unwrap();
        assert_eq!(
            expand_server(&remote, &env).unwrap().url.as_deref(),
            Some("http://127.0.0.1:9/mcp")
        );
    }

    #[test]
    fn references_and_literal_text_are_read_without_the_environment() {
        assert!(references("Bearer ${TOKEN}"));
        assert!(references("${X:-d}"));
        assert!(!references("$X ${} plain"));
        assert_eq!(literal_text("Bearer ${TOKEN}"), "Bearer ");
        assert_eq!(literal_text("${TOKEN:-sk-in-the-file}"), "sk-in-the-file");
    }
}
