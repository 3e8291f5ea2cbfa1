//! Pattern parsing and matching: wildcards, ports, deny over allow, the apex, case, the
//! trailing dot, IP literals, presets, and bad patterns named with their field.

use super::*;

fn policy(allow: &[&str], deny: &[&str]) -> EgressPolicy {
    let owned = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    match EgressPolicy::parse(&owned(allow), &owned(deny), "sandbox.network") {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    }
}

fn error(allow: &[&str], deny: &[&str]) -> String {
    let owned = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    match EgressPolicy::parse(&owned(allow), &owned(deny), "sandbox.network") {
        Ok(_) => panic!("{allow:?} {deny:?} parsed"),
        Err(e) => e,
    }
}

#[test]
fn an_exact_domain_covers_every_port_and_only_itself() {
    let p = policy(&["example.com"], &[]);
    assert_eq!(p.decide("example.com", 443), Decision::Allow);
    assert_eq!(p.decide("example.com", 22), Decision::Allow);
    assert_eq!(p.decide("www.example.com", 443), Decision::NotListed);
    assert_eq!(p.decide("notexample.com", 443), Decision::NotListed);
    assert_eq!(p.decide("example.com.evil", 443), Decision::NotListed);
}

#[test]
fn case_and_a_trailing_dot_do_not_matter() {
    let p = policy(&["Example.COM."], &[]);
    assert_eq!(p.decide("EXAMPLE.com", 80), Decision::Allow);
    assert_eq!(p.decide("example.com.", 80), Decision::Allow);
}

#[test]
fn a_wildcard_covers_subdomains_at_any_depth_but_not_the_apex() {
    let p = policy(&["*.github.com"], &[]);
    assert_eq!(p.decide("api.github.com", 443), Decision::Allow);
    assert_eq!(p.decide("a.b.github.com", 443), Decision::Allow);
    assert_eq!(p.decide("github.com", 443), Decision::NotListed);
    assert_eq!(p.decide("evilgithub.com", 443), Decision::NotListed);
    assert_eq!(p.decide("github.com.evil.net", 443), Decision::NotListed);
}

#[test]
fn a_port_limits_the_pattern_to_that_port() {
    let p = policy(&["api.example.org:8443", "*.x.com:443"], &[]);
    assert_eq!(p.decide("api.example.org", 8443), Decision::Allow);
    assert_eq!(p.decide("api.example.org", 443), Decision::NotListed);
    assert_eq!(p.decide("a.x.com", 443), Decision::Allow);
    assert_eq!(p.decide("a.x.com", 80), Decision::NotListed);
}

#[test]
fn deny_wins_over_allow_and_names_its_rule() {
    let p = policy(
        &["*.example.com", "@github"],
        &["secret.example.com", "gist.github.com:443"],
    );
    assert_eq!(p.decide("www.example.com", 443), Decision::Allow);
    assert_eq!(
        p.decide("secret.example.com", 443),
        Decision::Deny {
            rule: "secret.example.com".into()
        }
    );
    assert_eq!(
        p.decide("gist.github.com", 443),
        Decision::Deny {
            rule: "gist.github.com:443".into()
        }
    );
    assert_eq!(p.decide("gist.github.com", 22), Decision::Allow);
    // A denied preset is named as written.
    let p = policy(&["*.npmjs.org"], &["@npm"]);
    assert_eq!(
        p.decide("registry.npmjs.org", 443),
        Decision::Deny {
            rule: "@npm".into()
        }
    );
}

#[test]
fn presets_expand_to_their_domains() {
    let p = policy(
        &[
            "@npm",
            "@pypi",
            "@rust",
            "@go",
            "@maven",
            "@github",
            "@gitlab",
            "@bitbucket",
        ],
        &[],
    );
    for host in [
        "registry.npmjs.org",
        "pypi.org",
        "files.pythonhosted.org",
        "index.crates.io",
        "static.crates.io",
        "crates.io",
        "proxy.golang.org",
        "sum.golang.org",
        "repo.maven.apache.org",
        "github.com",
        "codeload.github.com",
        "objects.githubusercontent.com",
        "gitlab.com",
        "bitbucket.org",
    ] {
        assert_eq!(p.decide(host, 443), Decision::Allow, "{host}");
    }
    assert_eq!(p.decide("npmjs.org", 443), Decision::NotListed);
    assert_eq!(
        policy(&["@pypi"], &[]).decide("github.com", 443),
        Decision::NotListed
    );
}

#[test]
fn ip_literals_match_only_literally_and_never_by_default() {
    let p = policy(&["example.com"], &[]);
    assert_eq!(p.decide("93.184.216.34", 80), Decision::NotListed);
    assert_eq!(p.decide("::1", 80), Decision::NotListed);
    let p = policy(&["10.0.0.7", "[2001:db8::1]:443", "2001:db8::2"], &[]);
    assert_eq!(p.decide("10.0.0.7", 5432), Decision::Allow);
    assert_eq!(p.decide("10.0.0.8", 5432), Decision::NotListed);
    assert_eq!(p.decide("[2001:db8::1]", 443), Decision::Allow);
    assert_eq!(p.decide("2001:0db8:0::1", 443), Decision::Allow);
    assert_eq!(p.decide("2001:db8::1", 80), Decision::NotListed);
    assert_eq!(p.decide("2001:db8::2", 80), Decision::Allow);
    // An address pattern covers no name, not even one made of digits and letters.
    assert_eq!(p.decide("10.0.0.7.nip.io", 80), Decision::NotListed);
}

#[test]
fn legacy_address_notations_are_not_hosts() {
    let p = policy(&["example.com"], &[]);
    for host in [
        "2130706433",
        "127.1",
        "0x7f.1",
        "0x7f000001",
        "exa mple.com",
        "",
        "a..b",
        "-a.com",
        "a\r\nb",
    ] {
        assert_eq!(p.decide(host, 80), Decision::NotListed, "{host:?}");
        assert_eq!(Host::parse(host), None, "{host:?}");
    }
    assert_eq!(
        Host::parse("[::1]"),
        Some(Host::Ip(IpAddr::V6(Ipv6Addr::LOCALHOST)))
    );
    assert_eq!(
        Host::parse("[::1]").map(|h| h.authority(443)),
        Some("[::1]:443".to_string())
    );
}

#[test]
fn bad_patterns_are_rejected_naming_the_field_and_entry() {
    assert_eq!(
        error(&["example.com", "ok.org", "https://x.com"], &[]),
        "sandbox.network.allow[2]: \"https://x.com\" is not a domain pattern: write the host without a scheme (`example.com`, not `https://example.com`)"
    );
    let e = error(&[], &["@npmjs"]);
    assert!(e.starts_with("sandbox.network.deny[0]: \"@npmjs\" is not a domain pattern: no preset is called @npmjs (presets: @npm, @pypi"), "{e}");
    for (bad, why) in [
        ("", "it is empty"),
        (" example.com", "spaces"),
        ("*", "network: true"),
        ("foo.*.com", "may only open"),
        ("*example.com", "may only open"),
        ("*.10.0.0.1", "not addresses"),
        ("example.com:0", "not a port"),
        ("example.com:99999", "not a port"),
        ("example.com:+80", "not a port"),
        ("example.com:", "not a port"),
        ("example.com/path", "not a path"),
        ("exa mple.com", "not a domain"),
        ("127.1", "not a domain"),
        ("[::1", "brackets"),
        ("[::1]x", "brackets"),
        ("[nope]:80", "not a domain"),
    ] {
        let e = error(&[bad], &[]);
        assert!(
            e.starts_with(&format!(
                "sandbox.network.allow[0]: {bad:?} is not a domain pattern: "
            )),
            "{e}"
        );
        assert!(e.contains(why), "{bad:?}: {e}");
    }
}

#[test]
fn the_field_prefix_is_the_callers() {
    let e = match EgressPolicy::parse(
        &["ok.com".into()],
        &["bad pattern".into()],
        "sandbox.families.python.network",
    ) {
        Ok(_) => panic!("parsed"),
        Err(e) => e,
    };
    assert!(
        e.starts_with("sandbox.families.python.network.deny[0]: "),
        "{e}"
    );
}
