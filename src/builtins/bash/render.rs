//! What the model reads of a `bash` result: the output (with the read-more line of a
//! spilled stream), a status line unless it exited 0, the sandbox's line, and how to go on
//! with a command that runs on as a session.

use super::BashOutput;
use crate::spill::preview::READ_MORE;

/// What the model reads: the output, how to read a spilled stream, then a status line
/// unless the command exited 0, then the sandbox's line when it refused something.
pub fn render(output: &BashOutput) -> String {
    let mut text = render_output(output);
    if let Some(id) = &output.session_id {
        let saved = output
            .output_file
            .as_ref()
            .map(|file| format!(" Everything it prints is saved in {}.", file.path))
            .unwrap_or_default();
        text = format!(
            "{text}\n[Still running as session {id}: bash_output {{\"sessionId\": \"{id}\"}} \
             reads what it prints next (waitMs and until wait for it), bash_write types into \
             it, bash_kill stops it.{saved}]"
        );
    }
    match &output.sandbox {
        Some(line) => format!("{text}\n{line}"),
        None => text,
    }
}

/// The output (with the read-more line of a spilled stream) and its status line.
fn render_output(output: &BashOutput) -> String {
    let mut combined = output.combined();
    if output.stdout_spill.is_some() || output.stderr_spill.is_some() {
        if !combined.ends_with('\n') {
            combined.push('\n');
        }
        combined.push_str(READ_MORE);
    }
    let text = combined.trim_end_matches('\n');
    let status = match (output.exit_code, &output.signal) {
        (Some(0), _) | (None, None) => None,
        (Some(code), _) => Some(format!("Exit code {code}")),
        (None, Some(signal)) => Some(format!("Killed by {signal}")),
    };
    match (text.is_empty(), status) {
        (true, None) => "(no output)".to_owned(),
        (true, Some(status)) => status,
        (false, None) => text.to_owned(),
        (false, Some(status)) => format!("{text}\n{status}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::bash::BashOutput;

    fn check(stdout: &str, stderr: &str, exit: Option<i64>, signal: Option<&str>, expected: &str) {
        let output = BashOutput {
            stdout: stdout.to_owned(),
            stderr: stderr.to_owned(),
            exit_code: exit,
            signal: signal.map(str::to_owned),
            truncated: false,
            stdout_spill: None,
            stderr_spill: None,
            sandbox: None,
            session_id: None,
            running: None,
            output_file: None,
            blocked_hosts: None,
        };
        assert_eq!(render(&output), expected);
    }

    #[test]
    fn renders_output_then_status() {
        check("hi\n", "", Some(0), None, "hi");
        check("", "", Some(0), None, "(no output)");
        check("out", "err\n", Some(2), None, "out\nerr\nExit code 2");
        check("", "", Some(1), None, "Exit code 1");
        check(
            "partial\n",
            "",
            None,
            Some("SIGTERM"),
            "partial\nKilled by SIGTERM",
        );
    }
}
