//! The network fallback where namespaces are not allowed: a seccomp filter, compiled once,
//! that makes `socket` fail with EPERM for every address family but `AF_UNIX`, and refuses
//! `io_uring_setup` (io_uring can create sockets without the `socket` system call).

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};
use std::collections::BTreeMap;
use std::io;
use std::sync::{Arc, OnceLock};

/// The compiled program (shared by every spawn).
pub fn socket_filter() -> io::Result<Arc<BpfProgram>> {
    static PROGRAM: OnceLock<Result<Arc<BpfProgram>, String>> = OnceLock::new();
    PROGRAM
        .get_or_init(|| compile().map(Arc::new).map_err(|e| e.to_string()))
        .clone()
        .map_err(io::Error::other)
}

fn compile() -> Result<BpfProgram, seccompiler::Error> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)?;
    let not_unix = SeccompCondition::new(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Ne,
        libc::AF_UNIX as u64,
    )?;
    let rules: BTreeMap<i64, Vec<SeccompRule>> = [
        (libc::SYS_socket, vec![SeccompRule::new(vec![not_unix])?]),
        // An empty rule list matches every call of the system call.
        (libc::SYS_io_uring_setup, Vec::new()),
    ]
    .into_iter()
    .collect();
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )?;
    Ok(filter.try_into()?)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn compiles_for_this_architecture() {
        let program = socket_filter().unwrap();
        assert!(!program.is_empty());
    }
}
