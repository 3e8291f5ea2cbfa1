//! Which hosts the proxy lets a sandboxed command reach: `allow` and `deny` lists of domain
//! patterns (`example.com`, `*.github.com`, `api.example.org:8443`, `10.0.0.7`, `@npm`).
//!
//! A pattern names a host and optionally a port (without one it covers every port). `*.x.com`
//! covers the subdomains of `x.com` at any depth, not `x.com` itself, so a user allowing
//! `*.github.com` does not silently get the apex. An IP literal matches only that address,
//! written any way (`[::1]`, `::1`); IP literals are never matched by a domain pattern, so by
//! default a command connecting to a bare address is refused as not listed. `@name` expands
//! to a [preset](super::presets). Deny wins over allow; a host in neither is refused.
//!
//! Hosts are compared lowercased and without a trailing dot. Names the system resolver would
//! read as an address in a legacy form (`2130706433`, `127.1`, `0x7f.1`) are not domains:
//! [`Host::parse`] rejects them, so they never reach the resolver.

use super::presets;
use std::fmt;
use std::net::{IpAddr, Ipv6Addr};

/// One host a client asked for, normalized: a domain (lowercase, no trailing dot) or an IP.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Host {
    Name(String),
    Ip(IpAddr),
}

impl Host {
    /// A domain or an IP literal (IPv6 with or without brackets); `None` for anything else.
    pub(crate) fn parse(text: &str) -> Option<Host> {
        if let Some(ip) = parse_ip(text) {
            return Some(Host::Ip(ip));
        }
        let name = text.strip_suffix('.').unwrap_or(text).to_ascii_lowercase();
        valid_domain(&name).then_some(Host::Name(name))
    }

    /// `host:port` as a client writes it (`[::1]:443` for IPv6).
    pub(crate) fn authority(&self, port: u16) -> String {
        match self {
            Host::Ip(IpAddr::V6(ip)) => format!("[{ip}]:{port}"),
            _ => format!("{self}:{port}"),
        }
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Name(name) => f.write_str(name),
            Host::Ip(ip) => write!(f, "{ip}"),
        }
    }
}

fn parse_ip(text: &str) -> Option<IpAddr> {
    let inner = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .map(|t| t.parse::<Ipv6Addr>().ok().map(IpAddr::V6));
    match inner {
        Some(v6) => v6,
        None => text.parse::<IpAddr>().ok(),
    }
}

/// Labels of letters, digits, `-` and `_` (seen in real service names), 1 to 63 bytes, no
/// `-` at either end, 253 bytes in all; the last label not all digits (that is an address in
/// a legacy notation, which `getaddrinfo` would accept).
fn valid_domain(name: &str) -> bool {
    if name.is_empty() || name.len() > 253 {
        return false;
    }
    let labels_ok = name.split('.').all(|label| {
        !label.is_empty()
            && label.len() <= 63
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    });
    let last = name.rsplit('.').next().unwrap_or(name);
    let legacy_number = last.bytes().all(|b| b.is_ascii_digit())
        || (last.starts_with("0x") && last[2..].bytes().all(|b| b.is_ascii_hexdigit()));
    labels_ok && !legacy_number
}

/// What the policy says about one host and port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    Allow,
    /// Matched a `deny` pattern, named as the user wrote it (`@npm` for a preset's domain).
    Deny {
        rule: String,
    },
    /// Matched no `allow` pattern.
    NotListed,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum HostPattern {
    Exact(String),
    /// `*.suffix`: strict subdomains of `suffix`.
    Subdomains(String),
    Ip(IpAddr),
}

#[derive(Clone, Debug)]
struct Rule {
    /// As written in the configuration (the preset's `@name` for its domains).
    text: String,
    host: HostPattern,
    port: Option<u16>,
}

impl Rule {
    fn matches(&self, host: &Host, port: u16) -> bool {
        if self.port.is_some_and(|p| p != port) {
            return false;
        }
        match (&self.host, host) {
            (HostPattern::Exact(p), Host::Name(n)) => p == n,
            (HostPattern::Subdomains(suffix), Host::Name(n)) => n
                .strip_suffix(suffix.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
            (HostPattern::Ip(p), Host::Ip(ip)) => p == ip,
            _ => false,
        }
    }
}

/// The `allow` and `deny` lists of one `sandbox.network` setting, parsed.
#[derive(Clone, Debug)]
pub struct EgressPolicy {
    /// The configuration path the lists came from (`sandbox.network`), for messages.
    field: String,
    allow: Vec<Rule>,
    deny: Vec<Rule>,
    /// Every host not denied is allowed (`web_fetch` without a policy of its own).
    any: bool,
}

impl EgressPolicy {
    /// `allow`/`deny` patterns: `example.com`, `*.github.com` (subdomains only, not the
    /// apex), `api.example.org:8443`, `*.x.com:443`, IP literals, presets `@npm`, `@pypi`,
    /// `@rust`, `@go`, `@maven`, `@github`, `@gitlab`, `@bitbucket`. A port-less pattern
    /// allows every port; deny wins over allow; a host matching neither is not listed.
    /// `field` is the configuration path (`sandbox.network`): errors name the entry
    /// (`sandbox.network.allow[2]: "..." is not a domain pattern: ...`) and refusals the list.
    pub fn parse(allow: &[String], deny: &[String], field: &str) -> Result<EgressPolicy, String> {
        let list = |entries: &[String], name: &str| -> Result<Vec<Rule>, String> {
            let mut rules = Vec::new();
            for (i, text) in entries.iter().enumerate() {
                parse_pattern(text, &mut rules).map_err(|why| {
                    format!("{field}.{name}[{i}]: {text:?} is not a domain pattern: {why}")
                })?;
            }
            Ok(rules)
        };
        Ok(EgressPolicy {
            field: field.to_owned(),
            allow: list(allow, "allow")?,
            deny: list(deny, "deny")?,
            any: false,
        })
    }

    /// A policy that lists nothing (every host refused), for a list that did not parse.
    pub fn refusing_all(field: &str) -> EgressPolicy {
        EgressPolicy {
            field: field.to_owned(),
            allow: Vec::new(),
            deny: Vec::new(),
            any: false,
        }
    }

    /// A policy that allows every host (the address checks of the dial still apply).
    pub fn allowing_all(field: &str) -> EgressPolicy {
        EgressPolicy {
            any: true,
            ..EgressPolicy::refusing_all(field)
        }
    }

    /// Deny first, then allow; a host that is not a domain or an IP is never listed.
    pub fn decide(&self, host: &str, port: u16) -> Decision {
        match Host::parse(host) {
            Some(host) => self.decide_host(&host, port),
            None => Decision::NotListed,
        }
    }

    pub(crate) fn decide_host(&self, host: &Host, port: u16) -> Decision {
        if let Some(rule) = self.deny.iter().find(|r| r.matches(host, port)) {
            return Decision::Deny {
                rule: rule.text.clone(),
            };
        }
        if self.any || self.allow.iter().any(|r| r.matches(host, port)) {
            Decision::Allow
        } else {
            Decision::NotListed
        }
    }

    /// The configuration path refusals name (`sandbox.network`).
    pub fn field(&self) -> &str {
        &self.field
    }
}

/// Appends the rules of one pattern (several for a preset) or says what is wrong with it.
fn parse_pattern(text: &str, rules: &mut Vec<Rule>) -> Result<(), String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err("it is empty".into());
    }
    if trimmed != text {
        return Err("it has spaces around it".into());
    }
    if let Some(name) = text.strip_prefix('@') {
        let domains = presets::domains(name).ok_or_else(|| {
            format!(
                "no preset is called @{name} (presets: {})",
                presets::NAMES.map(|n| format!("@{n}")).join(", ")
            )
        })?;
        for domain in domains {
            let mut expanded = Vec::new();
            parse_pattern(domain, &mut expanded)
                .map_err(|why| format!("preset domain {domain:?}: {why}"))?;
            rules.extend(expanded.into_iter().map(|rule| Rule {
                text: text.to_owned(),
                ..rule
            }));
        }
        return Ok(());
    }
    if text.contains("://") {
        return Err(
            "write the host without a scheme (`example.com`, not `https://example.com`)".into(),
        );
    }
    if text.contains('/') {
        return Err("a pattern names a host, not a path".into());
    }
    if text == "*" {
        return Err("`*` alone would allow every host: use `network: true` for that".into());
    }
    let (host, port) = split_port(text)?;
    let host = if let Some(suffix) = host.strip_prefix("*.") {
        match Host::parse(suffix) {
            Some(Host::Name(name)) => HostPattern::Subdomains(name),
            Some(Host::Ip(_)) => return Err("a wildcard covers subdomains, not addresses".into()),
            None => return Err(format!("{suffix:?} is not a domain")),
        }
    } else if host.contains('*') {
        return Err("`*` may only open a pattern, as `*.example.com` (subdomains)".into());
    } else {
        match Host::parse(host) {
            Some(Host::Name(name)) => HostPattern::Exact(name),
            Some(Host::Ip(ip)) => HostPattern::Ip(ip),
            None => return Err(format!("{host:?} is not a domain or an IP address")),
        }
    };
    rules.push(Rule {
        text: text.to_owned(),
        host,
        port,
    });
    Ok(())
}

/// `host`, `host:port`, `[v6]`, `[v6]:port`, or a bare IPv6 address (no port).
fn split_port(text: &str) -> Result<(&str, Option<u16>), String> {
    if text.parse::<Ipv6Addr>().is_ok() {
        return Ok((text, None));
    }
    let split = if text.starts_with('[') {
        match text.find(']') {
            Some(end) if end + 1 == text.len() => None,
            Some(end) if text[end + 1..].starts_with(':') => Some(end + 1),
            _ => return Err("an IPv6 address in brackets is `[addr]` or `[addr]:port`".into()),
        }
    } else {
        text.rfind(':')
    };
    match split {
        None => Ok((text, None)),
        Some(colon) => {
            let port = &text[colon + 1..];
            match port.parse::<u16>() {
                Ok(p) if p != 0 && port.bytes().all(|b| b.is_ascii_digit()) => {
                    Ok((&text[..colon], Some(p)))
                }
                _ => Err(format!("{port:?} is not a port (1 to 65535)")),
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
