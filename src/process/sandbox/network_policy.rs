//! `sandbox.network = { allow, deny }` on the sandbox's side: the port of the proxy's
//! listener and the environment that points a child's tools at it (on the scope's loopback,
//! see [`super::proxy_listener`]). The patterns are checked with the config
//! (`NetworkPolicy::check`).

/// The port the proxy listener takes on a scope's loopback (the usual proxy port; the
/// namespace is fresh, so it is free unless something there took it first).
pub const PROXY_PORT: u16 = 3128;

/// What a child whose only way out is the proxy on `127.0.0.1:port` gets in its environment:
/// the variables most clients read (`curl`, `wget`, Python's `urllib`/`requests`/`pip`, Go,
/// Rust's `reqwest`, git over HTTP), in both cases as tools disagree on which they read, and
/// the settings of the tools that read neither:
/// - `ALL_PROXY` is `socks5h://` (names resolved by the proxy: the child has no resolver);
///   curl uses it where no scheme-specific variable applies, git's SSH-less clients too;
/// - `NO_PROXY` keeps the scope's own loopback servers direct;
/// - npm reads only its own config (`npm_config_proxy`, `npm_config_https_proxy`,
///   `npm_config_noproxy`); Node's own `fetch` and `http` read the standard variables only
///   with `NODE_USE_ENV_PROXY=1` (Node 24 and later; older ones ignore it);
/// - pip reads `PIP_PROXY` (besides the standard ones, which it honours too);
/// - cargo reads `CARGO_HTTP_PROXY` (`http.proxy`), not `HTTPS_PROXY`;
/// - git reads `http_proxy`/`https_proxy` through libcurl, but a user's `http.proxy` in
///   `~/.gitconfig` would win: `GIT_CONFIG_COUNT`/`KEY_0`/`VALUE_0` set `http.proxy` at the
///   highest precedence (the command line's), so git over HTTP(S) always takes the proxy.
pub fn proxy_environment(port: u16) -> Vec<(&'static str, String)> {
    let http = format!("http://127.0.0.1:{port}");
    let socks = format!("socks5h://127.0.0.1:{port}");
    let direct = "localhost,127.0.0.1,::1".to_owned();
    let mut environment = Vec::new();
    for (upper, lower, value) in [
        ("HTTP_PROXY", "http_proxy", &http),
        ("HTTPS_PROXY", "https_proxy", &http),
        ("ALL_PROXY", "all_proxy", &socks),
        ("NO_PROXY", "no_proxy", &direct),
    ] {
        environment.push((upper, value.clone()));
        environment.push((lower, value.clone()));
    }
    environment.extend([
        ("npm_config_proxy", http.clone()),
        ("npm_config_https_proxy", http.clone()),
        ("npm_config_noproxy", direct),
        ("NODE_USE_ENV_PROXY", "1".to_owned()),
        ("PIP_PROXY", http.clone()),
        ("CARGO_HTTP_PROXY", http.clone()),
        ("GIT_CONFIG_COUNT", "1".to_owned()),
        ("GIT_CONFIG_KEY_0", "http.proxy".to_owned()),
        ("GIT_CONFIG_VALUE_0", http),
    ]);
    environment
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_points_every_client_at_the_proxy_and_keeps_loopback_direct() {
        let environment = proxy_environment(3128);
        let value = |name: &str| {
            environment
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.as_str())
        };
        for name in ["HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"] {
            assert_eq!(value(name), Some("http://127.0.0.1:3128"), "{name}");
        }
        for name in ["ALL_PROXY", "all_proxy"] {
            assert_eq!(value(name), Some("socks5h://127.0.0.1:3128"), "{name}");
        }
        for name in ["NO_PROXY", "no_proxy"] {
            assert_eq!(value(name), Some("localhost,127.0.0.1,::1"), "{name}");
        }
        for name in [
            "npm_config_proxy",
            "npm_config_https_proxy",
            "PIP_PROXY",
            "CARGO_HTTP_PROXY",
            "GIT_CONFIG_VALUE_0",
        ] {
            assert_eq!(value(name), Some("http://127.0.0.1:3128"), "{name}");
        }
        assert_eq!(value("GIT_CONFIG_KEY_0"), Some("http.proxy"));
        assert_eq!(value("GIT_CONFIG_COUNT"), Some("1"));
    }
}
