//! The Landlock ruleset of one spawn, built in the parent (opening every rule's path) so
//! the child only has to call `landlock_restrict_self` on the finished ruleset's fd.

use landlock::{
    ABI, Access, AccessFs, BitFlags, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope, path_beneath_rules,
};
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// The oldest Landlock ABI the sandbox accepts: ABI 3 is the first that can refuse
/// `truncate` outside the writable set (before it, truncation was always allowed).
pub const MINIMUM_ABI: u32 = 3;

/// Null-like devices every sandboxed process may write (when they exist).
const DEVICES: [&str; 3] = ["/dev/null", "/dev/zero", "/dev/full"];

/// The ABI whose rights this build handles on a kernel offering `kernel`: fixed versions
/// (each tested), never "whatever the kernel has", so a newer kernel changes nothing.
fn target(kernel: u32) -> Option<ABI> {
    match kernel {
        0..MINIMUM_ABI => None,
        MINIMUM_ABI..=4 => Some(ABI::V3),
        5 => Some(ABI::V5),
        _ => Some(ABI::V6),
    }
}

/// A ruleset that allows reading and executing everything but `denied` (canonical paths
/// that exist; see [`readable`]) and writing only under `writable` (plus the null-like
/// devices); on ABI 6 and later it also scopes signals and abstract UNIX sockets to the
/// sandbox, so a command cannot signal the host.
pub fn ruleset(kernel: u32, writable: &[PathBuf], denied: &[PathBuf]) -> io::Result<OwnedFd> {
    let (abi, ruleset) = handling(kernel, AccessFs::from_all)?;
    let (read, listed) = readable(denied);
    let created = ruleset
        .create()
        .map_err(io::Error::other)?
        .add_rules(path_beneath_rules(read, AccessFs::from_read(abi)))
        .map_err(io::Error::other)?
        .add_rules(path_beneath_rules(listed, AccessFs::ReadDir))
        .map_err(io::Error::other)?
        .add_rules(path_beneath_rules(
            writable.iter().cloned().chain(devices()),
            AccessFs::from_all(abi),
        ))
        .map_err(io::Error::other)?;
    Option::<OwnedFd>::from(created)
        .ok_or_else(|| io::Error::other("the Landlock ruleset has no file descriptor"))
}

/// A further layer for a process already confined by [`ruleset`]: it handles the write
/// rights only (reads stay as the first layer says) and grants them under `writable` (plus
/// the null-like devices); on ABI 6 and later it also scopes signals and abstract UNIX
/// sockets to itself. A Python fork server's child stacks it on the server's ruleset, so a
/// run writes its own scratch dir, not the server's or another run's, and cannot signal
/// the server or a sibling run.
pub fn write_layer(kernel: u32, writable: &[PathBuf]) -> io::Result<OwnedFd> {
    let (abi, ruleset) = handling(kernel, AccessFs::from_write)?;
    let created = ruleset
        .create()
        .map_err(io::Error::other)?
        .add_rules(path_beneath_rules(
            writable.iter().cloned().chain(devices()),
            AccessFs::from_write(abi),
        ))
        .map_err(io::Error::other)?;
    Option::<OwnedFd>::from(created)
        .ok_or_else(|| io::Error::other("the Landlock ruleset has no file descriptor"))
}

/// A ruleset for this kernel's ABI that handles the rights `handled` gives for it (all of
/// them must be enforced) and, on ABI 6 and later, scopes signals and abstract UNIX sockets.
fn handling(kernel: u32, handled: fn(ABI) -> BitFlags<AccessFs>) -> io::Result<(ABI, Ruleset)> {
    let abi = target(kernel).ok_or_else(|| {
        io::Error::other(format!(
            "Landlock ABI {MINIMUM_ABI} or later is needed (this kernel has {kernel})"
        ))
    })?;
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(handled(abi))
        .map_err(io::Error::other)?;
    if abi >= ABI::V6 {
        ruleset = ruleset
            .scope(Scope::from_all(abi))
            .map_err(io::Error::other)?;
    }
    Ok((abi, ruleset))
}

/// The null-like devices every ruleset lets a command write, those that exist here.
fn devices() -> impl Iterator<Item = PathBuf> {
    DEVICES
        .iter()
        .map(PathBuf::from)
        .filter(|device| device.exists())
}

/// The read rights of [`ruleset`] as the kernel's bits, for the rule the child adds on its
/// own `/proc` when `/` itself is not granted (see [`readable`]): that `/proc` is mounted
/// by the tether's init after the parent built the ruleset, so no rule of the parent
/// names it.
pub fn read_bits(kernel: u32) -> u64 {
    target(kernel).map_or(0, |abi| AccessFs::from_read(abi).bits())
}

/// What may be read when `denied` may not, as Landlock (which only grants, beneath a path)
/// can say it: read rights on `/` when nothing is denied; else on every entry along the way
/// to each denied path but the denied one (symbolic links left out: their targets are
/// governed where they lie), and only the listing of the directories along the way. So the
/// names in those directories stay listable, and an entry created there after the spawn
/// is not readable.
fn readable(denied: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (mut read, mut listed) = (Vec::new(), Vec::new());
    if denied.is_empty() {
        read.push(PathBuf::from("/"));
    } else {
        walk(Path::new("/"), denied, &mut read, &mut listed);
    }
    (read, listed)
}

fn walk(dir: &Path, denied: &[PathBuf], read: &mut Vec<PathBuf>, listed: &mut Vec<PathBuf>) {
    listed.push(dir.to_path_buf());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if denied.contains(&path) || entry.file_type().is_ok_and(|kind| kind.is_symlink()) {
            continue;
        }
        if denied.iter().any(|denied| denied.starts_with(&path)) {
            walk(&path, denied, read, listed);
        } else {
            read.push(path);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn targets_fixed_abis_and_refuses_old_kernels() {
        assert_eq!(target(0), None);
        assert_eq!(target(2), None);
        assert_eq!(target(3), Some(ABI::V3));
        assert_eq!(target(4), Some(ABI::V3));
        assert_eq!(target(5), Some(ABI::V5));
        assert_eq!(target(9), Some(ABI::V6));
        let error = ruleset(2, &[], &[]).unwrap_err().to_string();
        assert_eq!(
            error,
            "Landlock ABI 3 or later is needed (this kernel has 2)"
        );
    }

    #[test]
    fn a_denied_path_is_left_out_while_its_siblings_are_granted() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        for path in ["home/.ssh", "home/code", "other"] {
            std::fs::create_dir_all(base.join(path)).unwrap();
        }
        std::fs::write(base.join("home/.netrc"), "x").unwrap();
        std::os::unix::fs::symlink(base.join("home/.ssh"), base.join("home/link")).unwrap();
        let denied = [base.join("home/.ssh"), base.join("home/.netrc")];
        let (read, listed) = readable(&denied);
        assert!(read.contains(&base.join("home/code")));
        assert!(read.contains(&base.join("other")));
        assert!(listed.contains(&base.join("home")) && listed.contains(&PathBuf::from("/")));
        for hidden in [
            &denied[0],
            &denied[1],
            &base.join("home/link"),
            &base,
            &base.join("home"),
        ] {
            assert!(
                !read.iter().any(|r| hidden.starts_with(r)),
                "{}",
                hidden.display()
            );
        }
        assert_eq!(readable(&[]).0, vec![PathBuf::from("/")]);
    }
}
