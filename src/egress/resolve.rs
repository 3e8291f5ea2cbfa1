//! Where an allowed host is: the proxy resolves names itself (a sandboxed child has no
//! resolver) and refuses addresses that would reach the host machine or its cloud rather
//! than the internet: loopback, link-local (169.254/16, fe80::/10), unspecified (0.0.0.0/8,
//! `::`, which Linux routes to the host itself), multicast, broadcast, and the metadata
//! addresses 169.254.169.254 and fd00:ec2::254. IPv4-mapped IPv6 addresses are judged as
//! their IPv4 address. The proxy connects to the very address it checked, so a name cannot
//! resolve one way for the check and another for the connect.
//!
//! `DSH_TOOLS_PROXY_HOSTS="name=ip[:port],..."` is **for tests only**: it maps names to an
//! address (and, with a port, replaces the requested port) so offline tests reach servers
//! on 127.0.0.1. A mapped name is still checked against the policy (the mapping adds no
//! permission) and is exempt from the address refusal above (that is how tests reach the
//! loopback); a name the system resolver maps to loopback, `localhost` included, is not.

use super::policy::Host;
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

/// The environment variable of the test mapping.
pub const HOSTS_VAR: &str = "DSH_TOOLS_PROXY_HOSTS";

/// How long a name lookup may take before the client is told it failed.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(30);

/// Names mapped for tests to an address and optionally a port.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TestHosts(HashMap<String, (IpAddr, Option<u16>)>);

impl TestHosts {
    /// `name=ip[:port],...` (IPv6 as `[addr]` or `[addr]:port`); spaces around entries and
    /// empty entries are ignored; an entry that is not of that form is an error naming it.
    pub fn parse(spec: &str) -> Result<TestHosts, String> {
        let mut map = HashMap::new();
        for entry in spec.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let bad = |why: &str| format!("{HOSTS_VAR}: {entry:?} is not name=ip[:port]: {why}");
            let (name, target) = entry.split_once('=').ok_or_else(|| bad("no `=`"))?;
            let name = match Host::parse(name.trim()) {
                Some(Host::Name(name)) => name,
                _ => return Err(bad("the name is not a domain")),
            };
            let target = target.trim();
            let parsed = if let Ok(ip) = target.parse::<IpAddr>() {
                (ip, None)
            } else if let Ok(sa) = target.parse::<SocketAddr>() {
                (sa.ip(), Some(sa.port()))
            } else if let Some(v6) = target.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
                let ip = v6
                    .parse::<Ipv6Addr>()
                    .map_err(|_| bad("not an IPv6 address"))?;
                (IpAddr::V6(ip), None)
            } else {
                return Err(bad("not an IP address with an optional port"));
            };
            map.insert(name, parsed);
        }
        Ok(TestHosts(map))
    }

    /// The mapping from the environment, or none (with a warning) if it is malformed.
    pub fn from_env() -> TestHosts {
        let Ok(spec) = std::env::var(HOSTS_VAR) else {
            return TestHosts::default();
        };
        TestHosts::parse(&spec).unwrap_or_else(|e| {
            tracing::warn!("{e}; the mapping is ignored");
            TestHosts::default()
        })
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The addresses to try for one host, and whether they are exempt from the address check.
pub(crate) struct Resolved {
    pub addrs: Vec<SocketAddr>,
    pub mapped: bool,
}

/// Resolves `host` for `port`: the test mapping first, an IP literal as itself, else the
/// system resolver. `Err` says why the name has no address.
pub(crate) async fn resolve(hosts: &TestHosts, host: &Host, port: u16) -> Result<Resolved, String> {
    let name = match host {
        Host::Ip(ip) => {
            return Ok(Resolved {
                addrs: vec![SocketAddr::new(*ip, port)],
                mapped: false,
            });
        }
        Host::Name(name) => name,
    };
    if let Some((ip, mapped_port)) = hosts.0.get(name) {
        return Ok(Resolved {
            addrs: vec![SocketAddr::new(*ip, mapped_port.unwrap_or(port))],
            mapped: true,
        });
    }
    let lookup = tokio::net::lookup_host((name.as_str(), port));
    match tokio::time::timeout(RESOLVE_TIMEOUT, lookup).await {
        Ok(Ok(addrs)) => {
            let addrs: Vec<SocketAddr> = addrs.collect();
            if addrs.is_empty() {
                Err(format!("{name} has no address"))
            } else {
                Ok(Resolved {
                    addrs,
                    mapped: false,
                })
            }
        }
        Ok(Err(e)) => Err(format!("{name} could not be resolved: {e}")),
        Err(_) => Err(format!(
            "{name} could not be resolved in {}s",
            RESOLVE_TIMEOUT.as_secs()
        )),
    }
}

/// Why the proxy will not connect to `ip` for a sandboxed command, as `a loopback address`;
/// `None` for an address on a network (public or private).
pub fn refused_address(ip: IpAddr) -> Option<&'static str> {
    let ip = match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        },
        v4 => v4,
    };
    match ip {
        IpAddr::V4(v4) => {
            let [a, ..] = v4.octets();
            if v4 == Ipv4Addr::new(169, 254, 169, 254) {
                Some("the cloud metadata address")
            } else if v4.is_loopback() {
                Some("a loopback address")
            } else if v4.is_link_local() {
                Some("a link-local address")
            } else if a == 0 {
                Some("an unspecified address")
            } else if v4.is_multicast() {
                Some("a multicast address")
            } else if v4.is_broadcast() {
                Some("the broadcast address")
            } else {
                None
            }
        }
        IpAddr::V6(v6) => {
            if v6 == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
                Some("the cloud metadata address")
            } else if v6.is_loopback() {
                Some("a loopback address")
            } else if v6.is_unicast_link_local() {
                Some("a link-local address")
            } else if v6.is_unspecified() {
                Some("an unspecified address")
            } else if v6.is_multicast() {
                Some("a multicast address")
            } else {
                None
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn host_machine_and_cloud_addresses_are_refused() {
        for (addr, why) in [
            ("127.0.0.1", "a loopback address"),
            ("127.8.9.10", "a loopback address"),
            ("::1", "a loopback address"),
            ("::ffff:127.0.0.1", "a loopback address"),
            ("169.254.169.254", "the cloud metadata address"),
            ("fd00:ec2::254", "the cloud metadata address"),
            ("169.254.1.1", "a link-local address"),
            ("fe80::1", "a link-local address"),
            ("0.0.0.0", "an unspecified address"),
            ("0.1.2.3", "an unspecified address"),
            ("::", "an unspecified address"),
            ("224.0.0.1", "a multicast address"),
            ("ff02::1", "a multicast address"),
            ("255.255.255.255", "the broadcast address"),
        ] {
            assert_eq!(refused_address(ip(addr)), Some(why), "{addr}");
        }
        for addr in [
            "93.184.216.34",
            "10.0.0.7",
            "192.168.1.1",
            "2606:4700::1111",
            "fd00::1",
        ] {
            assert_eq!(refused_address(ip(addr)), None, "{addr}");
        }
    }

    #[test]
    fn the_test_mapping_parses_names_addresses_and_ports() {
        let hosts =
            TestHosts::parse(" a.test=127.0.0.1:8080, B.test.=::1 ,,c.test=[::1]:9,d.test=[::2]")
                .unwrap();
        assert_eq!(hosts.0.get("a.test"), Some(&(ip("127.0.0.1"), Some(8080))));
        assert_eq!(hosts.0.get("b.test"), Some(&(ip("::1"), None)));
        assert_eq!(hosts.0.get("c.test"), Some(&(ip("::1"), Some(9))));
        assert_eq!(hosts.0.get("d.test"), Some(&(ip("::2"), None)));
        assert!(TestHosts::parse("").unwrap().is_empty());
        for bad in [
            "a.test",
            "a.test=nope",
            "a.test=1.2.3.4:x",
            "127.0.0.1=1.2.3.4",
            "=1.2.3.4",
        ] {
            let e = TestHosts::parse(bad).unwrap_err();
            assert!(e.starts_with("DSH_TOOLS_PROXY_HOSTS: "), "{e}");
        }
    }

    #[tokio::test]
    async fn a_mapped_name_resolves_to_its_address_and_port() {
        let hosts = TestHosts::parse("a.test=127.0.0.1:8080,b.test=127.0.0.2").unwrap();
        let r = resolve(&hosts, &Host::Name("a.test".into()), 443)
            .await
            .unwrap();
        assert_eq!(
            (r.addrs, r.mapped),
            (vec!["127.0.0.1:8080".parse().unwrap()], true)
        );
        let r = resolve(&hosts, &Host::Name("b.test".into()), 443)
            .await
            .unwrap();
        assert_eq!(r.addrs, vec!["127.0.0.2:443".parse().unwrap()]);
        let r = resolve(&hosts, &Host::Ip(ip("10.1.2.3")), 80)
            .await
            .unwrap();
        assert_eq!(
            (r.addrs, r.mapped),
            (vec!["10.1.2.3:80".parse().unwrap()], false)
        );
    }
}
