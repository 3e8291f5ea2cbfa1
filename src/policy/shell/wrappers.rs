//! One simple command's words → parts. Wrappers that only change how the inner command
//! runs (`timeout`, `nice`, `env`, …) are see-through; wrappers that matter themselves
//! (`sudo`, `xargs`, `find -exec`) are judged and unwrapped; `bash -c STRING` and `watch`
//! analyze their string; `eval` and computed program names cannot be judged.

use super::word::W;
use super::{MAX_DEPTH, Part, Walker, env, options};

type Inside = Option<String>;

/// How a wrapper's options are spelled.
pub(super) struct Options {
    /// Short options that take a value (attached, `-n5`, or as the next word).
    pub short: &'static str,
    /// Short options whose value, if any, is attached only (`xargs -i{}`).
    pub attached: &'static str,
    /// Long options that take a value as the next word (unless given with `=`).
    pub long: &'static [&'static str],
}

/// Where the first word after `words`' options stands; `None` when an option position
/// holds a word computed at run time (the inner command cannot be located).
pub(super) fn skip_options(words: &[W], from: usize, options: &Options) -> Option<usize> {
    let mut i = from;
    while let Some(word) = words.get(i) {
        if !word.literal {
            // A computed word where an option may stand: the command cannot be located.
            return None;
        }
        let text = word.text.as_str();
        if text == "--" {
            return Some(i + 1);
        }
        if let Some(long) = text.strip_prefix("--") {
            let takes = !long.contains('=') && options.long.contains(&text);
            i += if takes { 2 } else { 1 };
            continue;
        }
        let Some(cluster) = text.strip_prefix('-').filter(|c| !c.is_empty()) else {
            return Some(i);
        };
        i += 1;
        for (at, c) in cluster.char_indices() {
            if options.attached.contains(c) {
                break;
            }
            if options.short.contains(c) {
                if at + c.len_utf8() == cluster.len() {
                    i += 1;
                }
                break;
            }
        }
    }
    Some(i)
}

pub(super) fn joined(words: &[W]) -> String {
    let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
    texts.join(" ")
}

fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

impl Walker {
    /// The parts of one simple command.
    pub(super) fn command(&mut self, words: Vec<W>, inside: &Inside) {
        let Some(program) = words.first() else {
            return;
        };
        if !program.literal || is_pattern(&program.text) {
            return self.unreadable(joined(&words), "the program's name is computed at run time");
        }
        if self.depth >= MAX_DEPTH {
            return self.unreadable(
                joined(&words),
                "the command is nested deeper than 64 levels",
            );
        }
        if let Some(reason) = options::runs_other_code(&words) {
            self.unreadable(joined(&words), reason);
        }
        self.depth += 1;
        self.command_inner(words, inside);
        self.depth -= 1;
    }

    pub(super) fn part(&mut self, words: &[W], inside: &Inside) {
        let words: Vec<String> = words.iter().map(|w| w.text.clone()).collect();
        let text = words.join(" ");
        self.parts.push(Part::Command {
            words,
            text,
            inside: inside.clone(),
        });
    }

    /// The command after a see-through wrapper's options, or the wrapper alone.
    fn unwrap_at(&mut self, words: Vec<W>, at: Option<usize>, inside: &Inside) {
        match at {
            None => self.unreadable(
                joined(&words),
                "a wrapper's arguments are computed at run time",
            ),
            Some(at) if at >= words.len() => self.part(&words, inside),
            Some(at) => self.command(words[at..].to_vec(), inside),
        }
    }

    fn command_inner(&mut self, words: Vec<W>, inside: &Inside) {
        let name = basename(&words[0].text).to_string();
        let opts = |short, attached, long| Options {
            short,
            attached,
            long,
        };
        match name.as_str() {
            "nohup" | "builtin" => self.unwrap_at(words, Some(1), inside),
            "setsid" => {
                let at = skip_options(&words, 1, &opts("", "", &[]));
                self.unwrap_at(words, at, inside)
            }
            "time" => {
                self.option_writes(&words, &["-o", "--output"], inside);
                let at = skip_options(&words, 1, &opts("fo", "", &["--format", "--output"]));
                self.unwrap_at(words, at, inside)
            }
            "timeout" => {
                let at = skip_options(&words, 1, &opts("sk", "", &["--signal", "--kill-after"]));
                // The duration, then the command.
                self.unwrap_at(words, at.map(|at| at + 1), inside)
            }
            "nice" => {
                let at = skip_options(&words, 1, &opts("n", "", &["--adjustment"]));
                self.unwrap_at(words, at, inside)
            }
            "stdbuf" => {
                let long = &["--input", "--output", "--error"];
                let at = skip_options(&words, 1, &opts("ioe", "", long));
                self.unwrap_at(words, at, inside)
            }
            "ionice" => {
                let long = &["--class", "--classdata", "--pid", "--pgid", "--uid"];
                let at = skip_options(&words, 1, &opts("cnpPu", "", long));
                self.unwrap_at(words, at, inside)
            }
            "exec" => {
                let at = skip_options(&words, 1, &opts("a", "", &[]));
                self.unwrap_at(words, at, inside)
            }
            "command" => {
                let asks = words[1..]
                    .iter()
                    .take_while(|w| w.literal && w.text.starts_with('-') && w.text != "--")
                    .any(|w| w.text.contains(['v', 'V']));
                if asks {
                    // `command -v git` only looks the program up.
                    self.part(&words, inside)
                } else {
                    let at = skip_options(&words, 1, &opts("", "", &[]));
                    self.unwrap_at(words, at, inside)
                }
            }
            "env" => self.env(words, inside),
            "bash" | "sh" | "zsh" | "dash" | "ksh" | "ash" | "mksh" => {
                self.shell(words, &name, inside)
            }
            "watch" => self.watch(words, inside),
            "sudo" | "doas" => {
                self.part(&words, inside);
                let at = if name == "sudo" {
                    let long = &[
                        "--user",
                        "--group",
                        "--prompt",
                        "--close-from",
                        "--chdir",
                        "--role",
                        "--type",
                        "--other-user",
                        "--command-timeout",
                        "--host",
                    ];
                    skip_options(&words, 1, &opts("ugpCDrtUTRh", "", long))
                } else {
                    skip_options(&words, 1, &opts("uC", "", &[]))
                };
                // `sudo VAR=value cmd`.
                let at = at.map(|at| self.assignments(&words, at));
                let inside = Some(name.clone());
                match at {
                    None => self.unreadable(
                        joined(&words),
                        "a wrapper's arguments are computed at run time",
                    ),
                    Some(at) if at >= words.len() => {}
                    Some(at) => self.command(words[at..].to_vec(), &inside),
                }
            }
            "xargs" => {
                self.part(&words, inside);
                let long = &[
                    "--arg-file",
                    "--delimiter",
                    "--max-args",
                    "--max-procs",
                    "--max-chars",
                    "--process-slot-var",
                ];
                let at = skip_options(&words, 1, &opts("adEILnPs", "eil", long));
                let inside = Some("xargs".to_string());
                match at {
                    None => self.unreadable(
                        joined(&words),
                        "a wrapper's arguments are computed at run time",
                    ),
                    Some(at) if at >= words.len() => {
                        self.command(vec![W::literal("echo".into())], &inside)
                    }
                    Some(at) => self.command(words[at..].to_vec(), &inside),
                }
            }
            "find" => self.find(words, inside),
            "tee" => {
                self.part(&words, inside);
                let mut options = true;
                for word in &words[1..] {
                    if options && word.literal && word.text == "--" {
                        options = false;
                    } else if options
                        && word.literal
                        && word.text.starts_with('-')
                        && word.text != "-"
                    {
                    } else {
                        self.write(word.clone(), inside);
                    }
                }
            }
            "eval" => self.unreadable(joined(&words), "eval runs a string as a command"),
            "source" | "." => {
                if words.iter().all(|w| w.literal) {
                    self.part(&words, inside)
                } else {
                    self.unreadable(joined(&words), "it sources a file named at run time")
                }
            }
            "export" | "declare" | "typeset" | "local" | "readonly" => {
                // `-i`, `-n` and subscripted names evaluate arithmetic.
                self.arithmetic = true;
                for word in &words[1..] {
                    if word.literal && word.text.starts_with('-') {
                        continue;
                    }
                    match env::assigned_name(&word.text) {
                        Some(variable) if env::chooses_program(variable) => self.unreadable(
                            joined(&words),
                            format!("the environment variable {variable} chooses what runs"),
                        ),
                        Some(_) => {}
                        None if !word.literal => {
                            self.unreadable(joined(&words), "it sets a variable named at run time")
                        }
                        None => {}
                    }
                }
                self.part(&words, inside)
            }
            // Builtins that take a variable name evaluate an array subscript in it
            // (`printf -v 'a[$(cmd)]'`, `read`, `unset`, namerefs): arithmetic contexts.
            // Those that assign one must not set a variable that chooses what runs
            // (`printf -v PATH /tmp; ls`, `read PATH < file`).
            "let" | "printf" | "read" | "unset" | "mapfile" | "readarray" | "getopts" | "wait"
            | "test" | "[" => {
                self.arithmetic = true;
                let assigns = matches!(
                    name.as_str(),
                    "printf" | "read" | "mapfile" | "readarray" | "getopts"
                );
                // A name operand, or one with a subscript (`PATH`, `LD_PRELOAD[0]`).
                let steering = words[1..]
                    .iter()
                    .filter(|_| assigns)
                    .map(|w| w.text.split('[').next().unwrap_or_default())
                    .find(|variable| env::chooses_program(variable))
                    .map(str::to_owned);
                if let Some(variable) = steering {
                    self.unreadable(
                        joined(&words),
                        format!(
                            "it sets the environment variable {variable}, which chooses what runs"
                        ),
                    );
                }
                self.part(&words, inside)
            }
            // A trap's action and an alias's value are shell text run later.
            "trap" => {
                self.part(&words, inside);
                self.later(&words, "trap");
            }
            "alias" => {
                self.part(&words, inside);
                self.later(&words, "alias");
            }
            _ => self.part(&words, inside),
        }
    }

    /// The shell text `trap ACTION SIGNAL…` or `alias NAME=VALUE…` would run later, analyzed
    /// as a script of its own; computed text cannot be judged.
    fn later(&mut self, words: &[W], what: &str) {
        let operands = words[1..]
            .iter()
            .skip_while(|w| w.literal && w.text.starts_with('-'));
        let texts: Vec<&W> = match what {
            // `trap ACTION SIGNAL…`: the first operand, when signals follow it.
            "trap" => operands.take(1).filter(|_| words.len() > 2).collect(),
            _ => operands.collect(),
        };
        for word in texts {
            if !word.literal {
                return self.unreadable(
                    joined(words),
                    format!("the {what} runs text computed at run time"),
                );
            }
            let text = match what {
                "alias" => match word.text.split_once('=') {
                    Some((_, value)) => value,
                    None => continue,
                },
                _ => word.text.as_str(),
            };
            let inside = Some(what.to_owned());
            self.script(text, &inside);
        }
    }

    /// Skips the `NAME=value` words from `at` (`env`'s and `sudo`'s), asking for any that
    /// sets a variable choosing what runs; the index of the first other word.
    pub(super) fn assignments(&mut self, words: &[W], mut at: usize) -> usize {
        while let Some(word) = words.get(at)
            && let Some(variable) = env::assigned_name(&word.text)
        {
            if env::chooses_program(variable) {
                self.unreadable(
                    joined(words),
                    format!("the environment variable {variable} chooses what runs"),
                );
            }
            at += 1;
        }
        at
    }

    /// `time -o FILE`, `--output=FILE`: files an option writes.
    fn option_writes(&mut self, words: &[W], flags: &[&str], inside: &Inside) {
        let mut i = 1;
        while let Some(word) = words.get(i) {
            if !word.literal || !word.text.starts_with('-') {
                break;
            }
            if flags.contains(&word.text.as_str()) {
                if let Some(path) = words.get(i + 1) {
                    self.write(path.clone(), inside);
                }
                i += 2;
                continue;
            }
            for flag in flags {
                if let Some(path) = word.text.strip_prefix(&format!("{flag}=")) {
                    self.write(W::literal(path.to_string()), inside);
                }
            }
            i += 1;
        }
    }

    /// `find … -exec CMD … ;|+`: find without its `-exec`s is a part, each CMD another;
    /// `-fprint FILE` and friends write.
    fn find(&mut self, words: Vec<W>, inside: &Inside) {
        let mut own: Vec<W> = Vec::new();
        let mut inner: Vec<Vec<W>> = Vec::new();
        let mut i = 0;
        while i < words.len() {
            let word = &words[i];
            let text = word.text.as_str();
            if word.literal && matches!(text, "-exec" | "-execdir" | "-ok" | "-okdir") {
                let mut command = Vec::new();
                i += 1;
                while let Some(next) = words.get(i) {
                    i += 1;
                    let ends = next.literal
                        && (next.text == ";"
                            || (next.text == "+"
                                && command.last().is_some_and(|w: &W| w.text == "{}")));
                    if ends {
                        break;
                    }
                    command.push(next.clone());
                }
                inner.push(command);
                continue;
            }
            if word.literal
                && matches!(text, "-fprint" | "-fprint0" | "-fls" | "-fprintf")
                && let Some(path) = words.get(i + 1)
            {
                self.write(path.clone(), inside);
            }
            own.push(word.clone());
            i += 1;
        }
        self.part(&own, inside);
        let inside = Some("find -exec".to_string());
        for command in inner {
            if command.is_empty() {
                continue;
            }
            self.command(command, &inside);
        }
    }
}

/// A program name the shell would glob or brace-expand.
fn is_pattern(program: &str) -> bool {
    program != "[" && program != "[[" && program.contains(['*', '?', '[', '{'])
}
