//! `permissions.persistTo`: a settings file in Claude Code's shape
//! (`{ "permissions": { "allow": [...], "ask": [...], "deny": [...] } }`, every other key
//! kept as it is) whose rules a host loads, and where an `allowed-always` answer adds its
//! rule. Writes replace the file in one step (a fresh file beside it, renamed over it), so a
//! reader or a crash sees the old rules or the new, never a torn file.

use dsh_tools_protocol::PermissionsConfig;
use serde_json::{Map, Value};
use std::path::Path;

/// The permission rules the file holds (none when it does not exist yet).
pub fn read_rules(path: &Path) -> Result<PermissionsConfig, String> {
    let Some(settings) = read(path)? else {
        return Ok(PermissionsConfig::default());
    };
    let list = |name: &str| -> Result<Vec<String>, String> {
        match settings.get("permissions").and_then(|p| p.get(name)) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| {
                    item.as_str().map(str::to_owned).ok_or_else(|| {
                        format!("{}: permissions.{name} holds a non-string", path.display())
                    })
                })
                .collect(),
            Some(_) => Err(format!(
                "{}: permissions.{name} is not a list",
                path.display()
            )),
        }
    };
    Ok(PermissionsConfig {
        allow: list("allow")?,
        ask: list("ask")?,
        deny: list("deny")?,
        ..PermissionsConfig::default()
    })
}

/// Adds `rule` to the file's `permissions.allow` (creating the file and its directory);
/// a rule already there is not added twice.
pub fn add_allow(path: &Path, rule: &str) -> Result<(), String> {
    edit_allow(path, |allow| {
        if !allow.iter().any(|r| r.as_str() == Some(rule)) {
            allow.push(Value::String(rule.to_owned()));
        }
    })
}

/// Makes an empty settings file (and its directory).
pub fn create_empty(path: &Path) -> Result<(), String> {
    edit_allow(path, |_| {})
}

/// Removes `rule` from the file's `permissions.allow`.
pub fn remove_allow(path: &Path, rule: &str) -> Result<(), String> {
    edit_allow(path, |allow| allow.retain(|r| r.as_str() != Some(rule)))
}

fn edit_allow(path: &Path, edit: impl FnOnce(&mut Vec<Value>)) -> Result<(), String> {
    let mut settings = read(path)?.unwrap_or_else(|| Value::Object(Map::new()));
    let Value::Object(root) = &mut settings else {
        return Err(format!("{}: not a JSON object", path.display()));
    };
    let permissions = root
        .entry("permissions")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(permissions) = permissions else {
        return Err(format!("{}: permissions is not an object", path.display()));
    };
    let allow = permissions
        .entry("allow")
        .or_insert_with(|| Value::Array(Vec::new()));
    let Value::Array(allow) = allow else {
        return Err(format!(
            "{}: permissions.allow is not a list",
            path.display()
        ));
    };
    edit(allow);
    let mut text = serde_json::to_string_pretty(&settings).map_err(|e| e.to_string())?;
    text.push('\n');
    replace(path, &text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn read(path: &Path) -> Result<Option<Value>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| format!("{}: invalid JSON: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// Writes `text` to a fresh file beside `path`, syncs it and renames it over `path`.
fn replace(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut fresh = path.as_os_str().to_owned();
    fresh.push(format!(".dsh-tools-{}.tmp", std::process::id()));
    let fresh = std::path::PathBuf::from(fresh);
    let written = (|| {
        let mut file = std::fs::File::create(&fresh)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&fresh, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&fresh);
    }
    written
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn rules_are_added_once_removed_and_other_keys_kept() {
        let dir = std::env::temp_dir().join(format!("dsh-settings-test-{}", std::process::id()));
        let path = dir.join("nested/settings.json");
        assert_eq!(read_rules(&path).unwrap(), PermissionsConfig::default());
        add_allow(&path, "Bash(npm test:*)").unwrap();
        add_allow(&path, "Bash(npm test:*)").unwrap();
        let mut settings: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        settings["$schema"] = Value::String("https://example.com/s.json".into());
        settings["permissions"]["deny"] = serde_json::json!(["Bash(rm:*)"]);
        std::fs::write(&path, settings.to_string()).unwrap();
        add_allow(&path, "Read").unwrap();
        let rules = read_rules(&path).unwrap();
        assert_eq!(rules.allow, ["Bash(npm test:*)", "Read"]);
        assert_eq!(rules.deny, ["Bash(rm:*)"]);
        remove_allow(&path, "Bash(npm test:*)").unwrap();
        assert_eq!(read_rules(&path).unwrap().allow, ["Read"]);
        let kept: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(kept["$schema"], "https://example.com/s.json");
        std::fs::write(&path, "{\"permissions\": {\"allow\": \"Read\"}}").unwrap();
        assert!(
            read_rules(&path)
                .unwrap_err()
                .contains("permissions.allow is not a list")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
