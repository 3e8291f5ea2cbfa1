//! The one line a failed sandboxed command gets when its output shows a sandbox denial: a
//! permission error on a path outside the writable set, or a network error while the
//! network is off. It says what the sandbox allows and how to ask for escalation.

use super::escalation::ARGUMENT;
use crate::process::Sandbox;
use std::path::{Path, PathBuf};

/// What commands print when a write is refused (EACCES, EPERM, EROFS).
const DENIED: [&str; 3] = [
    "Permission denied",
    "Operation not permitted",
    "Read-only file system",
];

/// What commands print when the network is unreachable or name resolution fails.
const OFFLINE: [&str; 7] = [
    "Network is unreachable",
    "Could not resolve host",
    "Temporary failure in name resolution",
    "Name or service not known",
    "No address associated with hostname",
    "Address family not supported",
    "getaddrinfo",
];

/// What commands print when nothing listens where they connect: with the network off, the
/// scope's own loopback is all there is, so the host's services look like this.
const REFUSED: [&str; 2] = ["Connection refused", "ECONNREFUSED"];

/// The line for a command that exited with `code` printing `output`, if the sandbox
/// (`writable` besides its `scratch` dir) is what refused it.
pub fn sandbox_line(
    sandbox: &Sandbox,
    scratch: Option<&Path>,
    cwd: &Path,
    code: Option<i64>,
    output: &str,
) -> Option<String> {
    if sandbox.is_off() || code == Some(0) {
        return None;
    }
    let writable = |path: &Path| {
        sandbox.writable().iter().any(|root| path.starts_with(root))
            || scratch.is_some_and(|scratch| path.starts_with(scratch))
    };
    let escalate = format!(
        "if it must, call bash again with {ARGUMENT}: true (the user is asked to approve running it unsandboxed)"
    );
    for line in output.lines() {
        if sandbox.egress_policy().is_some() && OFFLINE.iter().any(|marker| line.contains(marker)) {
            return Some(format!(
                "The sandbox may be why: bash reaches the network only through the sandbox's \
                 proxy (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY), to the domains \
                 sandbox.network.allow lists; a client that ignores those variables cannot \
                 even resolve names; {escalate}."
            ));
        }
        if !sandbox.network() && OFFLINE.iter().any(|marker| line.contains(marker)) {
            return Some(format!(
                "The sandbox blocked this command: bash has no network access; {escalate}."
            ));
        }
        if !sandbox.network() && REFUSED.iter().any(|marker| line.contains(marker)) {
            return Some(format!(
                "The sandbox may be why: bash has no network access beyond its own loopback, \
                 where only servers this agent's commands started listen (the host's own \
                 services and the internet are unreachable); {escalate}."
            ));
        }
        if DENIED.iter().any(|marker| line.contains(marker)) {
            let paths = paths_in(line, cwd);
            if paths.is_empty() || paths.iter().any(|path| !writable(path)) {
                return Some(format!(
                    "The sandbox blocked this command: bash may write only {}{}; {escalate}.",
                    roots(sandbox),
                    if sandbox.network() {
                        ""
                    } else {
                        " and has no network access"
                    }
                ));
            }
        }
    }
    None
}

/// The writable set as the line names it.
fn roots(sandbox: &Sandbox) -> String {
    let mut named: Vec<String> = sandbox
        .writable()
        .iter()
        .map(|root| format!("under {}", root.display()))
        .collect();
    named.push("in its scratch dir ($TMPDIR)".to_owned());
    named.join(", ")
}

/// Path-like pieces of an error line (`touch: cannot touch '/x': …`, `bash: /x: …`,
/// `PermissionError: [Errno 13] Permission denied: '/x'`), made absolute against `cwd`.
fn paths_in(line: &str, cwd: &Path) -> Vec<PathBuf> {
    line.split([':', '\'', '"', '‘', '’', ' '])
        .map(str::trim)
        .filter(|piece| {
            piece.starts_with('/') || piece.starts_with("./") || piece.starts_with("../")
        })
        .map(|piece| cwd.join(piece))
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_paths_of_common_error_lines() {
        let cwd = Path::new("/w");
        assert_eq!(
            paths_in("touch: cannot touch '/etc/x': Permission denied", cwd),
            vec![PathBuf::from("/etc/x")]
        );
        assert_eq!(
            paths_in("bash: line 1: ./out.txt: Read-only file system", cwd),
            vec![PathBuf::from("/w/./out.txt")]
        );
        assert!(paths_in("Operation not permitted", cwd).is_empty());
    }
}
