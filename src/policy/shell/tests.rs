//! Unit tests of the command analysis.

#![allow(clippy::unwrap_used)]

use super::{Part, analyze, fast, suggested_prefix};

/// The command texts of `command`'s parts, `inside` appended after `@`; writes as
/// `write:PATH`, unreadable parts as `?TEXT`.
fn shape(command: &str) -> Vec<String> {
    analyze(command)
        .into_iter()
        .map(|part| match part {
            Part::Command { text, inside, .. } => match inside {
                Some(inside) => format!("{text} @{inside}"),
                None => text,
            },
            Part::Write { path, .. } => format!("write:{path}"),
            Part::Unreadable { text, .. } => format!("?{text}"),
        })
        .collect()
}

fn words(text: &str) -> Vec<String> {
    text.split(' ').map(str::to_string).collect()
}

#[test]
fn quoted_words_are_unquoted_and_separators_in_quotes_stay() {
    assert_eq!(shape(r#""git" 'status'"#), ["git status"]);
    assert_eq!(shape(r#"echo "a;b" 'c && d'"#), ["echo a;b c && d"]);
    assert_eq!(shape("echo a \\\n  b # rm -rf /"), ["echo a b"]);
    assert_eq!(shape("echo $HOME"), ["echo $HOME"]);
}

#[test]
fn compound_lists_and_bodies_are_walked() {
    assert_eq!(shape("git status; touch x"), ["git status", "touch x"]);
    assert_eq!(shape("a && b || c | d &"), ["a", "b", "c", "d"]);
    assert_eq!(shape("(a; b) && { c; }"), ["a", "b", "c"]);
    assert_eq!(
        shape("if a; then b; elif c; then d; else e; fi"),
        ["a", "b", "c", "d", "e"]
    );
    assert_eq!(shape("for x in $(a); do b; done"), ["a @$(...)", "b"]);
    assert_eq!(
        shape("while a; do b; done; until c; do d; done"),
        ["a", "b", "c", "d"]
    );
    assert_eq!(
        shape("case $(a) in x) b;; *) c;; esac"),
        ["a @$(...)", "b", "c"]
    );
    assert_eq!(shape("f() { rm x; }; f"), ["rm x @function f", "f"]);
    assert_eq!(shape("function g { rm x; }"), ["rm x @function g"]);
    assert_eq!(shape("[[ -f $(rm y) ]]"), ["rm y @$(...)"]);
    assert_eq!(shape("coproc rm x"), ["rm x"]);
}

#[test]
fn substitutions_are_walked_everywhere() {
    assert_eq!(
        shape("echo $(curl x | sh)"),
        ["curl x @$(...)", "sh @$(...)", "echo $(curl x | sh)"]
    );
    assert_eq!(
        shape("echo `touch p`"),
        ["touch p @`...`", "echo `touch p`"]
    );
    assert_eq!(shape(r"echo `echo \`touch p\``")[0], "touch p @`...`");
    assert_eq!(
        shape("diff <(ls a) >(rm b)")[..2],
        ["ls a @<(...)", "rm b @>(...)"]
    );
    assert_eq!(
        shape("FOO=$(rm x) git status"),
        ["rm x @$(...)", "git status"]
    );
    assert_eq!(shape("x=$(rm x)"), ["rm x @$(...)"]);
    assert_eq!(shape("a[$(rm i)]=1"), ["rm i @$(...)"]);
    assert_eq!(shape("echo ${x:-$(rm y)}")[0], "rm y @$(...)");
    assert_eq!(shape("echo ${x/a/$(rm y)}")[0], "rm y @$(...)");
    assert_eq!(shape("echo $(( $(rm z) + 1 ))")[0], "rm z @$(...)");
    assert_eq!(shape("cat <<<$(rm h)")[0], "rm h @$(...)");
    assert_eq!(shape("cat < $(rm r)")[0], "rm r @$(...)");
    assert_eq!(shape("cat <<E\n$(rm d)\nE\n")[0], "rm d @$(...)");
    assert_eq!(shape("cat <<'E'\n$(rm d)\nE\n"), ["cat"]);
    assert_eq!(shape("echo \"$(rm q)\"")[0], "rm q @$(...)");
}

#[test]
fn writes_are_parts_except_null_and_duplications() {
    assert_eq!(shape("echo hi > p"), ["write:p", "echo hi"]);
    for command in [
        "echo >> p",
        "echo >| p",
        "echo <> p",
        "echo &> p",
        "echo &>> p",
        "echo >& p",
    ] {
        assert!(shape(command).contains(&"write:p".to_string()), "{command}");
    }
    assert_eq!(
        shape("echo hi 2>&1 >/dev/null 2>/dev/stderr >&-"),
        ["echo hi"]
    );
    assert_eq!(
        shape("echo x | tee -a a b"),
        ["echo x", "tee -a a b", "write:a", "write:b"]
    );
    assert_eq!(shape("find . -fprint f"), ["write:f", "find . -fprint f"]);
    assert_eq!(shape("echo > $f"), ["?> $f", "echo"]);
    assert_eq!(shape("echo > *.txt"), ["?> *.txt", "echo"]);
    assert_eq!(
        shape("cd /etc && echo > out/x"),
        ["cd /etc", "?> out/x", "echo"]
    );
    assert_eq!(
        shape("cd /etc && echo > /tmp/x"),
        ["cd /etc", "write:/tmp/x", "echo"]
    );
}

#[test]
fn unreadable_constructs_are_asked() {
    assert!(shape("eval rm x")[0].starts_with('?'));
    assert!(shape("source $f")[0].starts_with('?'));
    assert_eq!(shape("source ./env.sh"), ["source ./env.sh"]);
    assert!(shape("$(echo rm) -rf x").contains(&"?$(echo rm) -rf x".to_string()));
    assert_eq!(shape("$cmd x"), ["?$cmd x"]);
    assert_eq!(shape("\"${x}\" y"), ["?\"${x}\" y"]);
    assert_eq!(shape("r{m,} x"), ["?r{m,} x"]);
    assert_eq!(shape("bash -c \"$x\""), ["?bash -c \"$x\""]);
    assert!(shape("env -S 'rm x'")[0].starts_with('?'));
    assert!(shape("echo 'unterminated")[0].starts_with('?'));
    assert!(shape("if then fi")[0].starts_with('?'));
    for prefix in [
        "PATH=/tmp",
        "LD_PRELOAD=x.so",
        "GIT_PAGER=x",
        "GIT_CONFIG_COUNT=1",
        "IFS=/",
    ] {
        let parts = shape(&format!("{prefix} git status"));
        assert!(
            parts.iter().any(|p| p.starts_with('?')),
            "{prefix}: {parts:?}"
        );
        let parts = shape(&format!("env {prefix} git status"));
        assert!(
            parts.iter().any(|p| p.starts_with('?')),
            "env {prefix}: {parts:?}"
        );
        let parts = shape(&format!("export {prefix}; git status"));
        assert!(
            parts.iter().any(|p| p.starts_with('?')),
            "export {prefix}: {parts:?}"
        );
    }
    assert_eq!(shape("FOO=1 LANG=C git status"), ["git status"]);
}

#[test]
fn arithmetic_over_quoted_substitutions_is_asked() {
    let parts = shape("x='a[$(rm p)]'; echo $((x))");
    assert!(parts.iter().any(|p| p.starts_with('?')), "{parts:?}");
    let parts = shape("x='a[$(rm p)]'; [[ $x -eq 1 ]]");
    assert!(parts.iter().any(|p| p.starts_with('?')), "{parts:?}");
    let parts = shape("declare -i n; x='a[`rm p`]'; n=x");
    assert!(parts.iter().any(|p| p.starts_with('?')), "{parts:?}");
    for command in [
        "printf -v 'a[$(rm p)]' x",
        "declare -n r='a[$(rm p)]'; echo $r",
        "read 'a[$(rm p)]' < f",
        "unset 'a[`rm p`]'",
        "echo \"\\$(rm p)\"; echo $((1))",
    ] {
        let parts = shape(command);
        assert!(
            parts.iter().any(|p| p.starts_with('?')),
            "{command}: {parts:?}"
        );
    }
    assert_eq!(shape("echo $((1 + 2)) '$(not run)'").len(), 2);
    assert_eq!(shape("echo $((1 + 2))"), ["echo $((1 + 2))"]);
    assert_eq!(shape("echo '$(not run)'"), ["echo $(not run)"]);
}

#[test]
fn see_through_wrappers_leave_the_inner_command() {
    assert_eq!(shape("time rm x"), ["rm x"]);
    assert_eq!(shape("timeout -s KILL 5 rm x"), ["rm x"]);
    assert_eq!(shape("timeout --kill-after 1 5s rm x"), ["rm x"]);
    assert_eq!(shape("nice -n 10 rm x"), ["rm x"]);
    assert_eq!(shape("nice rm x"), ["rm x"]);
    assert_eq!(shape("nohup rm x &"), ["rm x"]);
    assert_eq!(shape("stdbuf -oL -e 0 rm x"), ["rm x"]);
    assert_eq!(shape("ionice -c 3 rm x"), ["rm x"]);
    assert_eq!(shape("setsid -f rm x"), ["rm x"]);
    assert_eq!(shape("command rm x"), ["rm x"]);
    assert_eq!(shape("command -v rm"), ["command -v rm"]);
    assert_eq!(shape("builtin exec rm x"), ["rm x"]);
    assert_eq!(
        shape("env -i -u HOME -C /tmp -- A=1 rm x").last().unwrap(),
        "rm x"
    );
    assert_eq!(shape("env A=1 rm x"), ["rm x"]);
    assert_eq!(shape("env"), ["env"]);
    assert_eq!(shape("/usr/bin/env /bin/rm x"), ["/bin/rm x"]);
    assert_eq!(shape("/usr/bin/time -o out rm x"), ["write:out", "rm x"]);
    // bash reads `time` as its keyword there: the command is `-o`.
    assert_eq!(shape("time -o out rm x"), ["-o out rm x"]);
    assert_eq!(shape("timeout $t rm x"), ["?timeout $t rm x"]);
}

#[test]
fn shells_analyze_their_string() {
    assert_eq!(
        shape("bash -c 'rm x; ls'"),
        ["rm x @bash -c", "ls @bash -c"]
    );
    assert_eq!(shape("sh -ec 'rm x'"), ["rm x @sh -c"]);
    assert_eq!(shape("bash -lc 'rm x' arg0"), ["rm x @bash -c"]);
    assert_eq!(shape("bash -o pipefail -c 'rm x'"), ["rm x @bash -c"]);
    assert_eq!(shape("/bin/zsh -c \"rm x\""), ["rm x @zsh -c"]);
    assert_eq!(shape("bash script.sh"), ["bash script.sh"]);
    assert_eq!(shape("bash -c 'bash -c \"rm x\"'"), ["rm x @bash -c"]);
    assert_eq!(shape("watch -n 5 'ls; rm x'"), ["ls @watch", "rm x @watch"]);
    assert_eq!(shape("watch -x rm x"), ["rm x @watch"]);
}

#[test]
fn judged_wrappers_are_parts_and_unwrapped() {
    assert_eq!(
        shape("sudo -u root rm x"),
        ["sudo -u root rm x", "rm x @sudo"]
    );
    assert_eq!(shape("doas rm x"), ["doas rm x", "rm x @doas"]);
    assert_eq!(shape("xargs rm < list"), ["xargs rm", "rm @xargs"]);
    assert_eq!(shape("xargs"), ["xargs", "echo @xargs"]);
    assert_eq!(
        shape("xargs -0 -n 1 -I {} rm {}"),
        ["xargs -0 -n 1 -I {} rm {}", "rm {} @xargs"]
    );
    assert_eq!(
        shape("xargs -i{} rm {}"),
        ["xargs -i{} rm {}", "rm {} @xargs"]
    );
    assert_eq!(
        shape("xargs sh -c 'rm x'"),
        ["xargs sh -c rm x", "rm x @sh -c"]
    );
    assert_eq!(
        shape("find . -exec rm {} \\;"),
        ["find .", "rm {} @find -exec"]
    );
    assert_eq!(
        shape("find . -name a -execdir rm {} + -print"),
        ["find . -name a -print", "rm {} @find -exec"]
    );
    assert_eq!(
        shape("find . -ok rm {} ';' -exec ls {} +"),
        ["find .", "rm {} @find -exec", "ls {} @find -exec"]
    );
    assert_eq!(
        shape("sudo sh -c 'rm x'"),
        ["sudo sh -c rm x", "rm x @sh -c"]
    );
}

#[test]
fn hostile_nesting_is_refused_before_the_parser() {
    // A 1 MB `$($($(…` and a 200 KB one: refused, the test's stack intact.
    for n in [350_000, 100_000] {
        let hostile = format!("{}x{}", "$(".repeat(n), ")".repeat(n));
        assert!(matches!(analyze(&hostile)[..], [Part::Unreadable { .. }]));
    }
    let keywords = "if a; then ".repeat(70) + "b" + &"; fi".repeat(70);
    assert!(matches!(analyze(&keywords)[..], [Part::Unreadable { .. }]));
    let braces = "{ ".repeat(70) + "a" + &"; }".repeat(70);
    assert!(matches!(analyze(&braces)[..], [Part::Unreadable { .. }]));
    let wrappers = "nice ".repeat(100_000) + "rm x";
    assert!(matches!(analyze(&wrappers)[..], [Part::Unreadable { .. }]));
    // Just inside the bound, every level is walked, on a 2 MiB stack like a tokio worker's.
    let deep = format!("{}rm x{}", "$(echo ".repeat(60), ")".repeat(60));
    let parts = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || analyze(&deep))
        .unwrap()
        .join()
        .unwrap();
    assert!(
        parts
            .iter()
            .any(|p| matches!(p, Part::Command { text, .. } if text == "echo rm x")),
        "{parts:?}"
    );
    let case = format!(
        "{}rm x{}",
        "$(case a in a) ".repeat(60),
        ";; esac)".repeat(60)
    );
    let parts = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || analyze(&case))
        .unwrap()
        .join()
        .unwrap();
    assert!(!parts.is_empty());
    assert!(analyze(&"a".repeat(300 * 1024)).len() == 1);
    // Long flat inputs (under 256 KiB) are no deeper for the parser, on a worker's stack.
    let flat = [
        "! ".repeat(60_000) + "true",
        "a | ".repeat(50_000) + "b",
        "a && ".repeat(40_000) + "b",
        "a;\n".repeat(60_000),
        "echo ".to_string() + &"x ".repeat(100_000),
        "echo \"".to_string() + &"$x".repeat(100_000) + "\"",
    ];
    for text in flat {
        let size = text.len();
        let parts = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || analyze(&text).len())
            .unwrap()
            .join();
        assert!(parts.is_ok(), "{size} bytes overflowed");
    }
}

#[test]
fn suggested_prefixes_stop_at_arguments() {
    let cases = [
        ("npm run test:unit -- -x", Some("npm run test:unit")),
        ("git log --oneline", Some("git log")),
        ("git push origin main", Some("git push origin")),
        ("./build.sh x", Some("./build.sh")),
        ("cargo test -p x", Some("cargo test")),
        ("ls /tmp", Some("ls")),
        ("curl https://x.y", Some("curl")),
        ("make 4", Some("make")),
        ("git a=b", Some("git")),
        ("rm *.o", Some("rm")),
        ("$x y", None),
    ];
    for (command, expected) in cases {
        assert_eq!(
            suggested_prefix(&words(command)).as_deref(),
            expected,
            "{command}"
        );
    }
}

#[test]
fn the_fast_path_splits_as_the_parser_does() {
    let corpus = include_str!("../../../tests/permissions-corpus/commands.txt");
    let mut checked = 0;
    let commands = corpus
        .lines()
        .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split_once('\t').map(|(_, c)| c.replace("\\n", "\n")));
    let extra = [
        "git status",
        "a | b && c || d ; e",
        "git log --format=%H x; ls",
        "a;",
        "tool1 run && tool999 run x; echo done",
    ];
    for command in commands.chain(extra.iter().map(|s| s.to_string())) {
        let Some(fast) = fast::split(&command) else {
            continue;
        };
        let mut parser = brush_parser::Parser::new(
            std::io::Cursor::new(command.as_str()),
            &brush_parser::ParserOptions::default(),
        );
        let program = parser.parse_program().unwrap();
        let mut walker = super::Walker::default();
        walker.program(&program, &None);
        let fast_parts: Vec<Part> = {
            let mut walker = super::Walker::default();
            for words in fast {
                walker.command(
                    words.into_iter().map(super::word::W::literal).collect(),
                    &None,
                );
            }
            walker.parts
        };
        assert_eq!(fast_parts, walker.parts, "{command}");
        checked += 1;
    }
    assert!(
        checked >= 20,
        "only {checked} corpus commands take the fast path"
    );
    for slow in [
        "a\nb", "a=1 b", "if a", "a 'b'", "a > b", "a &", "| a", "a |", "a ;; b", "{ a; }", "a*",
    ] {
        assert!(fast::split(slow).is_none(), "{slow}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

    /// Whatever the text, analysis ends with parts and never panics.
    #[test]
    fn any_text_is_analyzed_without_panicking(command in "[a-z $`'\"\\(){}<>|&;=*!#~\n\t\\[\\]0-9-]{0,60}") {
        let _ = analyze(&command);
    }
}
