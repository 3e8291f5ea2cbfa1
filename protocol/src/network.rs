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
