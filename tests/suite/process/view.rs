//! The private filesystem view and the own IPC and UTS namespaces of namespace mode, through
//! the real binary (as root here, so only the sandbox can stop what is tried): metadata
//! writes outside the writable roots (chmod with set-id and sticky bits, utimes, xattrs)
//! refused while the workspace and scratch dir stay writable, the host's `/tmp` and its
//! UNIX sockets out of sight save one listed in `allowUnixSockets`, SysV segments of the
//! host out of reach and a run's own gone with it, the hostname the child's own, the
//! `denyRead` defaults and a user's entries masked (inside a writable root too), and what
//! the seccomp fallback reports and refuses.

use crate::support::sandbox::{Sandboxed, stdout, visible_tempdir};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Attempts each `(name, expression)` in Python and returns `{name: "ok" | errno}`.
fn attempts(checks: &[(&str, String)]) -> String {
    let mut code = String::from(
        "import os, socket, ctypes\nresults = {}\ndef attempt(name, action):\n    try:\n        \
         action()\n        results[name] = 'ok'\n    except OSError as error:\n        \
         results[name] = error.errno\n",
    );
    for (name, expression) in checks {
        code.push_str(&format!("attempt({name:?}, lambda: {expression})\n"));
    }
    code
}

fn python_result(run: &Value) -> Value {
    assert_eq!(run["isError"], false, "{run}");
    run["value"]["result"].clone()
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

fn xattrs(path: &Path) -> String {
    let output = Command::new("python3")
        .args(["-c", "import os, sys; print(os.listxattr(sys.argv[1]))"])
        .arg(path)
        .output()
        .unwrap();
    String::from_utf8(output.stdout).unwrap()
}

/// A file (0644) and a directory (0755) outside the workspace, in a visible directory.
fn targets(sandboxed: &Sandboxed, tag: &str) -> (PathBuf, PathBuf) {
    let (file, dir) = (
        sandboxed.outside(&format!("{tag}.txt")),
        sandboxed.outside(&format!("{tag}.d")),
    );
    std::fs::write(&file, "x").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    (file, dir)
}

fn assert_untouched(file: &Path, dir: &Path, mtime: i64) {
    assert_eq!(mode(file), 0o644, "the file's mode changed");
    assert_eq!(mode(dir), 0o755, "the directory's mode changed");
    assert_eq!(std::fs::metadata(file).unwrap().mtime(), mtime, "mtime");
    assert_eq!(xattrs(file), "[]\n", "an xattr was set");
}

#[test]
fn metadata_writes_outside_fail_from_bash_and_python_while_the_workspace_stays_writable() {
    let mut sandboxed = Sandboxed::with(json!({}));
    assert_eq!(sandboxed.report()["bash"]["filesystem"], "view");
    assert_eq!(sandboxed.report()["python"]["filesystem"], "view");
    let (file, dir) = targets(&sandboxed, "bash");
    let old = std::fs::metadata(&file).unwrap().mtime() - 1000;
    Command::new("touch")
        .args(["-d", &format!("@{old}")])
        .arg(&file)
        .status()
        .unwrap();
    let script = format!(
        "chmod 4777 {f} 2>&1; echo chmod=$?; chmod 1777 {d} 2>&1; echo sticky=$?; \
         touch {f} 2>&1; echo touch=$?; \
         python3 -c 'import os,sys; os.setxattr(sys.argv[1], \"user.x\", b\"1\")' {f} 2>/dev/null; \
         echo xattr=$?; \
         echo 'echo ran' > mine.sh && chmod +x mine.sh && ./mine.sh; \
         echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\"",
        f = file.display(),
        d = dir.display()
    );
    let out = stdout(&sandboxed.bash(&script));
    for step in ["chmod=1", "sticky=1", "touch=1", "xattr=1"] {
        assert!(out.contains(step), "{step} missing: {out}");
    }
    assert!(out.contains("Read-only file system"), "{out}");
    assert!(out.ends_with("ran\nt\n"), "{out}");
    assert_eq!(mode(&sandboxed.inside("mine.sh")) & 0o111, 0o111);
    assert_untouched(&file, &dir, old);

    let (file, dir) = targets(&sandboxed, "python");
    let old = std::fs::metadata(&file).unwrap().mtime();
    let (f, d) = (file.display(), dir.display());
    let code = attempts(&[
        ("chmod", format!("os.chmod({f:?}, 0o4777)")),
        ("sticky", format!("os.chmod({d:?}, 0o1777)")),
        ("utime", format!("os.utime({f:?}, (0, 0))")),
        ("xattr", format!("os.setxattr({f:?}, 'user.x', b'1')")),
        ("scratch", "open('s.txt', 'w').write('x')".to_owned()),
        ("scratchChmod", "os.chmod('s.txt', 0o755)".to_owned()),
    ]) + "return results";
    let erofs = json!(libc::EROFS);
    assert_eq!(
        python_result(&sandboxed.python(&code)),
        json!({ "chmod": erofs, "sticky": erofs, "utime": erofs, "xattr": erofs,
                "scratch": "ok", "scratchChmod": "ok" })
    );
    assert_untouched(&file, &dir, old);
}

/// A UNIX socket listener of the host that answers each connection once and records what
/// it received; [`SocketHost::finish`] returns the records.
struct SocketHost {
    path: PathBuf,
    thread: std::thread::JoinHandle<Vec<String>>,
}

const DONE: &str = "test-done";

impl SocketHost {
    fn open(path: PathBuf) -> SocketHost {
        let listener = UnixListener::bind(&path).unwrap();
        let thread = std::thread::spawn(move || {
            let mut received = Vec::new();
            for stream in listener.incoming() {
                let mut stream = stream.unwrap();
                let mut text = String::new();
                stream.read_to_string(&mut text).unwrap();
                if text == DONE {
                    break;
                }
                let _ = stream.write_all(b"reply-from-host");
                received.push(text);
            }
            received
        });
        SocketHost { path, thread }
    }

    fn finish(self) -> Vec<String> {
        let mut stream = std::os::unix::net::UnixStream::connect(&self.path).unwrap();
        stream.write_all(DONE.as_bytes()).unwrap();
        drop(stream);
        self.thread.join().unwrap()
    }
}

/// Python that sends `hello-from-sandbox` to the socket at `path` and keeps the reply.
fn talk(path: &Path) -> String {
    format!(
        "s = socket.socket(socket.AF_UNIX)\ns.connect({path:?})\ns.sendall(b'hello-from-sandbox')\n\
         s.shutdown(socket.SHUT_WR)\nreply = s.recv(100).decode()\n",
        path = path.display().to_string()
    )
}

/// Writes `code` as `name` in the workspace, for `python3 name` from `bash`.
fn script(sandboxed: &Sandboxed, name: &str, code: &str) {
    std::fs::write(sandboxed.inside(name), code).unwrap();
}

#[test]
fn the_host_tmp_and_its_sockets_are_out_of_sight_save_a_listed_socket() {
    // Both under the host's /tmp, the classic place of agent and D-Bus sockets.
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("host-file.txt");
    std::fs::write(&file, "host").unwrap();
    let (listed, unlisted) = (tmp.path().join("listed.sock"), tmp.path().join("x.sock"));
    let (listed_host, unlisted_host) = (
        SocketHost::open(listed.clone()),
        SocketHost::open(unlisted.clone()),
    );
    let sockets = json!({ "allowUnixSockets": [listed.display().to_string()] });
    let mut sandboxed = Sandboxed::with(sockets);
    let canonical = listed.canonicalize().unwrap().display().to_string();
    assert_eq!(
        sandboxed.report()["bash"]["allowUnixSockets"],
        json!([canonical])
    );
    script(
        &sandboxed,
        "unlisted.py",
        &format!("import socket\n{}", talk(&unlisted)),
    );
    let listed_code = format!("import socket\n{}print(reply)\n", talk(&listed));
    script(&sandboxed, "listed.py", &listed_code);
    let command = format!(
        "test -e {file} && echo visible; python3 unlisted.py 2>/dev/null || echo unlisted-refused; \
         python3 listed.py",
        file = file.display(),
    );
    let out = stdout(&sandboxed.bash(&command));
    assert_eq!(out, "unlisted-refused\nreply-from-host\n");
    let code = attempts(&[(
        "unlisted",
        format!("exec({:?}, {{'socket': socket}})", talk(&unlisted)),
    )]) + &talk(&listed)
        + &format!(
            "\nresults['file'] = os.path.exists({:?})\n",
            file.display().to_string()
        )
        + "results['listed'] = reply\nreturn results";
    assert_eq!(
        python_result(&sandboxed.python(&code)),
        json!({ "unlisted": libc::ENOENT, "listed": "reply-from-host", "file": false })
    );
    assert_eq!(
        listed_host.finish(),
        vec![
            "hello-from-sandbox".to_owned(),
            "hello-from-sandbox".to_owned()
        ]
    );
    assert!(
        unlisted_host.finish().is_empty(),
        "the unlisted socket was reached"
    );
}

#[test]
fn a_listed_socket_must_exist_and_the_seccomp_fallback_refuses_the_key() {
    let missing = visible_tempdir().path().join("gone.sock");
    let sockets = json!({ "allowUnixSockets": [missing.display().to_string()] });
    let sandboxed = Sandboxed::with(sockets.clone());
    let message = sandboxed.report()["bash"]["unavailable"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        message.starts_with("bash is unavailable: allowUnixSockets: cannot use \"")
            && message.contains("gone.sock"),
        "{message}"
    );
    let fallback = [("DSH_TOOLS_SANDBOX_SIMULATE", "no-userns")];
    let plain = Sandboxed::start(json!({}), &fallback, false);
    assert_eq!(plain.report()["bash"]["filesystem"], "landlock");
    assert_eq!(plain.report()["bash"].get("unavailable"), None);
    let mut refused = Sandboxed::start(json!({ "sandbox": sockets }), &fallback, false);
    let message = refused.report()["bash"]["unavailable"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        message,
        "bash is unavailable: builtins.bash.sandbox.allowUnixSockets needs the private \
         filesystem view, and this kernel refuses unprivileged user namespaces (the seccomp \
         fallback refuses every UNIX socket); empty builtins.bash.sandbox.allowUnixSockets, or \
         set builtins.bash.sandbox.mode = \"off\" to run it unsandboxed"
    );
    assert_eq!(refused.bash("true")["error"]["message"], message);
}

/// `ipcmk -M 4096` on the host: the new segment's id.
fn host_segment() -> String {
    let output = Command::new("ipcmk").args(["-M", "4096"]).output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    text.trim().rsplit(' ').next().unwrap().to_owned()
}

fn host_has_segment(id: &str) -> bool {
    Command::new("ipcs")
        .args(["-m", "-i", id])
        .output()
        .unwrap()
        .status
        .success()
}

const SYSV: &str = "libc = ctypes.CDLL(None, use_errno=True)\n\
     libc.shmat.restype = ctypes.c_void_p\n\
     def check(result):\n    if result in (-1, ctypes.c_void_p(-1).value):\n        \
     raise OSError(ctypes.get_errno(), 'sysv')\n";

#[test]
fn sysv_segments_of_the_host_are_out_of_reach_and_a_runs_own_die_with_it() {
    let id = host_segment();
    assert!(host_has_segment(&id));
    let key = 0x5eed_0038;
    let mut sandboxed = Sandboxed::with(json!({}));
    let code = "import ctypes\n".to_owned()
        + SYSV
        + &attempts(&[
            ("attach", format!("check(libc.shmat({id}, None, 0))")),
            ("remove", format!("check(libc.shmctl({id}, 0, None))")),
            ("create", format!("check(libc.shmget({key}, 4096, 0o1600))")),
        ]);
    let python = code.clone() + "return results";
    // A Python run is a fork server's child: its IPC namespace is the server's, shared with
    // later runs, so SysV IPC is refused outright (`fork_server::ipc_objects_…`).
    let eperm = json!(libc::EPERM);
    assert_eq!(
        python_result(&sandboxed.python(&python)),
        json!({ "attach": eperm, "remove": eperm, "create": eperm })
    );
    script(&sandboxed, "sysv.py", &(code + "print(results)\n"));
    let command =
        format!("ipcs -m | grep -c ' {id} ' ; python3 sysv.py; ipcs -m | grep -ci 0x5eed0038");
    let out = stdout(&sandboxed.bash(&command));
    assert_eq!(
        out, "0\n{'attach': 22, 'remove': 22, 'create': 'ok'}\n1\n",
        "{out}"
    );
    assert!(host_has_segment(&id), "the host's segment was removed");
    let listed = Command::new("ipcs").arg("-m").output().unwrap();
    let listed = String::from_utf8(listed.stdout).unwrap();
    assert!(
        !listed.contains("0x5eed0038"),
        "a run's segment outlived it"
    );
    Command::new("ipcrm").args(["-m", &id]).status().unwrap();
}

#[test]
fn the_hostname_is_the_childs_own() {
    let before = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let mut sandboxed = Sandboxed::with(json!({}));
    let out = stdout(&sandboxed.bash("hostname sandboxed-38 && hostname"));
    assert_eq!(out, "sandboxed-38\n");
    let after = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    assert_eq!(after, before);
}

#[test]
fn deny_read_masks_the_defaults_and_the_users_entries_inside_a_writable_root_too() {
    let home = visible_tempdir();
    let home_path = home.path().canonicalize().unwrap();
    let defaults = [
        ".ssh/id_rsa",
        ".gnupg/private-keys-v1.d/k.key",
        ".aws/credentials",
        ".azure/accessTokens.json",
        ".config/gcloud/credentials.db",
        ".kube/config",
        ".docker/config.json",
        ".netrc",
        ".npmrc",
        ".pypirc",
        ".git-credentials",
        ".config/gh/hosts.yml",
    ];
    let user = ["private/key.txt", "vault/token"];
    for (n, relative) in defaults.iter().chain(&user).enumerate() {
        let path = home_path.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("secret-{n}")).unwrap();
    }
    for normal in [".ssh-notes.txt", ".docker/other.json", ".config/tool.toml"] {
        std::fs::write(home_path.join(normal), "public").unwrap();
    }
    let home_env = home_path.display().to_string();
    let mut sandboxed = Sandboxed::start_in(
        |root, _| {
            std::fs::write(root.join(".env"), "secret-env").unwrap();
            json!({ "sandbox": { "denyRead": [
                "~/private/key.txt", format!("{home_env}/vault"), root.join(".env")
            ] } })
        },
        &[("HOME", &home_env)],
        false,
    );
    let deny = sandboxed.report()["bash"]["denyRead"].clone();
    assert_eq!(deny[0], format!("{home_env}/.ssh"), "{deny}");
    let readable: Vec<String> = [".ssh-notes.txt", ".docker/other.json", ".config/tool.toml"]
        .iter()
        .map(|p| format!("{home_env}/{p}"))
        .collect();
    let env_file = sandboxed.inside(".env").display().to_string();
    let secrets: Vec<String> = defaults
        .iter()
        .chain(&user)
        .map(|p| format!("{home_env}/{p}"))
        .chain([env_file])
        .collect();
    let script = format!(
        "cat {secrets} 2>/dev/null; echo; cat {readable}; echo x >> .env; echo appended=$?; \
         cat .env; echo; echo fine > other && cat other",
        secrets = secrets.join(" "),
        readable = readable.join(" ")
    );
    let out = stdout(&sandboxed.bash(&script));
    assert!(!out.contains("secret"), "a secret was read: {out}");
    assert!(out.starts_with("\npublicpublicpublic"), "{out}");
    assert!(out.ends_with("\nfine\n"), "{out}");
    let mut code = attempts(
        &secrets
            .iter()
            .map(|p| (p.as_str(), format!("open({p:?}).read()")))
            .collect::<Vec<_>>(),
    );
    code.push_str("leaked = [k for k, v in results.items() if v == 'ok']\n");
    code.push_str(&format!("return [leaked, open({:?}).read()]", readable[0]));
    let result = python_result(&sandboxed.python(&code));
    assert_eq!(result, json!([[], "public"]), "{result}");
    assert_eq!(
        std::fs::read_to_string(sandboxed.inside(".env")).unwrap(),
        "secret-env",
        "the mask over a file of the workspace let a write through"
    );
}

#[test]
fn the_seccomp_fallback_leaves_deny_read_out_of_the_landlock_read_rules() {
    let home = visible_tempdir();
    let home_path = home.path().canonicalize().unwrap();
    std::fs::create_dir_all(home_path.join(".ssh")).unwrap();
    std::fs::write(home_path.join(".ssh/id_ed25519"), "secret-key").unwrap();
    std::fs::write(home_path.join(".netrc"), "secret-netrc").unwrap();
    std::fs::write(home_path.join("notes.txt"), "public").unwrap();
    let home_env = home_path.display().to_string();
    let env = [
        ("DSH_TOOLS_SANDBOX_SIMULATE", "no-userns"),
        ("HOME", home_env.as_str()),
    ];
    let mut sandboxed = Sandboxed::start(json!({}), &env, false);
    assert_eq!(sandboxed.report()["bash"]["filesystem"], "landlock");
    let out = stdout(&sandboxed.bash(&format!(
        "cat {h}/.ssh/id_ed25519 {h}/.netrc 2>&1; cat {h}/notes.txt; echo; \
         grep -c NoNewPrivs /proc/self/status",
        h = home_env
    )));
    assert!(!out.contains("secret"), "{out}");
    // Its own /proc (mounted after the ruleset was built) stays readable.
    assert!(
        out.contains("Permission denied") && out.ends_with("public\n1\n"),
        "{out}"
    );
    let code = format!(
        "try:\n    open({key:?}).read()\n    leaked = True\nexcept OSError:\n    leaked = False\n\
         return [leaked, open({notes:?}).read()]",
        key = format!("{home_env}/.ssh/id_ed25519"),
        notes = format!("{home_env}/notes.txt"),
    );
    assert_eq!(
        python_result(&sandboxed.python(&code)),
        json!([false, "public"])
    );
}
