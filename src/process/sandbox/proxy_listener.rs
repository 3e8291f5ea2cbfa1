//! The proxy's listener inside a scope's [`SharedNetwork`]: a short-lived child joins the
//! namespace as a spawn would, binds `127.0.0.1:3128` there (any free port if a command of
//! the scope took that one first), passes the listening socket to the host over a
//! socketpair (`SCM_RIGHTS`) and exits. The host accepts on it although it runs outside the
//! namespace (a socket stays in the namespace it was made in), so the scope's children reach
//! the host's proxy, and nothing else, without a veth, a route or a forwarder process; and
//! nobody outside the namespace can connect to it.

use super::loopback::{Helper, SharedNetwork, close_all_but};
use super::network_policy::PROXY_PORT;
use super::passing;
use crate::process::syscalls::check;
use std::io;
use std::os::fd::AsRawFd;

/// Forks a child that joins the namespace, listens there and sends the socket back.
pub(super) fn listen_inside(network: &SharedNetwork) -> io::Result<(std::net::TcpListener, u16)> {
    let (ours, theirs) = passing::channel()?;
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
    let _helper = Helper { pid };
    let (port, passed) = passing::receive(&ours, "open the sandbox's proxy listener")?;
    let socket = passed.into_iter().next().ok_or_else(|| {
        io::Error::other("cannot open the sandbox's proxy listener: no socket came")
    })?;
    let listener = std::net::TcpListener::from(socket);
    listener.set_nonblocking(true)?;
    Ok((listener, port))
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
    match outcome {
        Ok((listener, port)) => passing::send(socket, 0, port, &[listener]),
        Err(error) => passing::send(socket, error.raw_os_error().unwrap_or(libc::EIO), 0, &[]),
    }
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
