//! Wrappers that carry a command as a string or behind assignments: `bash -c STRING`,
//! `watch CMD…` (its words are a shell string) and `env [NAME=VALUE]… CMD`.

use super::word::W;
use super::wrappers::{Options, joined, skip_options};
use super::{Walker, env};

type Inside = Option<String>;

impl Walker {
    /// `env [-i] [-u NAME] [-C DIR] [--] [NAME=VALUE]… [CMD…]`.
    pub(super) fn env(&mut self, words: Vec<W>, inside: &Inside) {
        let mut at = 1;
        while let Some(word) = words.get(at) {
            if !word.literal {
                if env::assigned_name(&word.text).is_some() {
                    break;
                }
                return self.unreadable(
                    joined(&words),
                    "a wrapper's arguments are computed at run time",
                );
            }
            let text = word.text.as_str();
            if text == "-S"
                || text.starts_with("--split-string")
                || (text.starts_with('-') && !text.starts_with("--") && text.contains('S'))
            {
                return self.unreadable(joined(&words), "env -S splits a string into a command");
            }
            match text {
                "--" => {
                    at += 1;
                    break;
                }
                "-u" | "-C" | "--unset" | "--chdir" => at += 2,
                _ if text.starts_with('-') && text.len() > 1 => at += 1,
                _ => break,
            }
        }
        let at = self.assignments(&words, at);
        if at >= words.len() {
            self.part(&words, inside)
        } else {
            self.command(words[at..].to_vec(), inside)
        }
    }

    /// `bash [opts] -c STRING [args]`: the string is analyzed; without `-c` the shell runs
    /// a script or its stdin and is an ordinary command.
    pub(super) fn shell(&mut self, words: Vec<W>, name: &str, inside: &Inside) {
        let mut at = 1;
        let mut string = false;
        while let Some(word) = words.get(at) {
            if !word.literal {
                break;
            }
            let text = word.text.as_str();
            if text == "--" || text == "-" {
                at += 1;
                break;
            }
            if text.starts_with("--") {
                at += if matches!(text, "--rcfile" | "--init-file") {
                    2
                } else {
                    1
                };
                continue;
            }
            let Some(cluster) = text.strip_prefix(['-', '+']).filter(|c| !c.is_empty()) else {
                break;
            };
            at += 1;
            for c in cluster.chars() {
                match c {
                    'c' => string = true,
                    'o' | 'O' => at += 1,
                    _ => {}
                }
            }
        }
        if !string {
            return self.part(&words, inside);
        }
        match words.get(at) {
            None => self.part(&words, inside),
            Some(script) if script.literal => {
                let script = script.text.clone();
                self.script(&script, &Some(format!("{name} -c")));
            }
            Some(_) => {
                self.unreadable(joined(&words), "a shell runs a string computed at run time")
            }
        }
    }

    /// `watch [opts] CMD…`: the words joined are a shell string (`-x`: a command).
    pub(super) fn watch(&mut self, words: Vec<W>, inside: &Inside) {
        let exec = words[1..]
            .iter()
            .take_while(|w| w.literal && w.text.starts_with('-'))
            .any(|w| w.text == "--exec" || (!w.text.starts_with("--") && w.text.contains('x')));
        let at = skip_options(
            &words,
            1,
            &Options {
                short: "nq",
                attached: "d",
                long: &["--interval", "--equexit"],
            },
        );
        let inside_watch = Some("watch".to_string());
        match at {
            None => self.unreadable(
                joined(&words),
                "a wrapper's arguments are computed at run time",
            ),
            Some(at) if at >= words.len() => self.part(&words, inside),
            Some(at) if exec => self.command(words[at..].to_vec(), &inside_watch),
            Some(at) => {
                if words[at..].iter().all(|w| w.literal) {
                    let script = joined(&words[at..]);
                    self.script(&script, &inside_watch);
                } else {
                    self.unreadable(joined(&words), "a shell runs a string computed at run time")
                }
            }
        }
    }
}
