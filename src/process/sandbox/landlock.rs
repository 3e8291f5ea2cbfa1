//! The Landlock ruleset of one spawn, built in the parent (opening every rule's path) so
//! the child only has to call `landlock_restrict_self` on the finished ruleset's fd.

use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreatedAttr,
    Scope, path_beneath_rules,
};
use std::io;
use std::os::fd::OwnedFd;
use std::path::PathBuf;

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

/// A ruleset that allows reading and executing everything and writing only under
/// `writable` (plus the null-like devices); on ABI 6 and later it also scopes signals and
/// abstract UNIX sockets to the sandbox, so a command cannot signal the host.
pub fn ruleset(kernel: u32, writable: &[PathBuf]) -> io::Result<OwnedFd> {
    let abi = target(kernel).ok_or_else(|| {
        io::Error::other(format!(
            "Landlock ABI {MINIMUM_ABI} or later is needed (this kernel has {kernel})"
        ))
    })?;
    let devices = DEVICES
        .iter()
        .map(PathBuf::from)
        .filter(|device| device.exists());
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(abi))
        .map_err(io::Error::other)?;
    if abi >= ABI::V6 {
        ruleset = ruleset
            .scope(Scope::from_all(abi))
            .map_err(io::Error::other)?;
    }
    let created = ruleset
        .create()
        .map_err(io::Error::other)?
        .add_rules(path_beneath_rules(["/"], AccessFs::from_read(abi)))
        .map_err(io::Error::other)?
        .add_rules(path_beneath_rules(
            writable.iter().cloned().chain(devices),
            AccessFs::from_all(abi),
        ))
        .map_err(io::Error::other)?;
    Option::<OwnedFd>::from(created)
        .ok_or_else(|| io::Error::other("the Landlock ruleset has no file descriptor"))
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
        let error = ruleset(2, &[]).unwrap_err().to_string();
        assert_eq!(
            error,
            "Landlock ABI 3 or later is needed (this kernel has 2)"
        );
    }
}
