//! `sandbox.network`: off, the host's network, or `{ allow, deny }` (only what the policy
//! admits, through the host's proxy), and the syntactic check of a policy's patterns run
//! with the config.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// `sandbox.network`: off (`false`, the default), the host's network (`true`), or only
/// the domains a policy admits, through the host's proxy (`{ allow, deny }`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema, TS)]
#[serde(untagged)]
pub enum NetworkSetting {
    /// `false`: no network; `true`: the host's network, unfiltered.
    Bool(bool),
    /// Only what the policy admits, through the host's proxy.
    Policy(NetworkPolicy),
}

/// `sandbox.network = { allow, deny }`: patterns are domains with optional wildcards and
/// ports (`example.com`, `*.github.com:443`, `api.example.org:8443`) or presets (`@npm`);
/// a connection is admitted when it matches `allow` and not `deny` (deny wins).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields, default)]
pub struct NetworkPolicy {
    /// What may be reached (nothing else is).
    pub allow: Vec<String>,
    /// What may not be reached even when `allow` matches it.
    pub deny: Vec<String>,
}

impl NetworkSetting {
    /// The policy, when this is one.
    pub fn policy(&self) -> Option<&NetworkPolicy> {
        match self {
            NetworkSetting::Policy(policy) => Some(policy),
            NetworkSetting::Bool(_) => None,
        }
    }
}

/// By hand rather than `untagged`, so a wrong value is told what is expected (and an error
/// inside the object keeps its path, `network.allow[1]`).
impl<'de> Deserialize<'de> for NetworkSetting {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Expected;
        impl<'de> serde::de::Visitor<'de> for Expected {
            type Value = NetworkSetting;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a boolean or an object { allow, deny }")
            }
            fn visit_bool<E: serde::de::Error>(self, value: bool) -> Result<Self::Value, E> {
                Ok(NetworkSetting::Bool(value))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<Self::Value, A::Error> {
                let policy = serde::de::value::MapAccessDeserializer::new(map);
                NetworkPolicy::deserialize(policy).map(NetworkSetting::Policy)
            }
        }
        deserializer.deserialize_any(Expected)
    }
}

impl NetworkPolicy {
    /// Checks every pattern, errors naming the entry (`config.sandbox.network.allow[2]:
    /// ...`); `field` is the `network` field's path.
    ///
    /// A syntactic check only (a domain, `*.` wildcards, an optional port, `@preset`); the
    /// proxy's own parser, which also knows the presets, is the one that decides.
    pub fn check(&self, field: &str) -> Result<(), String> {
        for (list, patterns) in [("allow", &self.allow), ("deny", &self.deny)] {
            for (index, pattern) in patterns.iter().enumerate() {
                check_pattern(pattern)
                    .map_err(|why| format!("{field}.{list}[{index}]: \"{pattern}\": {why}"))?;
            }
        }
        Ok(())
    }
}

/// `example.com`, `*.github.com:443`, `api.example.org:8443`, `10.0.0.1:80`,
/// `[::1]:8080`, `@npm`.
fn check_pattern(pattern: &str) -> Result<(), &'static str> {
    if pattern.is_empty() {
        return Err("must not be empty");
    }
    if pattern.contains("://") || pattern.contains('/') {
        return Err("must be a domain with an optional port, not a URL or a path");
    }
    if let Some(preset) = pattern.strip_prefix('@') {
        let word = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
        return match !preset.is_empty() && preset.chars().all(word) {
            true => Ok(()),
            false => Err("a preset is @ and a lowercase name (@npm, @pypi)"),
        };
    }
    let (host, port) = split_port(pattern)?;
    if let Some(port) = port {
        match port.parse::<u16>() {
            Ok(1..) => {}
            _ if port == "*" => {}
            _ => return Err("the port must be a number from 1 to 65535 (or *)"),
        }
    }
    if let Some(address) = host.strip_prefix('[') {
        return match address
            .strip_suffix(']')
            .is_some_and(|inner| inner.parse::<std::net::Ipv6Addr>().is_ok())
        {
            true => Ok(()),
            false => Err("an IPv6 address goes in brackets: [::1]:8080"),
        };
    }
    if host == "*" {
        return Ok(());
    }
    let name = host.strip_prefix("*.").unwrap_or(host);
    let label_char = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    if name.is_empty()
        || name
            .split('.')
            .any(|label| label.is_empty() || !label.chars().all(label_char))
    {
        return Err(
            "must be a domain (letters, digits, - and _ between dots; * only as a \
                    leading label: *.example.com)",
        );
    }
    Ok(())
}

/// `host` and the port after its last `:` (a bracketed IPv6 address keeps its colons).
fn split_port(pattern: &str) -> Result<(&str, Option<&str>), &'static str> {
    if pattern.starts_with('[') {
        return Ok(match pattern.rsplit_once("]:") {
            Some((address, port)) => (&pattern[..=address.len()], Some(port)),
            None => (pattern, None),
        });
    }
    match pattern.split_once(':') {
        None => Ok((pattern, None)),
        Some((host, port)) if !port.contains(':') => Ok((host, Some(port))),
        Some(_) => Err("an IPv6 address goes in brackets: [::1]:8080"),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn policy(allow: &[&str], deny: &[&str]) -> NetworkPolicy {
        NetworkPolicy {
            allow: allow.iter().map(|s| (*s).to_owned()).collect(),
            deny: deny.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    #[test]
    fn domains_wildcards_ports_addresses_and_presets_pass() {
        let good = [
            "example.com",
            "*.github.com:443",
            "api.example.org:8443",
            "localhost",
            "10.0.0.1:80",
            "[::1]:8080",
            "[2001:db8::1]",
            "registry.npmjs.org:*",
            "*",
            "@npm",
            "@pypi",
            "under_score.example",
        ];
        assert_eq!(policy(&good, &good).check("f"), Ok(()));
    }

    #[test]
    fn each_bad_pattern_is_named_by_its_list_and_index() {
        let cases = [
            ("", "must not be empty"),
            ("https://example.com", "not a URL"),
            ("example.com/path", "not a URL"),
            ("example.com:0", "the port must be"),
            ("example.com:70000", "the port must be"),
            ("example.com:", "the port must be"),
            ("a.*.example.com", "must be a domain"),
            ("exa mple.com", "must be a domain"),
            ("example..com", "must be a domain"),
            ("*.", "must be a domain"),
            ("::1", "in brackets"),
            ("[::1", "in brackets"),
            ("@", "a preset is"),
            ("@NPM", "a preset is"),
        ];
        for (pattern, why) in cases {
            let error = policy(&["ok.example"], &["ok.example", pattern])
                .check("config.sandbox.network")
                .unwrap_err();
            let prefix = format!("config.sandbox.network.deny[1]: \"{pattern}\": ");
            assert!(error.starts_with(&prefix), "{error}");
            assert!(error.contains(why), "{pattern}: {error}");
        }
        let error = policy(&["a.example", "b.example", "c d"], &[]).check("x.network");
        assert!(
            error
                .unwrap_err()
                .starts_with("x.network.allow[2]: \"c d\": ")
        );
    }
}
