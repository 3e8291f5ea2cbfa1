//! Options through which an allowed program runs another command or a program the rule did
//! not name: `git -c core.pager=…`, `git rebase --exec`, `tar --to-command`, `rg --pre`,
//! `rsync -e`, `ssh -o ProxyCommand=…`. No shell parser sees these (the program reads them),
//! so each is listed here, and a command using one is asked. Programs that are languages
//! (`python -c`, `node -e`, `awk`, `sed`'s `e` command) run whatever their text says: a
//! rule that allows one allows that (README, Permissions).

use super::word::W;

/// The programs below, so every other command costs one lookup.
const LISTED: &[&str] = &[
    "git",
    "tar",
    "bsdtar",
    "rg",
    "rsync",
    "ssh",
    "scp",
    "sftp",
    "zip",
    "man",
    "flock",
    "chrt",
    "taskset",
    "unshare",
    "nsenter",
    "chroot",
    "setpriv",
    "su",
    "runuser",
    "script",
    "strace",
    "ltrace",
    "valgrind",
    "perf",
    "xvfb-run",
    "dbus-run-session",
    "faketime",
    "firejail",
    "bwrap",
    "parallel",
    "systemd-run",
    "busybox",
];

/// Why `words` (a simple command, program first) runs something its rule did not name.
pub(super) fn runs_other_code(words: &[W]) -> Option<String> {
    let program = words.first()?.text.rsplit('/').next()?;
    if !LISTED.contains(&program) {
        return None;
    }
    let args: Vec<&str> = words[1..].iter().map(|w| w.text.as_str()).collect();
    let has = |flags: &[&str]| {
        args.iter().find(|arg| {
            flags.iter().any(|flag| {
                **arg == *flag
                    || (flag.starts_with("--") && arg.starts_with(&format!("{flag}=")))
                    || (!flag.starts_with("--") && flag.len() == 2 && arg.starts_with(flag))
            })
        })
    };
    let found = match program {
        "git" => git(&args),
        "tar" | "bsdtar" => has(&[
            "--to-command",
            "--checkpoint-action",
            "--use-compress-program",
            "--info-script",
            "--new-volume-script",
            "-I",
            "-F",
        ])
        .map(|a| a.to_string()),
        "rg" => has(&["--pre"]).map(|a| a.to_string()),
        "rsync" => has(&["--rsh", "--rsync-path", "-e"]).map(|a| a.to_string()),
        "ssh" | "scp" | "sftp" => ssh_option(&args),
        "zip" => has(&["--unzip-command", "-TT"]).map(|a| a.to_string()),
        "man" => has(&["--pager", "--html", "-P", "-H"]).map(|a| a.to_string()),
        // The runners: every other listed program.
        _ => Some(String::new()),
    }?;
    Some(match found.is_empty() {
        true => format!("{program} runs another command, which its rule does not name"),
        false => format!("{program}'s option {found} runs a program its rule does not name"),
    })
}

/// `git`: configuration from the command line (but for keys that only shape output or
/// identity), another exec path, external diff drivers, remote helpers, and the
/// subcommands that run a command.
fn git(args: &[&str]) -> Option<String> {
    const HARMLESS: &[&str] = &[
        "user.",
        "color.",
        "advice.",
        "init.defaultbranch",
        "core.quotepath",
        "i18n.",
        "log.",
        "format.pretty",
        "diff.renames",
        "diff.algorithm",
        "pull.rebase",
        "merge.conflictstyle",
        "column.",
        "status.",
        "commit.gpgsign=false",
    ];
    for (i, arg) in args.iter().enumerate() {
        let config = match *arg {
            "-c" => args.get(i + 1).copied(),
            "--config-env" => args.get(i + 1).copied(),
            _ => arg
                .strip_prefix("-c")
                .filter(|rest| !rest.is_empty())
                .or_else(|| arg.strip_prefix("--config-env=")),
        };
        if let Some(setting) = config {
            let key = setting.to_ascii_lowercase();
            if !HARMLESS.iter().any(|h| key.starts_with(h)) {
                return Some(format!("-c {setting}"));
            }
            continue;
        }
        let risky = [
            "--exec-path",
            "--ext-diff",
            "--upload-pack",
            "--receive-pack",
            "--exec",
            "--output",
            "--textconv",
            "--template",
            "--filter",
        ];
        if let Some(flag) = risky
            .iter()
            .find(|f| *arg == **f || arg.starts_with(&format!("{f}=")))
        {
            return Some(flag.to_string());
        }
    }
    let subcommand: Vec<&str> = args
        .iter()
        .copied()
        .filter(|a| !a.starts_with('-'))
        .take(2)
        .collect();
    match subcommand.as_slice() {
        ["rebase", ..] if args.iter().any(|a| *a == "-x" || a.starts_with("-x")) => {
            Some("rebase -x".into())
        }
        ["bisect", "run"] => Some("bisect run".into()),
        ["submodule", "foreach"] => Some("submodule foreach".into()),
        ["filter-branch", ..] => Some("filter-branch".into()),
        ["difftool" | "mergetool", ..] => Some(subcommand[0].into()),
        _ => None,
    }
}

/// `ssh -o ProxyCommand=…` and friends, `-o LocalCommand`, `scp -S program`.
fn ssh_option(args: &[&str]) -> Option<String> {
    const KEYS: &[&str] = &[
        "proxycommand",
        "localcommand",
        "permitlocalcommand",
        "knownhostscommand",
        "proxyjump",
        "match",
    ];
    for (i, arg) in args.iter().enumerate() {
        let option = match *arg {
            "-o" => args.get(i + 1).copied(),
            "-S" | "-J" => return Some((*arg).to_owned()),
            _ => arg.strip_prefix("-o"),
        };
        if let Some(option) = option {
            let key = option
                .split(['=', ' '])
                .next()
                .unwrap_or_default()
                .to_ascii_lowercase();
            if KEYS.contains(&key.as_str()) {
                return Some(format!("-o {option}"));
            }
        }
        if arg.starts_with("-F") {
            return Some("-F (another configuration file)".into());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(command: &str) -> Vec<W> {
        command
            .split(' ')
            .map(|w| W::literal(w.to_owned()))
            .collect()
    }

    #[test]
    fn options_that_run_another_program_are_found_and_ordinary_ones_are_not() {
        let found = [
            "git -c core.pager=sh log",
            "git -ccore.sshCommand=x fetch",
            "git --config-env=core.editor=E commit",
            "git --exec-path=/tmp/x status",
            "git diff --ext-diff",
            "git log --output=f",
            "git rebase -x make main",
            "git bisect run make",
            "git submodule foreach make",
            "tar -xf a --to-command=sh",
            "tar -I zstd -xf a",
            "rg --pre ./x foo",
            "rsync -e ssh a b",
            "ssh -o ProxyCommand=x host",
            "ssh -oLocalCommand=x host",
            "scp -S prog a b",
            "man -P cat ls",
            "flock /tmp/l make",
            "/usr/bin/strace ls",
        ];
        for command in found {
            assert!(runs_other_code(&words(command)).is_some(), "{command}");
        }
        let ordinary = [
            "git -c color.ui=always log",
            "git -c user.name=x commit -m y",
            "git log --oneline",
            "git rebase main",
            "tar -xf a.tar",
            "rg -n foo",
            "ssh host uptime",
            "ls -la",
        ];
        for command in ordinary {
            assert_eq!(runs_other_code(&words(command)), None, "{command}");
        }
    }
}
