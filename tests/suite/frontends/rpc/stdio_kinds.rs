//! The host serves whatever standard input and output its front end hands it: pipes (every
//! other test), one socket for both (what libuv-based front ends such as Node give a child),
//! and a regular file as input. Pipes and sockets are polled by the host's event loop,
//! non-blocking; the flags it changed are restored before it exits.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};

use nix::fcntl::{FcntlArg, OFlag, fcntl};

fn line(message: &Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(message).unwrap();
    bytes.push(b'\n');
    bytes
}

fn initialize(config: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": "init", "method": "initialize",
        "params": { "protocolVersion": "1", "config": config } })
}

fn run_code(id: &str, code: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/execute",
        "params": { "callId": id, "name": "run_code",
            "arguments": { "code": code, "description": "stdio kinds" } } })
}

/// Reads messages until the response with `id`, or `None` at EOF.
fn response(reader: &mut impl BufRead, id: &str) -> Option<Value> {
    loop {
        let mut text = String::new();
        if reader.read_line(&mut text).unwrap() == 0 {
            return None;
        }
        let message: Value = serde_json::from_str(&text).unwrap();
        if message["id"] == id {
            return Some(message);
        }
    }
}

fn non_blocking(fd: impl AsFd) -> bool {
    OFlag::from_bits_truncate(fcntl(fd, FcntlArg::F_GETFL).unwrap()).contains(OFlag::O_NONBLOCK)
}

#[test]
fn one_socket_for_both_directions_serves_code_mode_and_gets_its_flags_back() {
    let (ours, theirs) = UnixStream::pair().unwrap();
    let kept = theirs.try_clone().unwrap();
    assert!(!non_blocking(&kept));
    let their_input: OwnedFd = theirs.try_clone().unwrap().into();
    let mut child = Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
        .args(["serve", "--framing", "ndjson"])
        .stdin(Stdio::from(their_input))
        .stdout(Stdio::from(OwnedFd::from(theirs)))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut writer = ours.try_clone().unwrap();
    let mut reader = BufReader::new(ours);
    writer
        .write_all(&line(&initialize(json!({ "tools": { "mode": "code" } }))))
        .unwrap();
    let init = response(&mut reader, "init").expect("no initialize answer");
    assert!(init.get("result").is_some(), "{init}");
    // Several runs in a row: each request is read and each answer written by the event loop.
    for index in 0..5 {
        let id = format!("run-{index}");
        writer
            .write_all(&line(&run_code(&id, &format!("return {index} * 2"))))
            .unwrap();
        let answer = response(&mut reader, &id).expect("no run answer");
        assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
        assert_eq!(
            answer["result"]["value"]["result"],
            json!(index * 2),
            "{answer}"
        );
    }
    // While it serves, the host's socket is non-blocking (the description is shared).
    assert!(non_blocking(&kept));
    // EOF on its input ends the host (the test's clone keeps the socket itself open).
    writer.shutdown(std::net::Shutdown::Write).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert!(
        !non_blocking(&kept),
        "the host left its socket non-blocking"
    );
}

#[test]
fn a_regular_file_as_input_is_read_to_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let requests = dir.path().join("requests.ndjson");
    let mut bytes = line(&initialize(json!({ "tools": { "mode": "code" } })));
    bytes.extend(line(&run_code("file-run", "return 'from a file'")));
    // `shutdown` before EOF: the host lets the run finish instead of aborting it.
    bytes.extend(line(
        &json!({ "jsonrpc": "2.0", "id": "bye", "method": "shutdown" }),
    ));
    std::fs::write(&requests, bytes).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_dsh-tools"))
        .args(["serve", "--framing", "ndjson"])
        .stdin(std::fs::File::open(&requests).unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let init = response(&mut reader, "init").expect("no initialize answer");
    assert!(init.get("result").is_some(), "{init}");
    // EOF follows at once: the host still answers what it read, then exits.
    let answer = response(&mut reader, "file-run");
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let answer = answer.expect("the run was not answered before exit");
    assert_eq!(
        answer["result"]["value"]["result"],
        json!("from a file"),
        "{answer}"
    );
}
