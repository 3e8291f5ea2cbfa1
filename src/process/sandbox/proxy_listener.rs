//! The proxy's listener inside a scope's [`SharedNetwork`]: a short-lived child joins the
//! namespace as a spawn would, binds `127.0.0.1:3128` there (any free port if a command of
//! the scope took that one first), passes the listening socket to the host over a
//! socketpair (`SCM_RIGHTS`) and exits. The host accepts on it although it runs outside the
//! namespace (a socket stays in the namespace it was made in), so the scope's children reach
//! the host's proxy, and nothing else, without a veth, a route or a forwarder process; and
//! nobody outside the namespace can connect to it.

use super::loopback::{Helper, SharedNetwork, close_all_but};
use super::network_policy::PROXY_PORT;
use crate::process::syscalls::check;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Forks a child that joins the namespace, listens there and sends the socket back.
pub(super) fn listen_inside(network: &SharedNetwork) -> io::Result<(std::net::TcpListener, u16)> {
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
    let (ours, theirs) = unsafe { (OwnedFd::from_raw_fd(ends[0]), OwnedFd::from_raw_fd(ends[1])) };
    // SAFETY: getpid takes nothing.
    let host = unsafe { libc::getpid() };
    // SAFETY: the child makes async-signal-safe system calls only (prctl, setns,
    // close_range, socket, bind, listen, getsockname, sendmsg) on values prepared here,
    // then `_exit`s.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        listener_helper(network, host, theirs.as_raw_fd());
    }
    check(pid)?;
    drop(theirs);
    // Reaped on every path out (it exits on its own once it has sent).
    let _helper = Helper { pid, release: None };
    receive_listener(&ours)
}

/// The proxy listener's helper: dies with the thread that forked it (blocked until it reaps
/// it), joins the namespace as a spawn would, keeps only its socketpair end, listens on the
/// namespace's `127.0.0.1` and sends the socket with its port (or the errno that stopped it).
fn listener_helper(network: &SharedNetwork, host: libc::pid_t, socket: libc::c_int) -> ! {
    let outcome = (|| -> io::Result<(libc::c_int, u16)> {
        // SAFETY: prctl and getppid take integers only.
        unsafe {
            check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
            if libc::getppid() != host {
                libc::_exit(1);
            }
        }
        network.join()?;
        close_all_but(socket, socket);
        listen_on_loopback()
    })();
    let (status, port, listener) = match outcome {
        Ok((listener, port)) => (0, port, Some(listener)),
        Err(error) => (error.raw_os_error().unwrap_or(libc::EIO), 0, None),
    };
    send_listener(socket, status, port, listener);
    // SAFETY: `_exit` in a forked child.
    unsafe { libc::_exit(0) }
}

/// A TCP listener on `127.0.0.1:`[`PROXY_PORT`] (any free port when that one is taken) and
/// its port. Raw system calls only: it runs in a forked child.
fn listen_on_loopback() -> io::Result<(libc::c_int, u16)> {
    // SAFETY: socket takes integers only.
    let listener =
        unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    check(listener)?;
    let bind = |port: u16| {
        let address = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: port.to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from(std::net::Ipv4Addr::LOCALHOST).to_be(),
            },
            sin_zero: [0; 8],
        };
        // SAFETY: `address` is a live `sockaddr_in` of the length given.
        check(unsafe {
            libc::bind(
                listener,
                (&raw const address).cast(),
                size_of::<libc::sockaddr_in>() as libc::socklen_t,
            )
        })
    };
    let bound = bind(PROXY_PORT).or_else(|error| match error.raw_os_error() {
        Some(libc::EADDRINUSE) => bind(0),
        _ => Err(error),
    });
    // SAFETY: listen takes integers; `address` and `length` are live out-values.
    let port = bound.and_then(|()| unsafe {
        check(libc::listen(listener, libc::SOMAXCONN))?;
        let mut address: libc::sockaddr_in = std::mem::zeroed();
        let mut length = size_of::<libc::sockaddr_in>() as libc::socklen_t;
        check(libc::getsockname(
            listener,
            (&raw mut address).cast(),
            &mut length,
        ))?;
        Ok(u16::from_be(address.sin_port))
    });
    match port {
        Ok(port) => Ok((listener, port)),
        Err(error) => {
            // SAFETY: our own socket, closed once.
            unsafe { libc::close(listener) };
            Err(error)
        }
    }
}

/// The message the listener's helper sends: its status (an errno, 0 when it listens) and
/// the port, with the socket itself as `SCM_RIGHTS` when there is one.
const MESSAGE: usize = 6;

/// Room for one descriptor's control message (`CMSG_SPACE(sizeof(int))`, 24 bytes on
/// 64-bit targets), aligned as `cmsghdr` needs.
type Control = [u64; 4];

/// Sends `status`, `port` and `listener` over `socket` (the helper's side; no allocation).
fn send_listener(socket: libc::c_int, status: i32, port: u16, listener: Option<libc::c_int>) {
    let mut data = [0u8; MESSAGE];
    data[..4].copy_from_slice(&status.to_ne_bytes());
    data[4..].copy_from_slice(&port.to_ne_bytes());
    let mut iov = libc::iovec {
        iov_base: data.as_mut_ptr().cast(),
        iov_len: data.len(),
    };
    let mut control: Control = [0; 4];
    // SAFETY: a zeroed msghdr is valid; every pointer set below is to a live local, and the
    // control message written lies within `control` (its space checked against its size).
    unsafe {
        let mut header: libc::msghdr = std::mem::zeroed();
        header.msg_iov = &raw mut iov;
        header.msg_iovlen = 1;
        let space = libc::CMSG_SPACE(size_of::<libc::c_int>() as u32) as usize;
        if let Some(listener) = listener.filter(|_| space <= size_of::<Control>()) {
            header.msg_control = control.as_mut_ptr().cast();
            header.msg_controllen = space as _;
            let message = libc::CMSG_FIRSTHDR(&raw const header);
            (*message).cmsg_level = libc::SOL_SOCKET;
            (*message).cmsg_type = libc::SCM_RIGHTS;
            (*message).cmsg_len = libc::CMSG_LEN(size_of::<libc::c_int>() as u32) as _;
            libc::CMSG_DATA(message)
                .cast::<libc::c_int>()
                .write_unaligned(listener);
        }
        while libc::sendmsg(socket, &raw const header, libc::MSG_NOSIGNAL) < 0
            && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
        {}
    }
}

/// The host's side: the listener and its port, or why the helper could not make it.
fn receive_listener(socket: &OwnedFd) -> io::Result<(std::net::TcpListener, u16)> {
    let mut data = [0u8; MESSAGE];
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
        let received =
            unsafe { libc::recvmsg(socket.as_raw_fd(), &raw mut header, libc::MSG_CMSG_CLOEXEC) };
        if received >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            break received;
        }
    };
    check(received as libc::c_int)?;
    // Owned at once, so every path below closes what arrived.
    let mut passed: Option<OwnedFd> = None;
    // SAFETY: the CMSG_* walk stays within the control buffer the kernel filled; a
    // descriptor received with SCM_RIGHTS is new in this process and owned by nobody else.
    unsafe {
        let mut message = libc::CMSG_FIRSTHDR(&raw const header);
        while !message.is_null() {
            if (*message).cmsg_level == libc::SOL_SOCKET && (*message).cmsg_type == libc::SCM_RIGHTS
            {
                let fd = libc::CMSG_DATA(message)
                    .cast::<libc::c_int>()
                    .read_unaligned();
                passed = Some(OwnedFd::from_raw_fd(fd));
            }
            message = libc::CMSG_NXTHDR(&raw const header, message);
        }
    }
    let failed =
        |why: String| io::Error::other(format!("cannot open the sandbox's proxy listener: {why}"));
    if received == 0 {
        return Err(failed("its helper died".to_owned()));
    }
    if usize::try_from(received).ok() != Some(MESSAGE) {
        return Err(failed(format!("a {received}-byte message")));
    }
    let status = i32::from_ne_bytes([data[0], data[1], data[2], data[3]]);
    if status != 0 {
        return Err(failed(io::Error::from_raw_os_error(status).to_string()));
    }
    let port = u16::from_ne_bytes([data[4], data[5]]);
    let listener =
        std::net::TcpListener::from(passed.ok_or_else(|| failed("no socket came".to_owned()))?);
    listener.set_nonblocking(true)?;
    Ok((listener, port))
}
