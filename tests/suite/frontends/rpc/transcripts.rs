//! Runs every `tests/transcripts/*.jsonl` conversation against the real binary, once per
//! framing (`lsp`, `ndjson`, and `auto` with a client speaking each).
//!
//! Transcript format, one item per line:
//! - `> TEXT`: the client sends TEXT, byte for byte, as one frame (so it may be malformed);
//! - `< JSON`: the next message from the host must equal JSON as a whole value, where the
//!   string `"<any>"` matches any value in its place (tokens, versions, big sub-objects);
//! - `<~ JSON`: consecutive `<~` lines form an unordered group: the next that many messages
//!   must match them in some order (for messages whose relative order the host does not
//!   guarantee, e.g. the dispatches of calls running in parallel);
//! - `= CODE`: optional: stdin is closed here; only `<` / `<~` lines (what the host sends
//!   after EOF) may follow; then the host must send nothing more, close stdout and exit with
//!   CODE. Without it the runner closes stdin after the last line and expects code 0;
//! - `#` starts a comment; blank lines are ignored.
//!
//! Transcripts must be framing-neutral: every `>` line is one whole message.

#![allow(clippy::unwrap_used)]

use crate::support::wire as support;

use serde_json::Value;
use std::path::{Path, PathBuf};
use support::{Framing, Host, Next, WATCHDOG};

/// The string that matches any value.
const ANY: &str = "<any>";

/// (name, arguments, the framing the client speaks)
const LAUNCHES: [(&str, &[&str], Framing); 4] = [
    ("lsp", &["serve", "--framing", "lsp"], Framing::Lsp),
    ("ndjson", &["serve", "--framing", "ndjson"], Framing::Ndjson),
    ("auto/lsp", &["serve", "--framing", "auto"], Framing::Lsp),
    (
        "auto/ndjson",
        &["serve", "--framing", "auto"],
        Framing::Ndjson,
    ),
];

/// One transcript line (with its 1-based line number where failures report it).
enum Step {
    Send(String),
    Expect(usize, Value),
    /// An unordered group of consecutive `<~` lines.
    ExpectUnordered(Vec<(usize, Value)>),
    Exit(usize, i32),
}

fn parse(text: &str) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let closed = steps.iter().any(|step| matches!(step, Step::Exit(..)));
        if closed && !line.starts_with('<') {
            return Err(format!("line {number}: only `<` or `<~` may follow `=`"));
        }
        if let Some(json) = line.strip_prefix("<~ ") {
            let expected = (
                number,
                serde_json::from_str(json).map_err(|e| format!("line {number}: {e}"))?,
            );
            match steps.last_mut() {
                Some(Step::ExpectUnordered(group)) => group.push(expected),
                _ => steps.push(Step::ExpectUnordered(vec![expected])),
            }
            continue;
        }
        let step = match line.split_at_checked(2) {
            Some(("> ", text)) => Step::Send(text.to_string()),
            Some(("< ", json)) => Step::Expect(
                number,
                serde_json::from_str(json).map_err(|e| format!("line {number}: {e}"))?,
            ),
            Some(("= ", code)) => Step::Exit(
                number,
                code.trim()
                    .parse()
                    .map_err(|e| format!("line {number}: {e}"))?,
            ),
            _ => {
                return Err(format!(
                    "line {number}: expected `> `, `< `, `<~ `, `= ` or `#`"
                ));
            }
        };
        steps.push(step);
    }
    Ok(steps)
}

/// Where `actual` differs from `expected` (`"<any>"` matching anything), as a JSON path.
fn mismatch(expected: &Value, actual: &Value, path: &str) -> Option<String> {
    match (expected, actual) {
        (Value::String(any), _) if any == ANY => None,
        (Value::Object(expected), Value::Object(actual)) => {
            let keys_differ = expected.len() != actual.len()
                || expected.keys().any(|key| !actual.contains_key(key));
            if keys_differ {
                return Some(path.to_string());
            }
            expected
                .iter()
                .find_map(|(key, value)| mismatch(value, &actual[key], &format!("{path}.{key}")))
        }
        (Value::Array(expected), Value::Array(actual)) => {
            if expected.len() != actual.len() {
                return Some(path.to_string());
            }
            expected
                .iter()
                .zip(actual)
                .enumerate()
                .find_map(|(i, (e, a))| mismatch(e, a, &format!("{path}[{i}]")))
        }
        _ => (expected != actual).then(|| path.to_string()),
    }
}

/// Whether `actual` matches `expected` one to one in some order (groups are small: a
/// depth-first search over assignments).
fn matches_unordered(expected: &[(usize, Value)], actual: &[Value]) -> bool {
    fn assign(expected: &[(usize, Value)], actual: &[Value], used: &mut Vec<bool>) -> bool {
        let Some(((_, first), rest)) = expected.split_first() else {
            return true;
        };
        for i in 0..actual.len() {
            if !used[i] && mismatch(first, &actual[i], "$").is_none() {
                used[i] = true;
                if assign(rest, actual, used) {
                    return true;
                }
                used[i] = false;
            }
        }
        false
    }
    expected.len() == actual.len() && assign(expected, actual, &mut vec![false; actual.len()])
}

fn run(steps: &[Step], args: &[&str], framing: Framing) -> Result<(), String> {
    let mut host = Host::spawn_with(args, framing);
    let mut exit = None;
    for step in steps {
        match step {
            Step::Send(text) => host.send_text(text),
            Step::Expect(line, expected) => match host.read_within(WATCHDOG) {
                Next::Message(actual) => {
                    if let Some(path) = mismatch(expected, &actual, "$") {
                        return Err(format!(
                            "line {line}: differs at {path}\n  expected {expected}\n  actual   {actual}"
                        ));
                    }
                }
                Next::Eof => return Err(format!("line {line}: the host closed stdout")),
                Next::Silent => {
                    return Err(format!("line {line}: nothing within {WATCHDOG:?}"));
                }
            },
            Step::ExpectUnordered(group) => {
                let line = group[0].0;
                let mut actual = Vec::new();
                while actual.len() < group.len() {
                    match host.read_within(WATCHDOG) {
                        Next::Message(message) => actual.push(message),
                        Next::Eof => return Err(format!("line {line}: the host closed stdout")),
                        Next::Silent => {
                            return Err(format!("line {line}: nothing within {WATCHDOG:?}"));
                        }
                    }
                }
                if !matches_unordered(group, &actual) {
                    let actual: Vec<String> = actual.iter().map(Value::to_string).collect();
                    return Err(format!(
                        "line {line}: the unordered group does not match\n  actual   {}",
                        actual.join("\n           ")
                    ));
                }
            }
            Step::Exit(line, code) => {
                host.close_stdin();
                exit = Some((*line, *code));
            }
        }
    }
    let (line, code) = exit.unwrap_or_else(|| {
        host.close_stdin();
        (0, 0)
    });
    match host.read_within(WATCHDOG) {
        Next::Message(extra) => return Err(format!("after the transcript: unexpected {extra}")),
        Next::Eof => {}
        Next::Silent => return Err(format!("stdout still open after {WATCHDOG:?}")),
    }
    let finished = host.finish_all();
    if finished.code != Some(code) {
        return Err(format!(
            "line {line}: exit status {:?}, expected {code}; stderr: {}",
            finished.code, finished.stderr
        ));
    }
    Ok(())
}

fn transcripts() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/transcripts");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_transcript_holds_in_every_framing() {
    let files = transcripts();
    let names: Vec<_> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for required in ["errors.jsonl", "lifecycle.jsonl"] {
        assert!(names.iter().any(|name| name == required), "{names:?}");
    }
    let mut failures = Vec::new();
    for (file, name) in files.iter().zip(&names) {
        let steps = match parse(&std::fs::read_to_string(file).unwrap()) {
            Ok(steps) => steps,
            Err(error) => {
                failures.push(format!("{name}: {error}"));
                continue;
            }
        };
        // The four launches of one transcript run side by side (each has its own host).
        let outcomes: Vec<_> = std::thread::scope(|scope| {
            let runs: Vec<_> = LAUNCHES
                .iter()
                .map(|(launch, args, framing)| {
                    let steps = &steps;
                    scope.spawn(move || (launch, run(steps, args, *framing)))
                })
                .collect();
            runs.into_iter().map(|run| run.join().unwrap()).collect()
        });
        for (launch, outcome) in outcomes {
            if let Err(error) = outcome {
                failures.push(format!("{name} [{launch}] {error}"));
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn only_expectations_may_follow_the_exit_line() {
    assert!(parse("> {}\n= 0\n< {}\n<~ 1\n<~ 2\n# done").is_ok());
    for after in ["> {}", "= 1"] {
        let text = format!("= 0\n{after}");
        assert_eq!(
            parse(&text).err(),
            Some("line 2: only `<` or `<~` may follow `=`".to_string())
        );
    }
}

#[test]
fn the_matcher_compares_whole_values_with_placeholders() {
    let check = |expected: &str, actual: &str, differs_at: Option<&str>| {
        let parse = |text: &str| serde_json::from_str::<Value>(text).unwrap();
        assert_eq!(
            mismatch(&parse(expected), &parse(actual), "$").as_deref(),
            differs_at,
            "{expected} vs {actual}"
        );
    };
    check(r#"{"a":1}"#, r#"{"a":1}"#, None);
    check(r#"{"a":"<any>"}"#, r#"{"a":{"b":[1]}}"#, None);
    check(r#""<any>""#, "null", None);
    check(r#"{"a":1}"#, r#"{"a":1,"b":2}"#, Some("$"));
    check(r#"{"a":1,"b":2}"#, r#"{"a":1}"#, Some("$"));
    check(r#"{"a":"<any>"}"#, r#"{}"#, Some("$"));
    check(r#"{"a":[1,2]}"#, r#"{"a":[1,3]}"#, Some("$.a[1]"));
    check(r#"[1]"#, r#"[1,1]"#, Some("$"));
    check(r#"{"a":"x"}"#, r#"{"a":"<any>"}"#, Some("$.a"));
    check("1", "1.0", Some("$"));
}

#[test]
fn an_unordered_group_matches_in_any_order_one_to_one() {
    let check = |expected: &[&str], actual: &[&str], matches: bool| {
        let parse = |text: &&str| serde_json::from_str::<Value>(text).unwrap();
        let expected: Vec<_> = expected.iter().map(|e| (1, parse(e))).collect();
        let actual: Vec<_> = actual.iter().map(parse).collect();
        assert_eq!(matches_unordered(&expected, &actual), matches, "{actual:?}");
    };
    check(&["1", "2"], &["2", "1"], true);
    check(&["1", "2"], &["1", "2"], true);
    check(&[r#""<any>""#, "1"], &["1", "2"], true);
    check(&["1", "1"], &["1", "2"], false);
    check(&["1"], &["1", "1"], false);
}
