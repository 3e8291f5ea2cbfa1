//! `sandbox.network = { allow, deny }`: the config names a bad entry; over the wire
//! `initialize` reports the family's
//! network as off but for the proxy (`networkIsolation: "proxy"`, the policy under
//! `egress`); a sandboxed `bash` call under a policy finds the proxy settings in its
//! environment and a call without one none; where user namespaces are refused (the seccomp
//! fallback) a policy makes `bash` refuse to start, naming `sandbox.network`.

use crate::support::sandbox::{Sandboxed, stdout};
use serde_json::json;

const NO_USERNS: (&str, &str) = ("DSH_TOOLS_SANDBOX_SIMULATE", "no-userns");

fn policy() -> serde_json::Value {
    json!({ "sandbox": { "network": {
        "allow": ["registry.npmjs.org", "*.github.com:443"],
        "deny": ["evil.github.com"]
    } } })
}

#[test]
fn the_config_names_the_bad_entry_of_a_policy() {
    let cases = [
        (
            json!({ "sandbox": { "network": { "allow": ["a.example"], "ask": [] } } }),
            "config.sandbox.network.ask: unknown field `ask`, expected `allow` or `deny`",
        ),
        (
            json!({ "sandbox": { "network": { "allow": ["a.example", 1] } } }),
            "config.sandbox.network.allow[1]: invalid type: number, expected a string",
        ),
        (
            json!({ "sandbox": { "network": { "allow": ["a.example", "b.example", "https://c.example"] } } }),
            "config.sandbox.network.allow[2]: \"https://c.example\" is not a domain pattern",
        ),
        (
            json!({ "builtins": { "bash": { "cwd": ".", "sandbox": { "network": { "deny": ["x.example:99999"] } } } } }),
            "config.builtins.bash.sandbox.network.deny[0]: \"x.example:99999\"",
        ),
        (
            json!({ "mcpServers": { "m": { "command": "m", "sandbox": { "network": { "allow": ["a..b"] } } } } }),
            "config.mcpServers.m.sandbox.network.allow[0]: \"a..b\"",
        ),
    ];
    for (config, expected) in cases {
        let error = dsh_tools::config::parse(config.clone()).unwrap_err().0;
        assert!(error.starts_with(expected), "{config} gave {error:?}");
    }
    let good = json!({ "sandbox": { "network": { "allow": ["@npm", "*.github.com:443"] } },
                       "codeRuntime": { "sandbox": { "network": false } } });
    assert!(dsh_tools::config::parse(good).is_ok());
}

#[test]
fn a_policy_is_reported_as_a_network_off_but_for_the_proxy() {
    let sandboxed = Sandboxed::start(policy(), &[], false);
    let bash = &sandboxed.report()["bash"];
    assert_eq!(bash.get("unavailable"), None, "{bash}");
    assert_eq!(bash["network"], false, "{bash}");
    assert_eq!(bash["networkIsolation"], "proxy", "{bash}");
    assert_eq!(
        bash["egress"],
        json!({ "allow": ["registry.npmjs.org", "*.github.com:443"],
                "deny": ["evil.github.com"] })
    );
    // The family's own `network` replaces the top-level policy whole.
    let mut own = policy();
    own["builtins"] = json!({ "bash": { "sandbox": { "network": true } } });
    let open = Sandboxed::start(own, &[], false);
    let bash = &open.report()["bash"];
    assert_eq!(bash["network"], true, "{bash}");
    assert_eq!(bash["networkIsolation"], "none", "{bash}");
    assert_eq!(bash.get("egress"), None, "{bash}");
    // Python Code Mode inherits the top-level policy.
    assert_eq!(open.report()["python"]["networkIsolation"], "proxy");
}

#[test]
fn a_bash_call_under_a_policy_is_pointed_at_the_proxy_and_one_without_is_not() {
    let mut sandboxed = Sandboxed::start(policy(), &[], false);
    let seen = stdout(&sandboxed.bash("env | grep -i -e proxy -e GIT_CONFIG | sort"));
    let http = "http://127.0.0.1:3128";
    let expected = [
        "ALL_PROXY=socks5h://127.0.0.1:3128".to_owned(),
        format!("CARGO_HTTP_PROXY={http}"),
        "GIT_CONFIG_COUNT=1".to_owned(),
        "GIT_CONFIG_KEY_0=http.proxy".to_owned(),
        format!("GIT_CONFIG_VALUE_0={http}"),
        format!("HTTPS_PROXY={http}"),
        format!("HTTP_PROXY={http}"),
        "NODE_USE_ENV_PROXY=1".to_owned(),
        "NO_PROXY=localhost,127.0.0.1,::1".to_owned(),
        format!("PIP_PROXY={http}"),
        "all_proxy=socks5h://127.0.0.1:3128".to_owned(),
        format!("http_proxy={http}"),
        format!("https_proxy={http}"),
        "no_proxy=localhost,127.0.0.1,::1".to_owned(),
        format!("npm_config_https_proxy={http}"),
        "npm_config_noproxy=localhost,127.0.0.1,::1".to_owned(),
        format!("npm_config_proxy={http}"),
    ];
    let mut lines: Vec<&str> = seen.lines().collect();
    lines.sort_unstable();
    let mut expected: Vec<&str> = expected.iter().map(String::as_str).collect();
    expected.sort_unstable();
    assert_eq!(lines, expected, "{seen}");
    // The proxy port is bound on the scope's own loopback: a server of the command cannot
    // take it, while any other port is free.
    let taken = "python3 -c \"import socket
s = socket.socket()
for port in (3128, 3129):
    try:
        s = socket.socket(); s.bind(('127.0.0.1', port)); print(port, 'free')
    except OSError as e:
        print(port, 'taken')\"";
    assert_eq!(stdout(&sandboxed.bash(taken)), "3128 taken\n3129 free\n");

    let mut plain = Sandboxed::with(json!({}));
    let none = plain.bash("env | grep -i -c proxy; true");
    assert_eq!(stdout(&none), "0\n", "{none}");
}

#[test]
fn without_user_namespaces_a_policy_makes_bash_refuse_naming_sandbox_network() {
    let refuses = "bash is unavailable: builtins.bash.sandbox.network = { allow, deny } needs a \
                   network namespace (its only way out is the host's proxy), and this kernel \
                   refuses unprivileged user namespaces; set builtins.bash.sandbox.network to \
                   false (no network) or true (the host's, unfiltered), or \
                   builtins.bash.sandbox.mode = \"off\" to run it unsandboxed";
    let mut sandboxed = Sandboxed::start(policy(), &[NO_USERNS], false);
    assert_eq!(sandboxed.report()["kernel"]["userNamespaces"], false);
    assert_eq!(sandboxed.report()["bash"]["unavailable"], refuses);
    let call = sandboxed.bash("echo never");
    assert_eq!(call["isError"], true, "{call}");
    assert_eq!(call["error"]["message"], refuses);
    // `true` keeps meaning the host's network there.
    let open = json!({ "sandbox": { "network": true } });
    let mut open = Sandboxed::start(open, &[NO_USERNS], false);
    assert_eq!(open.report()["bash"].get("unavailable"), None);
    assert_eq!(stdout(&open.bash("echo fine")), "fine\n");
}
