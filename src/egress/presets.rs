//! Presets: `@name` in `sandbox.network.allow` (or `deny`) stands for the domains a package
//! manager or git host's client really contacts, so a user writes `["@npm", "@pypi"]`
//! instead of learning where tarballs are served from. Each entry carries the reason it is
//! there; docs/sandbox.md ("Network egress: presets") shows the same lists. A preset is
//! ordinary patterns: deny still wins over it, and refusals name it as written (`@npm`).

/// The preset names, as written after `@`.
pub const NAMES: [&str; 8] = [
    "npm",
    "pypi",
    "rust",
    "go",
    "maven",
    "github",
    "gitlab",
    "bitbucket",
];

/// npm, yarn and pnpm with their default registries.
const NPM: &[(&str, &str)] = &[
    (
        "registry.npmjs.org",
        "npm's registry: package metadata, tarballs, audit",
    ),
    (
        "registry.yarnpkg.com",
        "yarn's default registry (a mirror of npm's)",
    ),
    (
        "repo.yarnpkg.com",
        "`yarn set version` downloads Yarn releases from here",
    ),
    (
        "nodejs.org",
        "node-gyp downloads the Node headers to build native addons",
    ),
];

/// pip, uv, poetry against PyPI.
const PYPI: &[(&str, &str)] = &[
    ("pypi.org", "the simple index and JSON API"),
    (
        "files.pythonhosted.org",
        "the distribution files the index links to",
    ),
];

/// cargo and rustup.
const RUST: &[(&str, &str)] = &[
    (
        "index.crates.io",
        "the sparse registry index (cargo's default since 1.70)",
    ),
    ("static.crates.io", "crate downloads"),
    (
        "crates.io",
        "the web API (`cargo search`, `cargo publish`, yanking)",
    ),
    ("static.rust-lang.org", "rustup's toolchains and components"),
];

/// The go command with its default GOPROXY and GOSUMDB.
const GO: &[(&str, &str)] = &[
    (
        "proxy.golang.org",
        "the module proxy: module lists, .mod, .zip, toolchains",
    ),
    (
        "sum.golang.org",
        "the checksum database every download is verified against",
    ),
];

/// Maven and Gradle's `mavenCentral()`.
const MAVEN: &[(&str, &str)] = &[
    (
        "repo.maven.apache.org",
        "Maven Central, Maven's and Gradle's default name",
    ),
    (
        "repo1.maven.org",
        "Maven Central's older name, still in many builds",
    ),
];

/// git over HTTPS and SSH, the API, archives, releases.
const GITHUB: &[(&str, &str)] = &[
    (
        "github.com",
        "git over HTTPS and SSH, the web, release download links",
    ),
    (
        "*.github.com",
        "api., codeload. (archives), uploads., ssh. (SSH over 443)",
    ),
    (
        "*.githubusercontent.com",
        "raw files, release assets and LFS objects redirect here",
    ),
];

const GITLAB: &[(&str, &str)] = &[
    ("gitlab.com", "git over HTTPS and SSH, the API, archives"),
    ("*.gitlab.com", "registry. and altssh. (SSH over 443)"),
];

const BITBUCKET: &[(&str, &str)] = &[
    ("bitbucket.org", "git over HTTPS and SSH, archives"),
    ("*.bitbucket.org", "api. and altssh. (SSH over 443)"),
    (
        "bbuseruploads.s3.amazonaws.com",
        "downloads and LFS objects redirect here",
    ),
];

/// Every preset with its entries (domain pattern, why it is there).
pub fn all() -> [(&'static str, &'static [(&'static str, &'static str)]); 8] {
    [
        ("npm", NPM),
        ("pypi", PYPI),
        ("rust", RUST),
        ("go", GO),
        ("maven", MAVEN),
        ("github", GITHUB),
        ("gitlab", GITLAB),
        ("bitbucket", BITBUCKET),
    ]
}

/// The domain patterns of the preset `name` (without the `@`), if there is one.
pub fn domains(name: &str) -> Option<Vec<&'static str>> {
    all()
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, entries)| entries.iter().map(|(domain, _)| *domain).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_has_a_list_and_every_list_a_name() {
        let names: Vec<&str> = all().iter().map(|(n, _)| *n).collect();
        assert_eq!(names, NAMES);
        for name in NAMES {
            assert!(domains(name).is_some_and(|d| !d.is_empty()), "{name}");
        }
        assert_eq!(domains("pip"), None);
    }

    #[test]
    fn docs_show_every_preset_entry() {
        let docs = include_str!("../../docs/sandbox.md");
        for (name, entries) in all() {
            assert!(
                docs.contains(&format!("| `@{name}` | `{}` |", entries[0].0)),
                "@{name}"
            );
            for (domain, _) in entries {
                assert!(
                    docs.contains(&format!("| `{domain}` |")),
                    "docs/sandbox.md lacks {domain}"
                );
            }
        }
    }
}
