//! The rule table per mode, and the compiled programs run through a BPF interpreter.

use super::eval::{Call, run};
use super::table::{self, HOST_NAME, KERNEL, KEYRINGS, MOUNTS, OTHER_PROCESSES, SYSV_IPC};
use super::*;

const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
const EPERM: u32 = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
const ENOSYS: u32 = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;

/// Every combination of the rules.
fn all_rules() -> impl Iterator<Item = FilterRules> {
    (0..16).map(|bits| FilterRules {
        network_off: bits & 1 != 0,
        allow_unix: bits & 2 != 0,
        fallback: bits & 4 != 0,
        runs_share_ipc: bits & 8 != 0,
    })
}

const NAMESPACE: FilterRules = FilterRules {
    network_off: true,
    allow_unix: false,
    fallback: false,
    runs_share_ipc: false,
};
const FALLBACK: FilterRules = FilterRules {
    fallback: true,
    ..NAMESPACE
};

fn verdict(rules: &FilterRules, nr: i64, args: &[u64]) -> u32 {
    let mut all = [0; 6];
    all[..args.len()].copy_from_slice(args);
    let call = Call {
        arch: AUDIT_ARCH,
        nr,
        args: all,
    };
    run(&filter(rules).unwrap(), &call)
}

fn socket(rules: &FilterRules, domain: libc::c_int, protocol: libc::c_int) -> u32 {
    let stream = libc::SOCK_STREAM as u64 | libc::SOCK_CLOEXEC as u64;
    verdict(
        rules,
        libc::SYS_socket,
        &[domain as u64, stream, protocol as u64],
    )
}

#[test]
fn every_combination_compiles_once_and_is_cached() {
    for rules in all_rules() {
        let program = filter(&rules).unwrap();
        assert!(program.len() > 20, "{rules:?}");
        assert!(Arc::ptr_eq(&program, &filter(&rules).unwrap()));
    }
    assert_eq!(
        all_rules()
            .map(FilterRules::index)
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        16
    );
}

#[test]
fn the_table_lists_the_shared_groups_in_both_modes_and_the_ipc_ones_where_runs_share_them() {
    for rules in all_rules() {
        let refused = table::table(&rules);
        for syscall in KEYRINGS
            .iter()
            .chain(&OTHER_PROCESSES)
            .chain(&KERNEL)
            .chain(&MOUNTS)
        {
            assert_eq!(
                refused.get(syscall),
                Some(&Vec::new()),
                "{syscall} in {rules:?}"
            );
        }
        let ipc_shared = rules.fallback || rules.runs_share_ipc;
        for (syscall, refused_here) in SYSV_IPC
            .iter()
            .map(|call| (call, ipc_shared))
            .chain(HOST_NAME.iter().map(|call| (call, rules.fallback)))
        {
            assert_eq!(
                refused.get(syscall).cloned(),
                refused_here.then(Vec::new),
                "{syscall} in {rules:?}"
            );
        }
        assert_eq!(refused.contains_key(&libc::SYS_fchmodat), rules.fallback);
        // Conditional refusals only: the calls stay usable otherwise.
        for syscall in [
            libc::SYS_socket,
            libc::SYS_clone,
            libc::SYS_unshare,
            libc::SYS_mknodat,
        ] {
            assert!(!refused[&syscall].is_empty(), "{syscall}");
        }
        assert!(!refused.contains_key(&libc::SYS_socketpair));
        assert!(!refused.contains_key(&libc::SYS_connect));
    }
}

#[test]
fn the_keyring_ptrace_and_kernel_calls_are_refused_in_both_modes() {
    for rules in all_rules() {
        for syscall in [
            libc::SYS_keyctl,
            libc::SYS_add_key,
            libc::SYS_ptrace,
            libc::SYS_bpf,
            libc::SYS_perf_event_open,
            libc::SYS_userfaultfd,
            libc::SYS_io_uring_setup,
            libc::SYS_mount,
            libc::SYS_fsopen,
        ] {
            assert_eq!(verdict(&rules, syscall, &[]), EPERM, "{syscall} {rules:?}");
        }
        assert_eq!(verdict(&rules, libc::SYS_getpid, &[]), ALLOW);
        assert_eq!(
            verdict(&rules, libc::SYS_socketpair, &[libc::AF_UNIX as u64]),
            ALLOW
        );
    }
}

#[test]
fn unix_sockets_are_refused_unless_allowed_and_only_route_netlink_passes() {
    for rules in all_rules() {
        let unix = socket(&rules, libc::AF_UNIX, 0);
        assert_eq!(
            unix,
            if rules.allow_unix { ALLOW } else { EPERM },
            "{rules:?}"
        );
        for domain in [libc::AF_VSOCK, libc::AF_PACKET] {
            assert_eq!(socket(&rules, domain, 0), EPERM, "{domain} {rules:?}");
        }
        let uevent = libc::NETLINK_KOBJECT_UEVENT;
        assert_eq!(socket(&rules, libc::AF_NETLINK, uevent), EPERM, "{rules:?}");
        let closed = rules.fallback && rules.network_off;
        let open = if closed { EPERM } else { ALLOW };
        assert_eq!(
            socket(&rules, libc::AF_NETLINK, libc::NETLINK_ROUTE),
            open,
            "{rules:?}"
        );
        assert_eq!(socket(&rules, libc::AF_INET, 0), open, "{rules:?}");
        assert_eq!(socket(&rules, libc::AF_INET6, 0), open, "{rules:?}");
    }
    // The kernel reads the domain as an int: a high half cannot disguise AF_UNIX.
    let disguised = (1u64 << 32) | libc::AF_UNIX as u64;
    assert_eq!(verdict(&NAMESPACE, libc::SYS_socket, &[disguised]), EPERM);
}

#[test]
fn set_id_bits_are_refused_in_the_fallback_only() {
    let fchmodat = |rules: &FilterRules, mode: u32| {
        verdict(
            rules,
            libc::SYS_fchmodat,
            &[libc::AT_FDCWD as u64, 0, u64::from(mode)],
        )
    };
    for mode in [0o4777, 0o2755, 0o6755] {
        assert_eq!(fchmodat(&FALLBACK, mode), EPERM, "{mode:o}");
        assert_eq!(fchmodat(&NAMESPACE, mode), ALLOW, "{mode:o}");
        assert_eq!(
            verdict(&FALLBACK, libc::SYS_fchmod, &[3, u64::from(mode)]),
            EPERM
        );
    }
    for mode in [0o755, 0o1777, 0o644] {
        assert_eq!(fchmodat(&FALLBACK, mode), ALLOW, "{mode:o}");
    }
    // Nor may a file be created with one (the mode is openat's fourth argument).
    let openat = |rules: &FilterRules, mode: u32| {
        let flags = (libc::O_CREAT | libc::O_WRONLY) as u64;
        verdict(
            rules,
            libc::SYS_openat,
            &[libc::AT_FDCWD as u64, 0, flags, u64::from(mode)],
        )
    };
    assert_eq!(openat(&FALLBACK, 0o4755), EPERM);
    let tmpfile = (libc::O_TMPFILE | libc::O_WRONLY) as u64;
    let unnamed = [libc::AT_FDCWD as u64, 0, tmpfile, 0o6755];
    assert_eq!(verdict(&FALLBACK, libc::SYS_openat, &unnamed), EPERM);
    // Without O_CREAT the mode is ignored, whatever it holds.
    let reading = [libc::AT_FDCWD as u64, 0, libc::O_RDONLY as u64, 0o4755];
    assert_eq!(verdict(&FALLBACK, libc::SYS_openat, &reading), ALLOW);
    assert_eq!(openat(&FALLBACK, 0o2755), EPERM);
    assert_eq!(openat(&FALLBACK, 0o666), ALLOW);
    assert_eq!(openat(&NAMESPACE, 0o4755), ALLOW);
    let regular = u64::from(libc::S_IFREG | 0o4755);
    assert_eq!(
        verdict(&FALLBACK, libc::SYS_mknodat, &[0, 0, regular]),
        EPERM
    );
    assert_eq!(verdict(&FALLBACK, libc::SYS_openat2, &[]), ENOSYS);
    assert_eq!(verdict(&NAMESPACE, libc::SYS_openat2, &[]), ALLOW);
    assert_eq!(verdict(&FALLBACK, libc::SYS_shmget, &[]), EPERM);
    assert_eq!(verdict(&NAMESPACE, libc::SYS_shmget, &[]), ALLOW);
}

#[test]
fn a_fork_servers_children_get_no_ipc_objects_and_keep_the_rest_of_namespace_mode() {
    let forking = FilterRules {
        runs_share_ipc: true,
        ..NAMESPACE
    };
    for syscall in SYSV_IPC {
        assert_eq!(verdict(&forking, syscall, &[]), EPERM, "{syscall}");
        assert_eq!(verdict(&NAMESPACE, syscall, &[]), ALLOW, "{syscall}");
    }
    // What only the fallback refuses stays allowed: the host name is the namespace's own.
    assert_eq!(verdict(&forking, libc::SYS_sethostname, &[]), ALLOW);
    assert_eq!(
        table::table(&forking).len(),
        table::table(&NAMESPACE).len() + SYSV_IPC.len()
    );
}

#[test]
fn new_user_namespaces_and_device_nodes_are_refused_while_other_clones_pass() {
    let user = libc::CLONE_NEWUSER as u64;
    let thread = (libc::CLONE_VM | libc::CLONE_THREAD | libc::CLONE_SIGHAND) as u64;
    for rules in all_rules() {
        assert_eq!(
            verdict(
                &rules,
                libc::SYS_unshare,
                &[user | libc::CLONE_NEWNS as u64]
            ),
            EPERM
        );
        assert_eq!(
            verdict(&rules, libc::SYS_unshare, &[libc::CLONE_NEWNS as u64]),
            ALLOW
        );
        assert_eq!(
            verdict(&rules, libc::SYS_clone, &[user | libc::SIGCHLD as u64]),
            EPERM
        );
        assert_eq!(verdict(&rules, libc::SYS_clone, &[thread]), ALLOW);
        assert_eq!(verdict(&rules, libc::SYS_clone3, &[]), ENOSYS);
        let mknodat =
            |mode: u32| verdict(&rules, libc::SYS_mknodat, &[0, 0, u64::from(mode | 0o600)]);
        assert_eq!(mknodat(libc::S_IFBLK), EPERM);
        assert_eq!(mknodat(libc::S_IFCHR), EPERM);
        assert_eq!(mknodat(libc::S_IFIFO), ALLOW);
        assert_eq!(mknodat(libc::S_IFREG), ALLOW);
    }
}

#[test]
fn another_abi_is_killed_and_x32_numbers_are_refused() {
    let program = filter(&NAMESPACE).unwrap();
    // i386's socketcall (102) and socket (359): the arch check kills before any table.
    for nr in [102, 359] {
        let i386 = Call {
            arch: 0x4000_0003,
            nr,
            args: [1, 1, 0, 0, 0, 0],
        };
        assert_eq!(run(&program, &i386), libc::SECCOMP_RET_KILL_PROCESS);
    }
    #[cfg(target_arch = "x86_64")]
    {
        let x32 = Call {
            arch: AUDIT_ARCH,
            nr: 0x4000_0000 | 41,
            args: [1, 1, 0, 0, 0, 0],
        };
        assert_eq!(run(&program, &x32), EPERM);
    }
}
