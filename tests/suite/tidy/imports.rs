//! The layer table as data and the import check over it: every `crate::` and `super::` path
//! in a source file is resolved to the module it names and compared by rank.

/// The ranks of layers.txt, highest first.
pub struct Layers {
    ranks: Vec<Rank>,
}

struct Rank {
    modules: Vec<String>,
    owns: String,
}

impl Layers {
    /// Reads `modules | owns` lines; `#` lines are comments.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut ranks = Vec::new();
        for line in text
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        {
            let (modules, owns) = line
                .split_once('|')
                .ok_or_else(|| format!("layers.txt: no `|` in {line:?}"))?;
            ranks.push(Rank {
                modules: modules.split_whitespace().map(str::to_owned).collect(),
                owns: owns.trim().to_owned(),
            });
        }
        Ok(Self { ranks })
    }

    /// The table as ARCHITECTURE.md shows it.
    pub fn markdown(&self) -> String {
        let mut table = String::from("| rank | modules | owns |\n|---|---|---|\n");
        for (index, rank) in self.ranks.iter().enumerate() {
            let modules: Vec<String> = rank.modules.iter().map(|m| format!("`{m}`")).collect();
            table.push_str(&format!(
                "| {} | {} | {} |\n",
                index + 1,
                modules.join(", "),
                rank.owns
            ));
        }
        table
    }

    /// The listed module that owns `path` (the longest listed prefix) and its rank.
    fn unit_of(&self, path: &[&str]) -> Option<(&str, usize)> {
        let mut best: Option<(&str, usize)> = None;
        for (index, rank) in self.ranks.iter().enumerate() {
            for module in &rank.modules {
                let segments: Vec<&str> = module.split("::").collect();
                let longer = best.is_none_or(|(b, _)| b.split("::").count() < segments.len());
                if path.starts_with(&segments) && longer {
                    best = Some((module, index));
                }
            }
        }
        best
    }

    /// Whether `path` is a parent of listed modules without being one (`frontends`).
    fn is_facade(&self, path: &[&str]) -> bool {
        self.ranks.iter().flat_map(|r| &r.modules).any(|module| {
            let segments: Vec<&str> = module.split("::").collect();
            segments.len() > path.len() && segments.starts_with(path)
        })
    }
}

/// Every import of `files` (paths relative to `src/`) that goes against `layers`, sorted.
pub fn violations(layers: &Layers, files: &[(String, String)]) -> Vec<String> {
    let mut found = Vec::new();
    for (path, text) in files {
        if path == "lib.rs" || path == "main.rs" || path.starts_with("cli/") {
            continue; // the crate root and the binary sit above every layer
        }
        let module = module_of(path);
        let segments: Vec<&str> = module.split("::").collect();
        let code = without_comments(text);
        let Some((unit, rank)) = layers.unit_of(&segments) else {
            if layers.is_facade(&segments) {
                if let Some((offset, _)) = references(&segments, &code).first() {
                    let line = line_of(&code, *offset);
                    found.push(format!(
                        "{path}:{line}: a parent of layers only declares them"
                    ));
                }
            } else {
                found.push(format!(
                    "{path}: module `{module}` has no row in layers.txt"
                ));
            }
            continue;
        };
        let mut seen = Vec::new();
        for (offset, target) in references(&segments, &code) {
            let target: Vec<&str> = target.split("::").collect();
            let Some((other, other_rank)) = layers.unit_of(&target) else {
                continue; // a facade, or `super` past the crate root
            };
            let line = line_of(&code, offset);
            let problem = if other == unit || other_rank > rank {
                continue;
            } else if other_rank == rank {
                format!("{path}:{line}: `{unit}` imports its peer `{other}`")
            } else {
                format!("{path}:{line}: `{unit}` imports `{other}`, a higher layer")
            };
            if !seen.contains(&problem) {
                seen.push(problem);
            }
        }
        found.extend(seen);
    }
    found.sort();
    found
}

/// `json/parse.rs` → `json::parse`; `runtime/js/mod.rs` → `runtime::js`.
fn module_of(path: &str) -> String {
    let stem = path.strip_suffix(".rs").unwrap_or(path);
    let stem = stem.strip_suffix("/mod").unwrap_or(stem);
    stem.replace('/', "::")
}

/// `text` with `//` comments blanked (same length, so offsets keep their lines).
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|line| {
            let cut = line
                .match_indices("//")
                .find(|(at, _)| !line[..*at].ends_with(':'))
                .map_or(line.len(), |(at, _)| at);
            format!("{}{}", &line[..cut], " ".repeat(line.len() - cut))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

/// Every module path named through `crate::` or `super::` in `code` of module `module`, with
/// the offset where it is named.
fn references(module: &[&str], code: &str) -> Vec<(usize, String)> {
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let boundary = at == 0 || !is_path_char(bytes[at - 1]);
        let rest = &bytes[at..];
        let base: Option<(Vec<String>, usize)> = if boundary && rest.starts_with(b"crate::") {
            Some((Vec::new(), "crate::".len()))
        } else if boundary && rest.starts_with(b"super::") {
            let mut base: Vec<String> = module.iter().map(|s| (*s).to_owned()).collect();
            let mut length = 0;
            while bytes[at + length..].starts_with(b"super::") {
                base.pop();
                length += "super::".len();
            }
            Some((base, length))
        } else {
            None
        };
        match base {
            Some((base, length)) => {
                let mut cursor = at + length;
                let mut leaves = Vec::new();
                use_tree(bytes, &mut cursor, base, &mut leaves);
                found.extend(leaves.into_iter().map(|leaf| (at, leaf.join("::"))));
                at = cursor.max(at + 1);
            }
            None => at += 1,
        }
    }
    found
}

fn is_path_char(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b':'
}

/// Reads one use tree (`a::b`, `{a, b::{c, d}}`, `*`) into its leaf paths.
fn use_tree(bytes: &[u8], cursor: &mut usize, prefix: Vec<String>, leaves: &mut Vec<Vec<String>>) {
    skip_space(bytes, cursor);
    if bytes.get(*cursor) == Some(&b'{') {
        *cursor += 1;
        loop {
            skip_space(bytes, cursor);
            match bytes.get(*cursor) {
                None => return,
                Some(b'}') => {
                    *cursor += 1;
                    return;
                }
                Some(b',') => *cursor += 1,
                Some(_) => {
                    let before = *cursor;
                    use_tree(bytes, cursor, prefix.clone(), leaves);
                    if *cursor == before {
                        *cursor += 1; // `*`, `as` renames and the like
                    }
                }
            }
        }
    }
    let start = *cursor;
    while bytes
        .get(*cursor)
        .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
    {
        *cursor += 1;
    }
    let mut path = prefix;
    if *cursor > start {
        path.push(String::from_utf8_lossy(&bytes[start..*cursor]).into_owned());
    }
    if bytes[*cursor..].starts_with(b"::") {
        *cursor += 2;
        use_tree(bytes, cursor, path, leaves);
    } else if !path.is_empty() {
        leaves.push(path);
    }
}

fn skip_space(bytes: &[u8], cursor: &mut usize) {
    while bytes.get(*cursor).is_some_and(u8::is_ascii_whitespace) {
        *cursor += 1;
    }
}
