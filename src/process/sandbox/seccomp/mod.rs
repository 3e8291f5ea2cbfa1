//! The system call filter every sandboxed child gets, in both modes (see [`table`] for
//! what it refuses and why), compiled once per distinct [`FilterRules`] in the parent.
//!
//! Refused calls fail with EPERM. A short hand-written prelude runs first: a call of
//! another ABI than the host's kills the process (an i386 `int 0x80` or an AArch32 call
//! would otherwise reach `socketcall` and every number under a different meaning), an
//! x32 call (numbers with bit 30 set on x86-64) fails with EPERM, and `clone3` fails with
//! ENOSYS (its flags lie in memory a filter cannot read; the C library then uses `clone`,
//! whose flags the table tests), as does `openat2` in the fallback (its mode too; callers
//! fall back to `openat`).

mod table;

#[cfg(test)]
mod eval;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};
use std::io;
use std::sync::{Arc, OnceLock};
use table::Test;

/// What one family's filter must refuse beyond what every filter refuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FilterRules {
    /// The network is off (in the fallback, no namespace refuses it: the filter does).
    pub network_off: bool,
    /// `allowUnixSockets` lists sockets: `socket(AF_UNIX)` is allowed.
    pub allow_unix: bool,
    /// No user namespaces: no view, no IPC or UTS namespace, so the filter stands in.
    pub fallback: bool,
    /// The IPC namespace is shared by processes of different runs (a Python fork server's
    /// children): SysV IPC and POSIX message queues are refused, as in the fallback, so no
    /// run finds what another made (a segment outlives its maker).
    pub runs_share_ipc: bool,
}

impl FilterRules {
    /// A distinct index per combination, for the cache.
    fn index(self) -> usize {
        usize::from(self.network_off)
            | usize::from(self.allow_unix) << 1
            | usize::from(self.fallback) << 2
            | usize::from(self.runs_share_ipc) << 3
    }
}

/// The compiled program for `rules` (shared by every spawn with the same rules).
pub fn filter(rules: &FilterRules) -> io::Result<Arc<BpfProgram>> {
    type Compiled = OnceLock<Result<Arc<BpfProgram>, String>>;
    static PROGRAMS: [Compiled; 16] = [const { OnceLock::new() }; 16];
    PROGRAMS[rules.index()]
        .get_or_init(|| compile(rules).map(Arc::new).map_err(|e| e.to_string()))
        .clone()
        .map_err(io::Error::other)
}

/// `seccomp_data` offsets: the call number and the audit architecture.
const DATA_NR: u32 = 0;
const DATA_ARCH: u32 = 4;
/// `AUDIT_ARCH_X86_64` / `AUDIT_ARCH_AARCH64`.
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;
/// `__X32_SYSCALL_BIT`: x32 calls share the x86-64 audit architecture.
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Classic BPF opcodes: `BPF_LD | BPF_W | BPF_ABS`, `BPF_JMP | BPF_JEQ | BPF_K`,
/// `BPF_JMP | BPF_JGE | BPF_K`, `BPF_RET | BPF_K`.
const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x15;
#[cfg(target_arch = "x86_64")]
const BPF_JGE_K: u16 = 0x35;
const BPF_RET_K: u16 = 0x06;

fn instruction(code: u16, k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

fn errno(errno: libc::c_int) -> u32 {
    libc::SECCOMP_RET_ERRNO | (errno as u32 & libc::SECCOMP_RET_DATA)
}

/// The prelude described in the module documentation; it falls through to the table's
/// program with nothing assumed (that program loads what it tests itself).
fn prelude(rules: &FilterRules) -> BpfProgram {
    let mut program = vec![
        instruction(BPF_LD_W_ABS, DATA_ARCH, 0, 0),
        instruction(BPF_JEQ_K, AUDIT_ARCH, 1, 0),
        instruction(BPF_RET_K, libc::SECCOMP_RET_KILL_PROCESS, 0, 0),
        instruction(BPF_LD_W_ABS, DATA_NR, 0, 0),
    ];
    #[cfg(target_arch = "x86_64")]
    program.extend([
        instruction(BPF_JGE_K, X32_SYSCALL_BIT, 0, 1),
        instruction(BPF_RET_K, errno(libc::EPERM), 0, 0),
    ]);
    let mut unreadable = vec![libc::SYS_clone3];
    if rules.fallback {
        unreadable.push(libc::SYS_openat2);
    }
    for syscall in unreadable {
        program.extend([
            instruction(BPF_JEQ_K, syscall as u32, 0, 1),
            instruction(BPF_RET_K, errno(libc::ENOSYS), 0, 0),
        ]);
    }
    program
}

fn compile(rules: &FilterRules) -> Result<BpfProgram, seccompiler::Error> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)?;
    let mut compiled = Vec::new();
    for (syscall, when) in table::table(rules) {
        let mut chain = Vec::with_capacity(when.len());
        for tests in when {
            let conditions = tests
                .into_iter()
                .map(condition)
                .collect::<Result<Vec<_>, _>>()?;
            chain.push(SeccompRule::new(conditions)?);
        }
        // An empty chain matches every call of the system call.
        compiled.push((syscall, chain));
    }
    let filter = SeccompFilter::new(
        compiled.into_iter().collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )?;
    let mut program = prelude(rules);
    program.extend(BpfProgram::try_from(filter)?);
    Ok(program)
}

fn condition(test: Test) -> Result<SeccompCondition, seccompiler::BackendError> {
    let (arg, op, value) = match test {
        Test::Is(arg, value) => (arg, SeccompCmpOp::Eq, value),
        Test::IsNot(arg, value) => (arg, SeccompCmpOp::Ne, value),
        Test::Has(arg, mask) => (arg, SeccompCmpOp::MaskedEq(mask), mask),
        Test::Masked(arg, mask, value) => (arg, SeccompCmpOp::MaskedEq(mask), value),
    };
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
