//! Which system calls the filter refuses for each [`FilterRules`], as data (the unit tests
//! read it; [`super::compile`] turns it into BPF).
//!
//! In both modes: what reaches beyond the sandbox's own processes and files (kernel
//! keyrings, other processes' memory, kernel programs and modules, the mount table once the
//! view is built, new user namespaces, host-wide settings, device nodes) and the socket
//! families no sandboxed program needs (`AF_VSOCK`, `AF_PACKET`, netlink other than
//! `NETLINK_ROUTE`), plus `AF_UNIX` unless `allowUnixSockets` lists sockets: seccomp cannot
//! read the address of a `connect`, so a UNIX socket is refused when it is created
//! (`socketpair` stays allowed: it reaches nothing but the caller's own processes).
//! `io_uring_setup` is refused too: a ring creates sockets and connects without the
//! `socket` system call.
//!
//! In the fallback (no user namespaces, so no view and no IPC or UTS namespace): SysV IPC
//! and POSIX message queues (shared with the host there), set-user-id and set-group-id
//! bits in `chmod` or in the mode of a file being created (Landlock does not govern
//! metadata, so this is the part of a chmod outside the writable roots seccomp can close,
//! and no set-id file can be made inside them either), the host name, and, with the
//! network off, every socket family but `AF_UNIX`.

use super::FilterRules;
use std::collections::BTreeMap;

/// A test of the low 32 bits of one argument (the kernel reads each tested argument as
/// an `int`, `mode_t` or flags word, so the high half cannot carry a different value past
/// it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Test {
    /// `args[n] == value`.
    Is(u8, u64),
    /// `args[n] != value`.
    IsNot(u8, u64),
    /// `args[n] & mask == mask`: every bit of `mask` set.
    Has(u8, u64),
    /// `args[n] & mask == value`.
    Masked(u8, u64, u64),
}

/// The refused calls, each with the argument tests that refuse it: any one list whose
/// tests all hold refuses the call; an empty set of lists refuses every call.
pub type Table = BTreeMap<i64, Vec<Vec<Test>>>;

/// `fchmodat2` (Linux 6.6; not in the libc crate for every architecture): the same number
/// everywhere, as every system call from 424 on.
const SYS_FCHMODAT2: i64 = 452;
/// `open_tree_attr` (Linux 6.15): a detached copy of a mount with changed attributes.
const SYS_OPEN_TREE_ATTR: i64 = 467;

/// Kernel keyrings: shared by every process of the user outside user namespaces.
pub const KEYRINGS: [i64; 3] = [libc::SYS_add_key, libc::SYS_request_key, libc::SYS_keyctl];

/// Reading or steering another process (the PID namespace limits whom, this refuses it).
pub const OTHER_PROCESSES: [i64; 4] = [
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_pidfd_getfd,
];

/// Kernel facilities with a long record of exploits, or that load code into the kernel,
/// or that bypass the path rules (`open_by_handle_at`), or enter other namespaces.
pub const KERNEL: [i64; 11] = [
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_io_uring_setup,
    libc::SYS_open_by_handle_at,
    libc::SYS_setns,
];

/// The mount table: the filter comes after the view is built, so nothing the program
/// runs may change it.
pub const MOUNTS: [i64; 11] = [
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    SYS_OPEN_TREE_ATTR,
    libc::SYS_fsopen,
    libc::SYS_fsmount,
    libc::SYS_fsconfig,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
];

/// Host-wide settings a root-run command could change in the fallback (in namespace mode
/// it lacks the capabilities anyway).
#[cfg(target_arch = "x86_64")]
pub const HOST_SETTINGS: [i64; 10] = [
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    libc::SYS_acct,
    libc::SYS_iopl,
    libc::SYS_ioperm,
];
/// Host-wide settings a root-run command could change in the fallback (in namespace mode
/// it lacks the capabilities anyway).
#[cfg(not(target_arch = "x86_64"))]
pub const HOST_SETTINGS: [i64; 8] = [
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    libc::SYS_acct,
];

/// SysV IPC and POSIX message queues: per IPC namespace, so the host's in the fallback and
/// every run's in a fork server's.
pub const SYSV_IPC: [i64; 14] = [
    libc::SYS_shmget,
    libc::SYS_shmat,
    libc::SYS_shmdt,
    libc::SYS_shmctl,
    libc::SYS_msgget,
    libc::SYS_msgsnd,
    libc::SYS_msgrcv,
    libc::SYS_msgctl,
    libc::SYS_semget,
    libc::SYS_semop,
    libc::SYS_semtimedop,
    libc::SYS_semctl,
    libc::SYS_mq_open,
    libc::SYS_mq_unlink,
];

/// The host name: per UTS namespace, so the host's in the fallback.
pub const HOST_NAME: [i64; 2] = [libc::SYS_sethostname, libc::SYS_setdomainname];

/// `chmod`-like calls and the index of their mode argument.
#[cfg(target_arch = "x86_64")]
const CHMODS: [(i64, u8); 4] = [
    (libc::SYS_chmod, 1),
    (libc::SYS_fchmod, 1),
    (libc::SYS_fchmodat, 2),
    (SYS_FCHMODAT2, 2),
];
#[cfg(not(target_arch = "x86_64"))]
const CHMODS: [(i64, u8); 3] = [
    (libc::SYS_fchmod, 1),
    (libc::SYS_fchmodat, 2),
    (SYS_FCHMODAT2, 2),
];

/// Calls that create a file with a mode: the index of their flags argument (none for
/// `creat`, which always creates) and of the mode (`openat2` passes both in memory: the
/// prelude answers it ENOSYS in the fallback, and callers fall back to `openat`).
#[cfg(target_arch = "x86_64")]
const CREATES: [(i64, Option<u8>, u8); 3] = [
    (libc::SYS_open, Some(1), 2),
    (libc::SYS_openat, Some(2), 3),
    (libc::SYS_creat, None, 1),
];
#[cfg(not(target_arch = "x86_64"))]
const CREATES: [(i64, Option<u8>, u8); 1] = [(libc::SYS_openat, Some(2), 3)];

/// `mknod`-like calls and the index of their mode argument.
#[cfg(target_arch = "x86_64")]
const MKNODS: [(i64, u8); 2] = [(libc::SYS_mknod, 1), (libc::SYS_mknodat, 2)];
#[cfg(not(target_arch = "x86_64"))]
const MKNODS: [(i64, u8); 1] = [(libc::SYS_mknodat, 2)];

/// `socket(domain, type, protocol)`'s argument indexes.
const DOMAIN: u8 = 0;
const PROTOCOL: u8 = 2;

/// The refusals for `rules`.
pub fn table(rules: &FilterRules) -> Table {
    let mut table = Table::new();
    let groups = [
        &KEYRINGS[..],
        &OTHER_PROCESSES,
        &KERNEL,
        &MOUNTS,
        &HOST_SETTINGS,
    ];
    for syscall in groups.into_iter().flatten() {
        refuse(&mut table, *syscall, Vec::new());
    }
    // New user namespaces: one would regain every capability over new mount namespaces.
    // (`clone3` passes its flags in memory seccomp cannot read: the prelude answers it
    // ENOSYS, and the C library falls back to `clone`.)
    let new_user = vec![vec![Test::Has(0, libc::CLONE_NEWUSER as u64)]];
    refuse(&mut table, libc::SYS_unshare, new_user.clone());
    refuse(&mut table, libc::SYS_clone, new_user);
    // Device nodes (a root-run command in the fallback could make a disk's).
    let file_type = u64::from(libc::S_IFMT);
    for (syscall, mode) in MKNODS {
        let devices = [libc::S_IFBLK, libc::S_IFCHR]
            .map(|kind| vec![Test::Masked(mode, file_type, u64::from(kind))]);
        refuse(&mut table, syscall, devices.to_vec());
    }
    refuse(&mut table, libc::SYS_socket, sockets(rules));
    if rules.fallback || rules.runs_share_ipc {
        for syscall in SYSV_IPC {
            refuse(&mut table, syscall, Vec::new());
        }
    }
    if rules.fallback {
        for syscall in HOST_NAME {
            refuse(&mut table, syscall, Vec::new());
        }
        // A set-id bit set by chmod, or given to a file as it is created (the mode only
        // counts with O_CREAT or O_TMPFILE; other opens may leave anything there).
        let set_id = |mode: u8, also: Option<Test>| {
            [libc::S_ISUID, libc::S_ISGID]
                .map(|bit| {
                    also.into_iter()
                        .chain([Test::Has(mode, u64::from(bit))])
                        .collect()
                })
                .to_vec()
        };
        for (syscall, mode) in CHMODS.into_iter().chain(MKNODS) {
            refuse(&mut table, syscall, set_id(mode, None));
        }
        for (syscall, flags, mode) in CREATES {
            let Some(flags) = flags else {
                refuse(&mut table, syscall, set_id(mode, None));
                continue;
            };
            for creating in [libc::O_CREAT, libc::O_TMPFILE] {
                let creating = Test::Has(flags, creating as u64);
                refuse(&mut table, syscall, set_id(mode, Some(creating)));
            }
        }
    }
    table
}

/// The `socket` calls refused.
fn sockets(rules: &FilterRules) -> Vec<Vec<Test>> {
    let family = |domain: libc::c_int| Test::Is(DOMAIN, domain as u64);
    let mut refused = if rules.fallback && rules.network_off {
        // No network namespace: every family that could reach out.
        vec![vec![Test::IsNot(DOMAIN, libc::AF_UNIX as u64)]]
    } else {
        vec![
            vec![family(libc::AF_VSOCK)],
            vec![family(libc::AF_PACKET)],
            vec![
                family(libc::AF_NETLINK),
                Test::IsNot(PROTOCOL, libc::NETLINK_ROUTE as u64),
            ],
        ]
    };
    if !rules.allow_unix {
        refused.push(vec![family(libc::AF_UNIX)]);
    }
    refused
}

/// Adds `when` to `syscall`'s refusals; a refusal of every call stays one.
fn refuse(table: &mut Table, syscall: i64, when: Vec<Vec<Test>>) {
    match table.get_mut(&syscall) {
        Some(existing) if existing.is_empty() => {}
        Some(existing) if !when.is_empty() => existing.extend(when),
        _ => {
            table.insert(syscall, when);
        }
    }
}
