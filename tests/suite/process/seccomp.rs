//! The system call filter every sandboxed child gets, through the real binary, in the
//! namespace mode and in the seccomp fallback (`DSH_TOOLS_SANDBOX_SIMULATE=no-userns`):
//! a UNIX socket of the host is unreachable from `bash` and Python Code Mode (its listener
//! never accepts or receives) while `socketpair` works; kernel keyrings (the host's keys
//! unchanged), ptrace, `bpf`, `perf_event_open`, `userfaultfd`, `io_uring`, new user
//! namespaces and the socket families `AF_VSOCK`, `AF_PACKET` and non-route netlink are
//! refused, route netlink is not; in the fallback, a SysV segment of the host can be
//! neither attached nor removed, no set-id bit can be set, inside or outside, and no
//! set-id file created; a call
//! through the i386 ABI (`int 0x80`) kills the process; a kernel without seccomp makes each
//! family refuse to start, namespaces or not.
//! The host runs with `HOME` in a temp dir.

use crate::support::sandbox::{Sandboxed, stdout};
use serde_json::{Value, json};
use std::io::ErrorKind;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixDatagram, UnixListener};
use std::path::{Path, PathBuf};
use tempfile::TempDir;

const FALLBACK: (&str, &str) = ("DSH_TOOLS_SANDBOX_SIMULATE", "no-userns");

/// A host with `HOME` in a temp dir (kept alive with it), namespaced or in the fallback.
struct Host {
    sandboxed: Sandboxed,
    _home: TempDir,
}

fn start(fallback: bool) -> Host {
    let home = tempfile::tempdir().unwrap();
    let home_dir = home.path().display().to_string();
    let mut env = vec![("HOME", home_dir.as_str())];
    if fallback {
        env.push(FALLBACK);
    }
    let sandboxed = Sandboxed::start(json!({}), &env, false);
    let isolation = if fallback { "seccomp" } else { "namespace" };
    assert_eq!(sandboxed.report()["bash"]["networkIsolation"], isolation);
    Host {
        sandboxed,
        _home: home,
    }
}

/// The real interpreter (not pyenv's shim), for `bash` commands.
fn python() -> String {
    let output = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .unwrap();
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// Runs `program` (Python defining `probe()`) with `bash` and returns what it printed.
fn bash_probe(host: &mut Host, program: &str) -> Value {
    let script = host.sandboxed.inside("probe.py");
    std::fs::write(
        &script,
        format!("{program}\nimport json\nprint(json.dumps(probe()))\n"),
    )
    .unwrap();
    let result = host
        .sandboxed
        .bash(&format!("{} {}", python(), script.display()));
    serde_json::from_str(&stdout(&result)).unwrap()
}

/// Runs `program` with Python Code Mode and returns `probe()`.
fn code_mode_probe(host: &mut Host, program: &str) -> Value {
    let run = host.sandboxed.python(&format!("{program}\nreturn probe()"));
    assert_eq!(run["isError"], false, "{run}");
    run["value"]["result"].clone()
}

/// A stream and a datagram UNIX socket of the host, outside any writable root.
struct HostSockets {
    _dir: TempDir,
    stream: UnixListener,
    stream_path: PathBuf,
    datagram: UnixDatagram,
    datagram_path: PathBuf,
}

impl HostSockets {
    fn open() -> HostSockets {
        let dir = tempfile::tempdir().unwrap();
        let stream_path = dir.path().join("x.sock");
        let datagram_path = dir.path().join("d.sock");
        let stream = UnixListener::bind(&stream_path).unwrap();
        stream.set_nonblocking(true).unwrap();
        let datagram = UnixDatagram::bind(&datagram_path).unwrap();
        datagram.set_nonblocking(true).unwrap();
        HostSockets {
            _dir: dir,
            stream,
            stream_path,
            datagram,
            datagram_path,
        }
    }

    /// Whether a connection or a datagram arrived (both are queued before the sender's
    /// call returns, so nothing needs waiting for).
    fn was_reached(&self) -> bool {
        let accepted = match self.stream.accept() {
            Ok(_) => true,
            Err(error) if error.kind() == ErrorKind::WouldBlock => false,
            Err(error) => panic!("accept failed: {error}"),
        };
        let received = match self.datagram.recv(&mut [0; 64]) {
            Ok(_) => true,
            Err(error) if error.kind() == ErrorKind::WouldBlock => false,
            Err(error) => panic!("recv failed: {error}"),
        };
        accepted || received
    }

    /// A probe connecting and sending to both, and round-tripping through a socketpair
    /// read by a thread (threads start through `clone3`'s fallback).
    fn probe(&self) -> String {
        format!(
            r#"import socket, threading
STREAM = {stream:?}
DATAGRAM = {datagram:?}
def attempt(action):
    try:
        return action()
    except OSError as error:
        return type(error).__name__
def stream():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(STREAM)
    s.sendall(b"hello-from-sandbox")
    s.close()
    return "ok"
def datagram():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.sendto(b"hello-from-sandbox", DATAGRAM)
    s.close()
    return "ok"
def pair():
    a, b = socket.socketpair()
    got = []
    reader = threading.Thread(target=lambda: got.append(b.recv(16)))
    reader.start()
    a.sendall(b"ping")
    reader.join(30)
    return got[0].decode()
def probe():
    return {{ "stream": attempt(stream), "datagram": attempt(datagram), "pair": attempt(pair) }}"#,
            stream = self.stream_path.display().to_string(),
            datagram = self.datagram_path.display().to_string(),
        )
    }
}

fn unix_sockets_are_unreachable(fallback: bool) {
    let sockets = HostSockets::open();
    let mut host = start(fallback);
    let refused = json!({ "stream": "PermissionError", "datagram": "PermissionError",
                          "pair": "ping" });
    assert_eq!(bash_probe(&mut host, &sockets.probe()), refused);
    assert!(!sockets.was_reached(), "bash reached the host's socket");
    assert_eq!(code_mode_probe(&mut host, &sockets.probe()), refused);
    assert!(!sockets.was_reached(), "Python reached the host's socket");
}

#[test]
fn a_unix_socket_of_the_host_is_unreachable_in_the_namespace_mode() {
    unix_sockets_are_unreachable(false);
}

#[test]
fn a_unix_socket_of_the_host_is_unreachable_in_the_fallback() {
    unix_sockets_are_unreachable(true);
}

/// A probe of the kernel interfaces, with the system call numbers of this architecture.
fn kernel_probe(key: &str) -> String {
    format!(
        r#"import ctypes, errno, os, socket, subprocess, threading
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(nr, *args):
    result = libc.syscall(ctypes.c_long(nr), *args)
    return "ok" if result >= 0 else errno.errorcode[ctypes.get_errno()]
def make(family, kind, protocol):
    try:
        socket.socket(family, kind, protocol).close()
        return "ok"
    except OSError as error:
        return errno.errorcode[error.errno]
def add_key():
    key = libc.syscall(ctypes.c_long({add_key}), b"user", {key:?}.encode(), b"v", 1, -4)
    if key < 0:
        return errno.errorcode[ctypes.get_errno()]
    libc.syscall(ctypes.c_long({keyctl}), 21, key)  # KEYCTL_INVALIDATE: leave no key behind
    return "ok"
def threads():
    done = []
    thread = threading.Thread(target=lambda: done.append(1))
    thread.start()
    thread.join(30)
    return "ok" if done and subprocess.run(["true"]).returncode == 0 else "failed"
def probe():
    sibling = subprocess.Popen(["sleep", "60"])
    try:
        ptrace = call({ptrace}, 16, sibling.pid, None, None)
        vm_read = call({vm_read}, sibling.pid, None, 0, None, 0, 0)
    finally:
        sibling.kill()
        sibling.wait()
    return {{
        "addKey": add_key(),
        "keyctl": call({keyctl}, 0, -4, 0),
        "ptrace": ptrace,
        "processVmReadv": vm_read,
        "bpf": call({bpf}, 5, None, 0),
        "perfEventOpen": call({perf}, None, 0, -1, -1, 0),
        "userfaultfd": call({userfaultfd}, 0),
        "ioUring": call({io_uring}, 1, None),
        "unshareUser": subprocess.run(["unshare", "-U", "true"], stderr=subprocess.DEVNULL).returncode,
        "vsock": make(40, socket.SOCK_STREAM, 0),
        "packet": make(17, socket.SOCK_RAW, 0),
        "uevent": make(16, socket.SOCK_DGRAM, 15),
        "route": make(16, socket.SOCK_RAW, 0),
        "threads": threads(),
    }}"#,
        ptrace = libc::SYS_ptrace,
        vm_read = libc::SYS_process_vm_readv,
        add_key = libc::SYS_add_key,
        keyctl = libc::SYS_keyctl,
        bpf = libc::SYS_bpf,
        perf = libc::SYS_perf_event_open,
        userfaultfd = libc::SYS_userfaultfd,
        io_uring = libc::SYS_io_uring_setup,
    )
}

fn kernel_interfaces_are_refused(fallback: bool) {
    let key = format!("dsh-tools-seccomp-{}-{fallback}", std::process::id());
    let mut host = start(fallback);
    let probed = bash_probe(&mut host, &kernel_probe(&key));
    let route = if fallback { "EPERM" } else { "ok" };
    assert_eq!(
        probed,
        json!({ "addKey": "EPERM", "keyctl": "EPERM", "ptrace": "EPERM",
                "processVmReadv": "EPERM", "bpf": "EPERM", "perfEventOpen": "EPERM",
                "userfaultfd": "EPERM", "ioUring": "EPERM", "unshareUser": 1,
                "vsock": "EPERM", "packet": "EPERM", "uevent": "EPERM", "route": route,
                "threads": "ok" })
    );
    let keys = std::fs::read_to_string("/proc/keys").unwrap();
    assert!(!keys.contains(&key), "a key reached the host: {keys}");
    let strace = host.sandboxed.bash("strace -f true");
    assert_ne!(strace["value"]["exitCode"], 0, "{strace}");
    if !fallback {
        // Route netlink still answers: the namespace's loopback is listed.
        let addresses = stdout(&host.sandboxed.bash("ip -o link show"));
        assert!(addresses.contains(": lo:"), "{addresses}");
    }
}

#[test]
fn keyrings_ptrace_and_kernel_interfaces_are_refused_in_the_namespace_mode() {
    kernel_interfaces_are_refused(false);
}

#[test]
fn keyrings_ptrace_and_kernel_interfaces_are_refused_in_the_fallback() {
    kernel_interfaces_are_refused(true);
}

/// A SysV shared memory segment of the test (the host side), removed on drop.
struct Segment(i32);

impl Segment {
    const MARKER: &'static [u8] = b"host-segment";

    fn create() -> Segment {
        // SAFETY: plain system calls on a fresh private segment; the attached page is
        // written within its 4096 bytes and detached before returning.
        unsafe {
            let id = libc::shmget(libc::IPC_PRIVATE, 4096, libc::IPC_CREAT | 0o600);
            assert!(id >= 0, "shmget: {}", std::io::Error::last_os_error());
            let address = libc::shmat(id, std::ptr::null(), 0);
            assert_ne!(address as isize, -1);
            std::ptr::copy_nonoverlapping(
                Self::MARKER.as_ptr(),
                address.cast(),
                Self::MARKER.len(),
            );
            libc::shmdt(address);
            Segment(id)
        }
    }

    /// Whether the segment still exists and holds the marker.
    fn intact(&self) -> bool {
        // SAFETY: as in `create`; the read stays within the segment.
        unsafe {
            let address = libc::shmat(self.0, std::ptr::null(), libc::SHM_RDONLY);
            if address as isize == -1 {
                return false;
            }
            let held = std::slice::from_raw_parts(address.cast::<u8>(), Self::MARKER.len())
                == Self::MARKER;
            libc::shmdt(address);
            held
        }
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        // SAFETY: IPC_RMID takes no buffer.
        unsafe { libc::shmctl(self.0, libc::IPC_RMID, std::ptr::null_mut()) };
    }
}

#[test]
fn in_the_fallback_sysv_ipc_of_the_host_is_out_of_reach() {
    let segment = Segment::create();
    let mut host = start(true);
    let program = format!(
        r#"import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
def failure(result):
    return "ok" if result not in (-1, None, 2**64 - 1) else errno.errorcode[ctypes.get_errno()]
def created(result, remove):
    if result >= 0:
        remove(result, 0, None)  # IPC_RMID: leave nothing behind on the host
    return failure(result)
def probe():
    return {{
        "attach": failure(libc.shmat({id}, None, 0)),
        "create": created(libc.shmget(0, 4096, 0o1600), libc.shmctl),
        "queue": created(libc.msgget(0, 0o1600), libc.msgctl),
        "remove": failure(libc.shmctl({id}, 0, None)),
    }}"#,
        id = segment.0
    );
    assert_eq!(
        bash_probe(&mut host, &program),
        json!({ "attach": "EPERM", "remove": "EPERM", "create": "EPERM", "queue": "EPERM" })
    );
    assert!(
        segment.intact(),
        "the host's segment was removed or overwritten"
    );
    // A segment made anyway is removed again, so a failing run leaves nothing behind.
    let ipcmk = host
        .sandboxed
        .bash("made=$(ipcmk -M 4096) || exit 7; ipcrm -m \"${made##* }\"");
    assert_eq!(ipcmk["value"]["exitCode"], 7, "{ipcmk}");
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[test]
fn in_the_fallback_no_set_id_bit_can_be_set_inside_or_outside() {
    let mut host = start(true);
    let inside = host.sandboxed.inside("tool");
    let outside = host.sandboxed.outside("victim");
    for file in [&inside, &outside] {
        std::fs::write(file, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let command = format!(
        "chmod u+s tool; echo setuid=$?; chmod g+s tool; echo setgid=$?; chmod +x tool; \
         echo exec=$?; chmod 4777 {outside} 2>/dev/null; echo outside=$?; \
         {python} -c 'import os; os.chmod(\"{outside}\", 0o2755)' 2>/dev/null; echo python=$?; \
         {python} -c 'import os; os.open(\"made\", os.O_CREAT | os.O_WRONLY, 0o4755)' \
         2>/dev/null; echo create=$?; echo plain > plain; echo plain=$?",
        outside = outside.display(),
        python = python(),
    );
    let result = host.sandboxed.bash(&command);
    assert_eq!(
        stdout(&result),
        "setuid=1\nsetgid=1\nexec=0\noutside=1\npython=1\ncreate=1\nplain=0\n",
        "{result}"
    );
    assert!(
        !host.sandboxed.inside("made").exists(),
        "a set-id file was created"
    );
    assert_eq!(mode(&inside), 0o755);
    assert_eq!(mode(&outside) & 0o6000, 0, "a set-id bit was set outside");
}

/// i386's `socket(AF_UNIX, SOCK_STREAM, 0)` through `int 0x80`, from a 64-bit process (the
/// IA-32 emulation this machine's kernel has): another ABI, with other call numbers.
#[cfg(target_arch = "x86_64")]
const I386_SOCKET: &str = r#"import ctypes, mmap
# push rbx; mov eax, 359; mov ebx, 1; mov ecx, 1; xor edx, edx; int 0x80; pop rbx; ret
code = bytes.fromhex("53b867010000bb01000000b90100000031d2cd805bc3")
page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
page.write(code)
call = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(page)))
print("fd", call())
"#;

#[cfg(target_arch = "x86_64")]
#[test]
fn a_call_through_another_abi_kills_the_process_in_both_modes() {
    for fallback in [false, true] {
        let mut host = start(fallback);
        std::fs::write(host.sandboxed.inside("i386.py"), I386_SOCKET).unwrap();
        let result = host
            .sandboxed
            .bash(&format!("{} i386.py; echo status=$?", python()));
        // 128 + SIGSYS: killed by the filter before the call ran.
        assert_eq!(stdout(&result), "status=159\n", "{result}");
    }
}

#[test]
fn a_kernel_without_seccomp_makes_each_family_refuse_even_with_namespaces() {
    let hidden = [("DSH_TOOLS_SANDBOX_SIMULATE", "no-seccomp")];
    let mut sandboxed = Sandboxed::start(json!({ "sandbox": { "network": true } }), &hidden, false);
    let refuses = |family: &str, field: &str| {
        format!(
            "{family} is unavailable: the sandbox cannot be applied: this kernel lacks seccomp \
             filters (for the system call filter); set {field}.mode = \"off\" to run it \
             unsandboxed"
        )
    };
    let bash_refuses = refuses("bash", "builtins.bash.sandbox");
    assert_eq!(sandboxed.report()["kernel"]["userNamespaces"], true);
    assert_eq!(sandboxed.report()["bash"]["unavailable"], bash_refuses);
    let python_refuses = refuses("Python Code Mode", "codeRuntime.sandbox");
    assert_eq!(sandboxed.report()["python"]["unavailable"], python_refuses);
    let escape = sandboxed.outside("never.txt");
    let bash = sandboxed.bash(&format!("echo x > {}", escape.display()));
    assert_eq!(bash["error"]["message"], bash_refuses, "{bash}");
    assert!(!escape.exists());
}
