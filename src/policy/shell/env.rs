//! Environment variables that choose what a command runs: setting one in front of an
//! allowed command (`PATH=/tmp/x git status`, `GIT_PAGER='sh -c …' git log`) would run
//! something no rule named.

/// Whether assigning `name` can change what runs.
pub(super) fn chooses_program(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "PATH",
        "BASH_ENV",
        "ENV",
        "SHELLOPTS",
        "BASHOPTS",
        "PS4",
        "PROMPT_COMMAND",
        "IFS",
        "GIT_PAGER",
        "GIT_EDITOR",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_EXTERNAL_DIFF",
        "GIT_ASKPASS",
        "GIT_EXEC_PATH",
        "GIT_PROXY_COMMAND",
        "PAGER",
        "MANPAGER",
        "EDITOR",
        "VISUAL",
        "SSH_ASKPASS",
        "PYTHONPATH",
        "PYTHONSTARTUP",
        "NODE_OPTIONS",
        "PERL5OPT",
        "PERL5LIB",
        "RUBYOPT",
        "RUBYLIB",
        "LESSOPEN",
        "LESSCLOSE",
        "BROWSER",
    ];
    EXACT.contains(&name)
        || name.starts_with("LD_")
        || name.starts_with("DYLD_")
        || name.starts_with("GIT_CONFIG")
}

/// The variable name of an assignment word (`NAME=…`, `NAME+=…`, `NAME[i]=…`), if it is one.
pub(super) fn assigned_name(word: &str) -> Option<&str> {
    let end = word.find(['=', '[', '+'])?;
    let name = &word[..end];
    let valid = name
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let rest = &word[end..];
    let assigns = rest.starts_with('=') || rest.starts_with("+=") || rest.starts_with('[');
    (valid && assigns).then_some(name)
}
