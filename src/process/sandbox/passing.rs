//! Handing descriptors from a short-lived helper child to the host over a socketpair
//! (`SCM_RIGHTS`), with a status and a small number: a socket made inside a namespace, or
//! the namespaces themselves. A helper sends its own descriptors, so nothing depends on the
//! host being allowed to open the helper's `/proc` entries (a host that is not root, and
//! that keeps itself undumpable, is not).

use crate::process::syscalls::check;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// The most descriptors one message carries.
const MAX_FDS: usize = 3;

/// The message's data: the status (an errno, 0 on success) and a number (a port).
const MESSAGE: usize = 6;

/// Room for one control message of [`MAX_FDS`] descriptors (`CMSG_SPACE(12)`, 32 bytes on
/// 64-bit targets), aligned as `cmsghdr` needs.
type Control = [u64; 4];

/// A connected `SOCK_SEQPACKET` pair, as `(host's end, helper's end)`.
pub(crate) fn channel() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut ends = [0; 2];
    // SAFETY: `ends` is a valid two-element out-array.
    check(unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            ends.as_mut_ptr(),
        )
    })?;
    // SAFETY: both descriptors were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(ends[0]), OwnedFd::from_raw_fd(ends[1])) })
}

/// Sends `status`, `number` and `fds` (at most [`MAX_FDS`]) over `socket`: the helper's side,
/// between fork and `_exit`, so it allocates nothing.
pub(super) fn send(socket: libc::c_int, status: i32, number: u16, fds: &[libc::c_int]) {
    let mut data = [0u8; MESSAGE];
    data[..4].copy_from_slice(&status.to_ne_bytes());
    data[4..].copy_from_slice(&number.to_ne_bytes());
    let _ = send_message(socket, &data, fds, 0);
}

/// Sends one message of `data` and `fds` (at most [`MAX_FDS`]) over the `SOCK_SEQPACKET`
/// `socket` (with `flags`, such as `MSG_DONTWAIT`), retrying when interrupted. Allocates
/// nothing, so a forked child may call it.
pub(crate) fn send_message(
    socket: libc::c_int,
    data: &[u8],
    fds: &[libc::c_int],
    flags: libc::c_int,
) -> io::Result<()> {
    if fds.len() > MAX_FDS {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    let mut iov = libc::iovec {
        iov_base: data.as_ptr().cast_mut().cast(),
        iov_len: data.len(),
    };
    let mut control: Control = [0; 4];
    let bytes = size_of_val(fds) as u32;
    // SAFETY: a zeroed msghdr is valid; every pointer set below is to a live local (the
    // kernel only reads `data` through the iovec), and the control message written lies
    // within `control` (its space checked against its size).
    unsafe {
        let mut header: libc::msghdr = std::mem::zeroed();
        header.msg_iov = &raw mut iov;
        header.msg_iovlen = 1;
        let space = libc::CMSG_SPACE(bytes) as usize;
        if !fds.is_empty() && space <= size_of::<Control>() {
            header.msg_control = control.as_mut_ptr().cast();
            header.msg_controllen = space as _;
            let message = libc::CMSG_FIRSTHDR(&raw const header);
            (*message).cmsg_level = libc::SOL_SOCKET;
            (*message).cmsg_type = libc::SCM_RIGHTS;
            (*message).cmsg_len = libc::CMSG_LEN(bytes) as _;
            let slots = libc::CMSG_DATA(message).cast::<libc::c_int>();
            for (index, fd) in fds.iter().enumerate() {
                slots.add(index).write_unaligned(*fd);
            }
        }
        loop {
            if libc::sendmsg(socket, &raw const header, libc::MSG_NOSIGNAL | flags) >= 0 {
                return Ok(());
            }
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::Interrupted {
                return Err(error);
            }
        }
    }
}

/// What a helper sent: its number and descriptors (close-on-exec, owned here), or the error
/// it reported (`what` names the thing it was making, for the message).
pub(super) fn receive(socket: &OwnedFd, what: &str) -> io::Result<(u16, Vec<OwnedFd>)> {
    let mut data = [0u8; MESSAGE];
    let (received, passed) = receive_message(socket, &mut data, 0)?;
    let failed = |why: String| io::Error::other(format!("cannot {what}: {why}"));
    if received == 0 {
        return Err(failed("its helper died".to_owned()));
    }
    if received != MESSAGE {
        return Err(failed(format!("a {received}-byte message")));
    }
    let status = i32::from_ne_bytes([data[0], data[1], data[2], data[3]]);
    if status != 0 {
        return Err(failed(io::Error::from_raw_os_error(status).to_string()));
    }
    Ok((u16::from_ne_bytes([data[4], data[5]]), passed))
}

/// Receives one message into `data` (with `flags`, such as `MSG_DONTWAIT`): its length (0 at
/// end of file) and the descriptors it carried (close-on-exec, owned here).
pub(crate) fn receive_message(
    socket: &OwnedFd,
    data: &mut [u8],
    flags: libc::c_int,
) -> io::Result<(usize, Vec<OwnedFd>)> {
    let mut iov = libc::iovec {
        iov_base: data.as_mut_ptr().cast(),
        iov_len: data.len(),
    };
    let mut control: Control = [0; 4];
    // SAFETY: a zeroed msghdr is valid; its pointers are to live locals of the sizes given.
    let mut header: libc::msghdr = unsafe { std::mem::zeroed() };
    header.msg_iov = &raw mut iov;
    header.msg_iovlen = 1;
    header.msg_control = control.as_mut_ptr().cast();
    header.msg_controllen = size_of::<Control>() as _;
    let received = loop {
        // SAFETY: as above; the kernel writes within the buffers `header` describes.
        let received = unsafe {
            libc::recvmsg(
                socket.as_raw_fd(),
                &raw mut header,
                libc::MSG_CMSG_CLOEXEC | flags,
            )
        };
        if received >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            break received;
        }
    };
    let received = usize::try_from(received).map_err(|_| io::Error::last_os_error())?;
    // Owned at once, so every path below closes what arrived.
    let mut passed = Vec::with_capacity(MAX_FDS);
    // SAFETY: the CMSG_* walk stays within the control buffer the kernel filled; descriptors
    // received with SCM_RIGHTS are new in this process and owned by nobody else.
    unsafe {
        let mut message = libc::CMSG_FIRSTHDR(&raw const header);
        while !message.is_null() {
            if (*message).cmsg_level == libc::SOL_SOCKET && (*message).cmsg_type == libc::SCM_RIGHTS
            {
                let payload = (*message).cmsg_len as usize - libc::CMSG_LEN(0) as usize;
                let slots = libc::CMSG_DATA(message).cast::<libc::c_int>();
                for index in 0..payload / size_of::<libc::c_int>() {
                    passed.push(OwnedFd::from_raw_fd(slots.add(index).read_unaligned()));
                }
            }
            message = libc::CMSG_NXTHDR(&raw const header, message);
        }
    }
    if header.msg_flags & libc::MSG_TRUNC != 0 {
        return Err(io::Error::other(format!(
            "a message longer than {} bytes",
            data.len()
        )));
    }
    Ok((received, passed))
}
