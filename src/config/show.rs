//! `dsh-tools config show`: the merged configuration, one value a line with the layer it
//! came from, secrets masked: every MCP server `env` value, header values named like a
//! credential (`Authorization`, `X-Api-Key`, `*token*`, `*secret*`, ...) and any other
//! value whose key names a token, secret or password. A value that only references
//! variables (`Bearer ${GITHUB_TOKEN}`) is shown as written: it holds no secret itself.

use super::expand::{literal_text, references};
use super::layers::{Layers, leaves};
use serde_json::Value;

/// Words that make a header or key a credential (compared lowercase).
const SECRET_WORDS: [&str; 7] = [
    "authorization",
    "key",
    "token",
    "secret",
    "password",
    "cookie",
    "credential",
];

/// What a masked value reads.
const MASK: &str = "\"••••\"";

/// The merged configuration of `layers`, one `path = value  # origin` line per value.
pub fn show(layers: &Layers) -> String {
    let merged = layers.merged();
    let mut values = Vec::new();
    leaves(&merged, String::new(), &mut values);
    let mut out = String::new();
    for (path, value) in values.into_iter().filter(|(path, _)| !path.is_empty()) {
        let shown = if is_secret(&path) && !only_references(value) {
            MASK.to_owned()
        } else {
            crate::json::render_compact(value)
        };
        let origin = layers.origin_of(&path).unwrap_or("?");
        out.push_str(&format!("{path} = {shown}  # {origin}\n"));
    }
    if out.is_empty() {
        out.push_str("# no configuration given (every setting has its default)\n");
    }
    out
}

/// Whether the value at `path` may be a secret.
fn is_secret(path: &str) -> bool {
    let keys: Vec<&str> = path.split('.').collect();
    let last = keys.last().copied().unwrap_or_default().to_lowercase();
    let parent = keys.iter().rev().nth(1).copied().unwrap_or_default();
    let credential = SECRET_WORDS.iter().any(|word| last.contains(word));
    match parent {
        "env" => true,
        "headers" => credential,
        // `bearerTokenEnv` and the like name a variable, not its value.
        _ => credential && !last.ends_with("env"),
    }
}

/// Whether `value` is a string that references variables and whose literal text
/// (references removed, defaults kept) is at most an authorization scheme.
fn only_references(value: &Value) -> bool {
    let Some(text) = value.as_str() else {
        return false;
    };
    let literal = literal_text(text);
    references(text) && matches!(literal.trim(), "" | "Bearer" | "Basic" | "Token")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_show_their_origin_and_secrets_are_masked() {
        let mut layers = Layers::default();
        layers.push(
            ".mcp.json",
            json!({ "mcpServers": { "gh": {
                "type": "http",
                "url": "https://api.example.com/mcp",
                "headers": { "Authorization": "Bearer ghp_literal", "X-Api-Key": "${KEY}", "X-Team": "core" }
            }, "db": { "command": "db-mcp", "env": { "DB_URL": "postgres://u:p@h/db" } } } }),
        );
        layers.push(
            "settings.json",
            json!({ "permissions": { "allow": ["Read"] }, "mcpServers": { "gh": { "bearerTokenEnv": "GH_TOKEN" } } }),
        );
        assert_eq!(
            show(&layers),
            "mcpServers.gh.type = \"http\"  # .mcp.json\n\
             mcpServers.gh.url = \"https://api.example.com/mcp\"  # .mcp.json\n\
             mcpServers.gh.headers.Authorization = \"••••\"  # .mcp.json\n\
             mcpServers.gh.headers.X-Api-Key = \"${KEY}\"  # .mcp.json\n\
             mcpServers.gh.headers.X-Team = \"core\"  # .mcp.json\n\
             mcpServers.gh.bearerTokenEnv = \"GH_TOKEN\"  # settings.json\n\
             mcpServers.db.command = \"db-mcp\"  # .mcp.json\n\
             mcpServers.db.env.DB_URL = \"••••\"  # .mcp.json\n\
             permissions.allow = [\"Read\"]  # settings.json\n"
        );
    }
}
