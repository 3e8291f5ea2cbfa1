//! A generated source tree for the search bench and the equality test against `rg`:
//! packages of Rust, Python, JavaScript and text files with source-like lines, a `.git`
//! directory (so `rg` applies `.gitignore` as in a checkout), ignored directories and files
//! through `.gitignore`, nested `.gitignore`, `.ignore` and `.rgignore`, hidden files and
//! directories, binary files (a NUL byte at the start, or after some matches), and links.
//! Deterministic for a given [`Spec`].

#![allow(dead_code)]

use std::io::{self, Write};
use std::path::Path;

/// The shape of a tree.
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    /// Regular files written (all kinds, ignored ones included).
    pub files: usize,
    /// Average size of a file in bytes.
    pub bytes_per_file: usize,
    pub seed: u64,
}

const WORDS: [&str; 48] = [
    "alpha", "buffer", "cursor", "delta", "entry", "frame", "graph", "handle", "index", "join",
    "kernel", "layout", "matrix", "node", "offset", "parser", "query", "record", "symbol", "token",
    "update", "vector", "window", "yield", "zone", "config", "socket", "stream", "header",
    "signal", "thread", "cache", "table", "block", "chunk", "label", "scope", "value", "item",
    "field", "input", "output", "state", "event", "error", "result", "request", "reply",
];

/// A small xorshift generator: the tree is the same on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn word(&mut self) -> &'static str {
        WORDS[self.below(WORDS.len() as u64) as usize]
    }

    fn type_name(&mut self) -> String {
        let word = self.word();
        let mut chars = word.chars();
        let first = chars.next().map(|c| c.to_ascii_uppercase()).unwrap_or('X');
        format!("{first}{}{}", chars.as_str(), self.below(100))
    }
}

#[derive(Clone, Copy)]
enum Lang {
    Rust,
    Python,
    Js,
    Text,
}

fn rust_line(rng: &mut Rng, out: &mut String) {
    let n = rng.below(1000);
    let line = match rng.below(400) {
        0 => format!(
            "    // TODO: {} the {} before {}",
            rng.word(),
            rng.word(),
            rng.word()
        ),
        1 => format!("    // todo {} later", rng.word()),
        2 => format!("unsafe impl Send for {} {{}}", rng.type_name()),
        3..=5 => format!(
            "pub fn parse_{}_{}(input: &str) -> Result<{}, Error> {{",
            rng.word(),
            rng.word(),
            rng.type_name()
        ),
        6..=9 => format!(
            "pub struct {} {{\n    pub {}: u64,\n    {}: Vec<u8>,\n}}",
            rng.type_name(),
            rng.word(),
            rng.word()
        ),
        10..=60 => format!(
            "    let {} = {}.{}({n});",
            rng.word(),
            rng.word(),
            rng.word()
        ),
        61..=100 => format!(
            "    if {} > {n} {{ return Err(Error::{}); }}",
            rng.word(),
            rng.type_name()
        ),
        101..=130 => format!("fn {}_{}(&self) -> usize {{", rng.word(), rng.word()),
        131..=170 => "}".to_owned(),
        171..=200 => String::new(),
        201..=240 => format!("    /// Returns the {} of the {}.", rng.word(), rng.word()),
        241..=280 => format!(
            "use crate::{}::{{{}, {}}};",
            rng.word(),
            rng.type_name(),
            rng.type_name()
        ),
        _ => format!(
            "        self.{}.push({}::new({}, {n}));",
            rng.word(),
            rng.type_name(),
            rng.word()
        ),
    };
    out.push_str(&line);
    out.push('\n');
}

fn python_line(rng: &mut Rng, out: &mut String) {
    let line = match rng.below(300) {
        0 => format!("    # TODO {} {}", rng.word(), rng.word()),
        1..=20 => format!("def parse_{}(self, {}):", rng.word(), rng.word()),
        21..=40 => format!("class {}:", rng.type_name()),
        41..=60 => String::new(),
        _ => format!(
            "        {} = self.{}({}, {})",
            rng.word(),
            rng.word(),
            rng.word(),
            rng.below(100)
        ),
    };
    out.push_str(&line);
    out.push('\n');
}

fn js_line(rng: &mut Rng, out: &mut String) {
    let line = match rng.below(300) {
        0 => format!("  // TODO: {}", rng.word()),
        1..=20 => format!("function parse_{}({}) {{", rng.word(), rng.word()),
        21..=40 => "}".to_owned(),
        _ => format!(
            "  const {} = {}.{}({});",
            rng.word(),
            rng.word(),
            rng.word(),
            rng.below(100)
        ),
    };
    out.push_str(&line);
    out.push('\n');
}

fn text_line(rng: &mut Rng, out: &mut String) {
    let line = match rng.below(200) {
        0 => format!("TODO: {} the {}", rng.word(), rng.word()),
        1..=30 => String::new(),
        _ => format!(
            "The {} keeps its {} in the {} {}.",
            rng.word(),
            rng.word(),
            rng.word(),
            rng.word()
        ),
    };
    out.push_str(&line);
    out.push('\n');
}

fn content(rng: &mut Rng, lang: Lang, bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 200);
    while out.len() < bytes {
        match lang {
            Lang::Rust => rust_line(rng, &mut out),
            Lang::Python => python_line(rng, &mut out),
            Lang::Js => js_line(rng, &mut out),
            Lang::Text => text_line(rng, &mut out),
        }
    }
    out
}

fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut file = std::fs::File::create(path)?;
    file.write_all(bytes)
}

/// Writes the tree into the (empty or missing) directory `root`.
pub fn generate(root: &Path, spec: Spec) -> io::Result<()> {
    let mut rng = Rng(spec.seed | 1);
    std::fs::create_dir_all(root.join(".git"))?;
    write(&root.join(".git/HEAD"), b"ref: refs/heads/main\n")?;
    write(&root.join(".gitignore"), b"target/\n*.log\n/build\n")?;
    write(
        &root.join("build/out.rs"),
        b"// TODO built\nfn parse_built() {}\n",
    )?;
    write(&root.join("README.md"), b"# Tree\n\nTODO: describe\n")?;
    let files_per_dir = 25;
    let dirs_per_package = 8;
    let mut written = 2;
    let mut index = 0usize;
    while written < spec.files {
        let package = index / (files_per_dir * dirs_per_package);
        let dir = (index / files_per_dir) % dirs_per_package;
        let file = index % files_per_dir;
        index += 1;
        let pkg = root.join(format!("pkg{package:03}"));
        if dir == 0 && file == 0 {
            // Nested ignore files: each kind ignores something that would match.
            write(&pkg.join(".gitignore"), b"*.generated.rs\ngenerated/\n")?;
            write(&pkg.join(".ignore"), b"vendor/\n")?;
            write(&pkg.join(".rgignore"), b"*.snap\n")?;
            let ignored = content(&mut rng, Lang::Rust, spec.bytes_per_file);
            for name in [
                "target/debug/build.rs",
                "src/lib.generated.rs",
                "generated/mod.rs",
                "vendor/dep.rs",
                "tests/case.snap",
                "debug.log",
                ".hidden.rs",
                ".cache/cached.rs",
            ] {
                write(&pkg.join(name), ignored.as_bytes())?;
                written += 1;
            }
            // A link to a file and one to a directory: `rg` lists neither.
            let _ = std::os::unix::fs::symlink("../README.md", pkg.join("linked.md"));
            let _ = std::os::unix::fs::symlink("src", pkg.join("linked-src"));
        }
        let sub = match dir {
            0 => "src".to_owned(),
            1 => "tests".to_owned(),
            2 => "scripts".to_owned(),
            3 => "web".to_owned(),
            4 => "docs".to_owned(),
            n => format!("src/m{n}/inner"),
        };
        let lang = match (dir, file % 10) {
            (2, _) => Lang::Python,
            (3, _) => Lang::Js,
            (4, _) => Lang::Text,
            (_, 0) => Lang::Python,
            (_, 1) => Lang::Text,
            _ => Lang::Rust,
        };
        let extension = match lang {
            Lang::Rust => "rs",
            Lang::Python => "py",
            Lang::Js => "js",
            Lang::Text => ["md", "txt", "toml"][file % 3],
        };
        let size = spec.bytes_per_file / 5 + rng.below(spec.bytes_per_file as u64 * 8 / 5) as usize;
        let mut bytes = content(&mut rng, lang, size).into_bytes();
        match index % 97 {
            // Binary from the start: `rg` skips it.
            13 => bytes.insert(0, 0),
            // Binary after the first 64 KiB buffer: matches before the NUL count, the
            // rest does not (rg's searcher stops there).
            57 => {
                bytes.extend(content(&mut rng, lang, 80_000).into_bytes());
                bytes.insert(70_000, 0);
            }
            _ => {}
        }
        let path = pkg
            .join(&sub)
            .join(format!("f{file:02}_{}.{extension}", rng.word()));
        write(&path, &bytes)?;
        written += 1;
    }
    Ok(())
}

/// Bytes and regular files under `dir` (every file, ignored ones included).
pub fn size(dir: &Path) -> io::Result<(u64, u64)> {
    let (mut bytes, mut files) = (0, 0);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_file() {
                bytes += entry.metadata()?.len();
                files += 1;
            }
        }
    }
    Ok((bytes, files))
}
