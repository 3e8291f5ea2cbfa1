//! A loopback per agent scope: with the network off, namespace mode gives each child a
//! fresh network namespace whose `lo` is down, so a server started by one `bash` call can
//! be reached by nobody, not even the next call. A [`SharedNetwork`] is one network
//! namespace with only its loopback, up; the children of one scope join it instead of
//! unsharing their own, and reach each other's `127.0.0.1` listeners and nothing else:
//! not other scopes, not the host's loopback (a different namespace), no route out.
//!
//! Built by a short-lived helper child: it unshares a user and a network namespace, maps
//! its own ids, brings `lo` up, sends its own `/proc/self/ns/{user,net}` descriptors to the
//! host over a socketpair and exits (the host could not open them by pid when it is not
//! root: it keeps itself undumpable, and so is its fork). The host then holds two descriptors and nothing runs: the namespace lives
//! as long as those descriptors or any process inside it.
//!
//! A child joins right after fork, before the [tether](crate::process::tether) creates its
//! namespaces, while it is still in the host's user namespace: a root host has
//! `CAP_SYS_ADMIN` over every namespace and `setns`es into the network namespace alone; a
//! host without it first joins the helper's user namespace (its euid owns it, so it holds
//! every capability there), then the network namespace. Either way the program ends up in
//! user namespaces of its own below, with no capability over the shared namespace: it can
//! neither reconfigure `lo` nor add an interface.
//!
//! Under `network: { allow, deny }` the namespace also holds the host's proxy listener, made
//! on request ([`SharedNetwork::open_proxy`], once) by [`super::proxy_listener`].

use super::confine::above_reserved;
use super::passing;
use crate::process::syscalls::{IdMaps, check, write_file};
use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::{Arc, Mutex, PoisonError};
use tokio_util::sync::CancellationToken;

/// A network namespace with only its loopback, up; children that join it reach each
/// other's 127.0.0.1 listeners and nothing else (not the host's loopback, no route out).
#[derive(Debug)]
pub struct SharedNetwork {
    /// `/proc/<helper>/ns/user`: the namespace owning `net` (close-on-exec, above the
    /// descriptors callers' `pre_exec` code places).
    user: OwnedFd,
    /// `/proc/<helper>/ns/net`.
    net: OwnedFd,
    /// The proxy's listener inside the namespace, once [opened](Self::open_proxy).
    proxy: Mutex<Proxy>,
    /// Cancelled when this value drops (its scope closed and no spawn holds it any more).
    dropped: CancellationToken,
}

/// The proxy listener's port, and the listener until the host takes it.
#[derive(Debug, Default)]
struct Proxy {
    port: Option<u16>,
    listener: Option<std::net::TcpListener>,
}

impl Drop for SharedNetwork {
    fn drop(&mut self) {
        self.dropped.cancel();
    }
}

impl SharedNetwork {
    /// Creates one (a short-lived helper child makes the namespaces, brings `lo` up and
    /// sends its own namespace descriptors back; the host keeps only those, so nothing runs
    /// while nobody uses it).
    pub fn create() -> io::Result<Arc<SharedNetwork>> {
        let maps = IdMaps::identity();
        let (ours, theirs) = passing::channel()?;
        // SAFETY: getpid takes nothing.
        let host = unsafe { libc::getpid() };
        // SAFETY: the child makes async-signal-safe system calls only (prctl, close_range,
        // unshare, open, write, socket, ioctl, sendmsg) on values prepared here, then `_exit`s.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            helper(host, &maps, theirs.as_raw_fd());
        }
        check(pid)?;
        drop(theirs);
        // Reaped on every path out (it exits on its own once it has sent).
        let _helper = Helper { pid };
        let (_, passed) = passing::receive(&ours, "create a shared loopback")?;
        let [user, net]: [OwnedFd; 2] = passed.try_into().map_err(|_| {
            io::Error::other("cannot create a shared loopback: its namespaces did not come")
        })?;
        Ok(Arc::new(SharedNetwork {
            user: above_reserved(user)?,
            net: above_reserved(net)?,
            proxy: Mutex::default(),
            dropped: CancellationToken::new(),
        }))
    }

    /// [`create`](Self::create), then [`open_proxy`](Self::open_proxy).
    pub fn create_with_proxy() -> io::Result<Arc<SharedNetwork>> {
        let network = Self::create()?;
        network.open_proxy()?;
        Ok(network)
    }

    /// Makes the proxy's listener inside the namespace, the first time (later calls give the
    /// same port): `127.0.0.1:3128`, or a free port if that one is taken. The host takes it
    /// with [`proxy_listener`](Self::proxy_listener) and serves it; children reach it at
    /// `127.0.0.1:<port>` ([`super::network_policy::proxy_environment`]).
    pub fn open_proxy(&self) -> io::Result<u16> {
        let mut proxy = self.proxy.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(port) = proxy.port {
            return Ok(port);
        }
        let (listener, port) = super::proxy_listener::listen_inside(self)?;
        *proxy = Proxy {
            port: Some(port),
            listener: Some(listener),
        };
        Ok(port)
    }

    /// The proxy listener's port, once [opened](Self::open_proxy).
    pub fn proxy_port(&self) -> Option<u16> {
        self.proxy
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .port
    }

    /// The proxy's listener (non-blocking, close-on-exec, ready for
    /// `tokio::net::TcpListener::from_std`), handed out once: the first caller after
    /// [`open_proxy`](Self::open_proxy) serves it, every later one gets `None`.
    pub fn proxy_listener(&self) -> Option<std::net::TcpListener> {
        self.proxy
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .listener
            .take()
    }

    /// Cancelled when this network is dropped (its scope closed and no spawn holds it): the
    /// proxy serving [`proxy_listener`](Self::proxy_listener) stops with it. (A task that
    /// held the `Arc` itself would keep it alive: hold this token instead.)
    pub fn dropped(&self) -> CancellationToken {
        self.dropped.clone()
    }

    /// The child's half, run after fork and before the tether: joins the namespace. Raw
    /// `setns` calls on descriptors opened before fork, nothing else.
    pub(super) fn join(&self) -> io::Result<()> {
        // SAFETY: setns takes a descriptor this value owns and a flag.
        if unsafe { libc::setns(self.net.as_raw_fd(), libc::CLONE_NEWNET) } == 0 {
            return Ok(());
        }
        let refused = io::Error::last_os_error();
        if refused.raw_os_error() != Some(libc::EPERM) {
            return Err(refused);
        }
        // No CAP_SYS_ADMIN here: through the user namespace this euid owns.
        // SAFETY: as above.
        unsafe {
            check(libc::setns(self.user.as_raw_fd(), libc::CLONE_NEWUSER))?;
            check(libc::setns(self.net.as_raw_fd(), libc::CLONE_NEWNET))
        }
    }
}

/// One [`SharedNetwork`] per agent scope (`None` = the root scope), made on first use and
/// dropped when the scope closes.
#[derive(Debug, Default)]
pub struct Loopbacks {
    scopes: Mutex<HashMap<Option<String>, Arc<SharedNetwork>>>,
}

impl Loopbacks {
    /// The scope's namespace, created on its first use (under the lock: two first calls
    /// of one scope get the same namespace).
    pub fn get(&self, scope: Option<&str>) -> io::Result<Arc<SharedNetwork>> {
        let mut scopes = self.scopes.lock().unwrap_or_else(PoisonError::into_inner);
        let key = scope.map(str::to_owned);
        if let Some(network) = scopes.get(&key) {
            return Ok(Arc::clone(network));
        }
        let network = SharedNetwork::create()?;
        scopes.insert(key, Arc::clone(&network));
        Ok(network)
    }

    /// Forgets the namespaces of these scopes (the processes inside keep theirs until they end).
    pub fn close(&self, scopes: &[&str]) {
        let mut held = self.scopes.lock().unwrap_or_else(PoisonError::into_inner);
        for scope in scopes {
            held.remove(&Some((*scope).to_owned()));
        }
    }
}

/// A helper child, reaped when this drops (it exits on its own once it has sent).
pub(super) struct Helper {
    pub(super) pid: libc::pid_t,
}

impl Drop for Helper {
    fn drop(&mut self) {
        let mut status = 0;
        loop {
            // SAFETY: `status` is a valid out-pointer; `pid` is our own child.
            let reaped = unsafe { libc::waitpid(self.pid, &mut status, 0) };
            if reaped == self.pid
                || (reaped < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted)
            {
                return;
            }
        }
    }
}

/// The helper's life: dies with the thread that forked it (the caller of
/// [`SharedNetwork::create`], blocked until it reaps it, so unlike a spawned child's the
/// death signal cannot fire early and the spawner thread is not needed), keeps no
/// descriptor of the host's but its socket, makes the namespaces, lets any port be bound,
/// brings `lo` up and sends its own `/proc/self/ns/{user,net}` (or the errno that stopped it).
fn helper(host: libc::pid_t, maps: &IdMaps, socket: libc::c_int) -> ! {
    let outcome = (|| -> io::Result<[libc::c_int; 2]> {
        // SAFETY: prctl and getppid take integers only.
        unsafe {
            check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
            if libc::getppid() != host {
                libc::_exit(1);
            }
        }
        close_all_but(socket, socket);
        // SAFETY: unshare takes flags only.
        check(unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) })?;
        maps.write()?;
        // Any port may be bound, as in a namespace of the child's own (where it is root):
        // `python3 -m http.server 80` works; only the scope's processes can reach it.
        write_file(c"/proc/sys/net/ipv4/ip_unprivileged_port_start", b"0")?;
        loopback_up()?;
        Ok([
            open_own(c"/proc/self/ns/user")?,
            open_own(c"/proc/self/ns/net")?,
        ])
    })();
    match outcome {
        Ok(namespaces) => passing::send(socket, 0, 0, &namespaces),
        Err(error) => passing::send(socket, error.raw_os_error().unwrap_or(libc::EIO), 0, &[]),
    }
    // SAFETY: `_exit` in a forked child.
    unsafe { libc::_exit(0) }
}

/// Opens one of the helper's own `/proc/self` entries (always allowed, dumpable or not).
fn open_own(path: &std::ffi::CStr) -> io::Result<libc::c_int> {
    // SAFETY: `path` is NUL-terminated; the flags create nothing.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    check(fd)?;
    Ok(fd)
}

/// `struct ifreq` with its `ifr_flags` member (40 bytes on every 64-bit target).
#[repr(C)]
struct InterfaceFlags {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _rest: [u8; 22],
}

/// Sets `IFF_UP` on `lo` (which also gives it `127.0.0.1/8` and `::1`).
fn loopback_up() -> io::Result<()> {
    let mut request = InterfaceFlags {
        name: [0; libc::IFNAMSIZ],
        flags: 0,
        _rest: [0; 22],
    };
    request.name[..2].copy_from_slice(b"lo");
    // SAFETY: socket takes integers only.
    let socket = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    check(socket)?;
    // SAFETY: `request` is a live `ifreq`-sized buffer the ioctls read and write.
    let result = unsafe {
        let got = libc::ioctl(socket, libc::SIOCGIFFLAGS as _, &raw mut request);
        if got == 0 {
            request.flags |= libc::IFF_UP as libc::c_short;
            libc::ioctl(socket, libc::SIOCSIFFLAGS as _, &raw const request)
        } else {
            got
        }
    };
    let error = io::Error::last_os_error();
    // SAFETY: our own socket, closed once.
    unsafe { libc::close(socket) };
    if result < 0 { Err(error) } else { Ok(()) }
}

/// Closes every descriptor but `a` and `b`: the helper must not hold a pipe end of a
/// child the host is spawning meanwhile (its reader would wait for the helper).
pub(super) fn close_all_but(a: libc::c_int, b: libc::c_int) {
    let (low, high) = (a.min(b) as libc::c_uint, a.max(b) as libc::c_uint);
    let close_range = |first: libc::c_uint, last: libc::c_uint| {
        // SAFETY: close_range takes integers; it closes only this process's descriptors.
        unsafe { libc::syscall(libc::SYS_close_range, first, last, 0u32) };
    };
    if low > 0 {
        close_range(0, low - 1);
    }
    if high > low + 1 {
        close_range(low + 1, high - 1);
    }
    close_range(high + 1, libc::c_uint::MAX);
}
