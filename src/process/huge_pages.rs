//! Transparent huge pages: off for the host, back to the machine's setting for its children.
//!
//! mimalloc reserves its arenas eagerly and advises huge pages on them, so with THP at
//! `madvise` (or `always`) each thread's scattered small pages pull in whole 2 MiB pages: 40
//! live Code Mode isolates cost 330 MB of resident memory that way, 121 MB without
//! (`docs/performance.md`). The arena is reserved before `main`, so mimalloc's own option
//! comes too late; `PR_SET_THP_DISABLE` applies to the whole address space at once. The flag
//! is inherited across fork and exec, so every child clears it before it execs: a command's
//! compiler or database keeps the pages the machine gives it.

/// Turns transparent huge pages off for this process (best effort: an old kernel without
/// the prctl keeps them).
pub fn no_huge_pages_for_the_host() {
    // SAFETY: PR_SET_THP_DISABLE takes integers only.
    unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
}

/// In a forked child before exec: the machine's huge-page setting back (async-signal-safe).
pub(super) fn restore_in_child() {
    // SAFETY: as above.
    unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 0, 0, 0, 0) };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disabled() -> i32 {
        // SAFETY: PR_GET_THP_DISABLE takes integers only and returns the flag.
        unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) }
    }

    #[test]
    fn the_flag_is_set_for_the_host_and_cleared_in_a_child() {
        no_huge_pages_for_the_host();
        assert_eq!(disabled(), 1);
        // SAFETY: the child makes system calls only, then `_exit`s with the flag it sees.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            restore_in_child();
            unsafe { libc::_exit(disabled()) };
        }
        let mut status = 0;
        // SAFETY: waits for the child forked above.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status));
        assert_eq!(libc::WEXITSTATUS(status), 0);
    }
}
