//! What a client is told when the proxy will not connect it: a refusal names the host, the
//! port and the rule, in words a model can act on (`network access to evil.example:443 was
//! blocked by the sandbox (not in sandbox.network.allow)`), and the proxy keeps the last few
//! for the `bash` result and metrics. HTTP clients get `403 Forbidden` with that sentence as
//! the body and `X-Dsh-Tools-Blocked: host:port`; SOCKS5 clients get reply 0x02 (connection
//! not allowed by ruleset). Failures that are not the sandbox's doing (a name that does not
//! resolve, a refused connect) are `502 Bad Gateway` and are not counted as refusals.

use super::policy::Host;
use std::collections::VecDeque;

/// Something the proxy refused (for the bash result and metrics).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blocked {
    /// The host as the client asked for it, normalized (an IPv6 address without brackets).
    pub host: String,
    pub port: u16,
    /// The rule, as the message's parenthesis: `not in sandbox.network.allow`,
    /// `denied by sandbox.network.deny "evil.example"`,
    /// `evil.example resolves to a loopback address 127.0.0.1`.
    pub why: String,
}

impl Blocked {
    pub(crate) fn new(host: &Host, port: u16, why: String) -> Blocked {
        Blocked {
            host: host.to_string(),
            port,
            why,
        }
    }

    /// `evil.example:443` (`[::1]:443` for IPv6).
    pub fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// `network access to evil.example:443 was blocked by the sandbox (not in
    /// sandbox.network.allow)`: the 403 body and the line for a `bash` result.
    pub fn message(&self) -> String {
        format!(
            "network access to {} was blocked by the sandbox ({})",
            self.authority(),
            self.why
        )
    }
}

/// How many refusals the proxy remembers; older ones are only counted.
pub const KEPT: usize = 256;

/// The refusals so far: a count that only grows, and the last [`KEPT`] with their number.
#[derive(Debug, Default)]
pub(crate) struct Log {
    count: u64,
    kept: VecDeque<(u64, Blocked)>,
}

impl Log {
    pub(crate) fn push(&mut self, blocked: Blocked) {
        self.count += 1;
        if self.kept.len() == KEPT {
            self.kept.pop_front();
        }
        self.kept.push_back((self.count, blocked));
    }

    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    /// The kept refusals numbered after `mark` (a past [`Log::count`]), oldest first.
    pub(crate) fn since(&self, mark: u64) -> Vec<Blocked> {
        self.kept
            .iter()
            .filter(|(n, _)| *n > mark)
            .map(|(_, b)| b.clone())
            .collect()
    }
}

/// The whole `403 Forbidden` response for an HTTP or CONNECT client.
pub(crate) fn forbidden(blocked: &Blocked) -> Vec<u8> {
    let extra = format!("X-Dsh-Tools-Blocked: {}\r\n", blocked.authority());
    response(403, "Forbidden", &extra, &blocked.message())
}

/// A complete response that closes the connection, with `body` and a newline as text.
pub(crate) fn response(status: u16, reason: &str, extra_headers: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n{extra_headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}\n",
        body.len() + 1
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocked(n: u16) -> Blocked {
        Blocked {
            host: "evil.example".into(),
            port: n,
            why: "not in sandbox.network.allow".into(),
        }
    }

    #[test]
    fn the_message_names_host_port_and_rule() {
        assert_eq!(
            blocked(443).message(),
            "network access to evil.example:443 was blocked by the sandbox (not in sandbox.network.allow)"
        );
        let v6 = Blocked {
            host: "::1".into(),
            ..blocked(80)
        };
        assert_eq!(v6.authority(), "[::1]:80");
        let text = String::from_utf8(forbidden(&blocked(443))).unwrap_or_default();
        assert!(text.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{text}");
        assert!(
            text.contains("\r\nX-Dsh-Tools-Blocked: evil.example:443\r\n"),
            "{text}"
        );
        assert!(text.ends_with("\r\n\r\nnetwork access to evil.example:443 was blocked by the sandbox (not in sandbox.network.allow)\n"), "{text}");
    }

    #[test]
    fn the_log_counts_everything_and_keeps_the_last_ones() {
        let mut log = Log::default();
        log.push(blocked(1));
        let mark = log.count();
        assert_eq!(mark, 1);
        assert_eq!(log.since(mark), vec![]);
        assert_eq!(log.since(0), vec![blocked(1)]);
        for n in 2..=300 {
            log.push(blocked(n));
        }
        assert_eq!(log.count(), 300);
        let since = log.since(mark);
        assert_eq!(since.len(), KEPT);
        assert_eq!(since.first(), Some(&blocked(300 - KEPT as u16 + 1)));
        assert_eq!(log.since(298), vec![blocked(299), blocked(300)]);
    }
}
