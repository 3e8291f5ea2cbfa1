//! Configuration layers: `--builtins`, then each `--config` file in the order given, merged
//! with later layers winning key by key. Each value keeps the layer it came from, for
//! errors (`config.x: ... (from FILE)`), `permissions/explain` and `dsh-tools config show`.

use super::dialect::{recognize, translate};
use super::{ConfigError, merge, parse, read_file};
use dsh_tools_protocol::HostConfig;
use serde_json::Value;
use std::path::Path;

/// One layer: where it was written and what it says (translated to this host's keys).
#[derive(Clone, Debug)]
pub struct Layer {
    /// A file's path, `--builtins`, ...
    pub origin: String,
    /// Its configuration.
    pub value: Value,
}

/// The layers of a configuration, lowest first.
#[derive(Clone, Debug, Default)]
pub struct Layers {
    layers: Vec<Layer>,
}

impl Layers {
    /// Adds a layer over the others.
    pub fn push(&mut self, origin: impl Into<String>, value: Value) {
        self.layers.push(Layer {
            origin: origin.into(),
            value,
        });
    }

    /// Reads `path` (this host's configuration, Claude Code's `.mcp.json` or
    /// `settings.json`, or Codex's `config.toml`) and adds it over the others.
    pub fn push_file(&mut self, path: &Path) -> Result<(), ConfigError> {
        let raw = read_file(path)?;
        let origin = path.display().to_string();
        let value = translate(recognize(path, &raw), raw, &origin)?;
        self.push(origin, value);
        Ok(())
    }

    /// The layers, lowest first.
    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// Every layer merged, later over earlier.
    pub fn merged(&self) -> Value {
        let mut merged = Value::Object(Default::default());
        for layer in &self.layers {
            merge(&mut merged, layer.value.clone());
        }
        merged
    }

    /// Parses and validates the merged configuration; an error names the layer that set
    /// the offending field, and each permission list keeps its layer as origin.
    pub fn parse(&self) -> Result<HostConfig, ConfigError> {
        let mut config = parse(self.merged()).map_err(|error| self.attributed(error))?;
        let named: Vec<(&str, &Value)> = self
            .layers
            .iter()
            .map(|layer| (layer.origin.as_str(), &layer.value))
            .collect();
        config.permissions.origins = permission_origins(&config.permissions.origins, &named);
        Ok(config)
    }

    /// The origin of the value at `field` (`mcpServers.x.url`, `permissions.allow[2]`): the
    /// last layer that set it, a part of it or a value containing it.
    pub fn origin_of(&self, field: &str) -> Option<&str> {
        self.layers.iter().rev().find_map(|layer| {
            let mut found = Vec::new();
            leaves(&layer.value, String::new(), &mut found);
            found
                .iter()
                .any(|(leaf, _)| related(leaf, field))
                .then_some(layer.origin.as_str())
        })
    }

    /// `error` with ` (from ORIGIN)` when its field (`config.<field>: ...`) came from a
    /// layer and more than one layer was given.
    fn attributed(&self, error: ConfigError) -> ConfigError {
        let field = error
            .0
            .strip_prefix("config.")
            .and_then(|rest| rest.split_once(": "))
            .map(|(field, _)| field);
        match field.and_then(|field| self.origin_of(field)) {
            Some(origin) if self.layers.len() > 1 => {
                ConfigError(format!("{} (from {origin})", error.0))
            }
            _ => error,
        }
    }
}

/// Names where each permission list of a merged configuration was written: the last of
/// `layers` (origin, the layer's value) that sets `permissions.<list>`, over `base` (a list
/// given in a later layer, or in `initialize.config`, replaces an earlier one).
pub fn permission_origins(
    base: &dsh_tools_protocol::RuleOrigins,
    layers: &[(&str, &Value)],
) -> dsh_tools_protocol::RuleOrigins {
    let mut origins = base.clone();
    for (origin, value) in layers {
        let sets = |list: &str| value.pointer(&format!("/permissions/{list}")).is_some();
        for (list, slot) in [
            ("allow", &mut origins.allow),
            ("ask", &mut origins.ask),
            ("deny", &mut origins.deny),
        ] {
            if sets(list) {
                *slot = Some((*origin).to_owned());
            }
        }
    }
    origins
}

/// Whether `field` is `leaf`, inside it, or contains it.
fn related(leaf: &str, field: &str) -> bool {
    let within = |outer: &str, inner: &str| {
        inner
            .strip_prefix(outer)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
    };
    within(leaf, field) || within(field, leaf)
}

/// `value`'s leaves (scalars, arrays and empty objects: what a later layer replaces whole)
/// with their dotted paths.
pub(super) fn leaves<'v>(value: &'v Value, path: String, out: &mut Vec<(String, &'v Value)>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, child) in map {
                let child_path = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                leaves(child, child_path, out);
            }
        }
        _ => out.push((path, value)),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn layers() -> Layers {
        let mut layers = Layers::default();
        layers.push(
            "a.json",
            json!({ "tools": { "mode": "code" }, "permissions": { "allow": ["Read"] },
                    "mcpServers": { "s": { "command": "one", "args": ["x"] } } }),
        );
        layers.push(
            "b.json",
            json!({ "tools": { "maxParallelSubCalls": 3 }, "mcpServers": { "s": { "command": "two" } } }),
        );
        layers
    }

    #[test]
    fn later_layers_win_key_by_key_and_each_value_keeps_its_origin() {
        let layers = layers();
        assert_eq!(
            layers.merged(),
            json!({ "tools": { "mode": "code", "maxParallelSubCalls": 3 },
                    "permissions": { "allow": ["Read"] },
                    "mcpServers": { "s": { "command": "two", "args": ["x"] } } })
        );
        assert_eq!(layers.origin_of("mcpServers.s.command"), Some("b.json"));
        assert_eq!(layers.origin_of("mcpServers.s.args[0]"), Some("a.json"));
        assert_eq!(layers.origin_of("mcpServers.s"), Some("b.json"));
        assert_eq!(layers.origin_of("tools.mode"), Some("a.json"));
        assert_eq!(layers.origin_of("tools.modes"), None);
        let config = layers.parse().unwrap();
        assert_eq!(config.tools.max_parallel_sub_calls, 3);
        assert_eq!(config.permissions.origins.allow.as_deref(), Some("a.json"));
    }

    #[test]
    fn errors_name_the_layer_that_set_the_field() {
        let mut layers = layers();
        layers.push("c.json", json!({ "codeRuntime": { "computeMs": 0 } }));
        assert_eq!(
            layers.parse().err().unwrap().0,
            "config.codeRuntime.computeMs: must be positive (from c.json)"
        );
        let mut one = Layers::default();
        one.push("only.json", json!({ "codeRuntime": { "computeMs": 0 } }));
        assert_eq!(
            one.parse().err().unwrap().0,
            "config.codeRuntime.computeMs: must be positive"
        );
    }
}
