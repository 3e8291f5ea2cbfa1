//! The search itself, on ripgrep's libraries: `grep-regex` builds the matcher as `rg` does
//! (`-i`, `-U --multiline-dotall`), `grep-searcher` streams each file with `rg`'s binary
//! detection (a NUL byte stops the search of a file found by the walk) and BOM sniffing,
//! and the walk runs on all cores (`walk::parallel`). Every file is opened here, beneath the
//! root without following links (`beneath::ReadRoot`, `open_for_reading` from a root opened
//! once per search), checked to be a regular file on its descriptor, and read at most
//! [`MAX_FILE_BYTES`] + 1 bytes: the searcher never opens a path by name.

use super::super::beneath;
use super::super::root::FsRoot;
use super::super::walk::{self, Filters};
use super::Mode;
use grep_matcher::LineTerminator;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::io::{self, Read};
use std::path::Path;
use std::time::SystemTime;
use tokio_util::sync::CancellationToken;

/// Larger files are not searched (named in the result instead).
pub(super) const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// Kept lines are cut to this many characters.
const MAX_LINE_CHARS: usize = 500;
/// Lines a content search may hold beyond its page before it drops the unshowable ones.
const PRUNE_AFTER: u64 = 50_000;

/// What to look for and what to keep.
pub(super) struct Query {
    pub matcher: RegexMatcher,
    pub mode: Mode,
    pub before: usize,
    pub after: usize,
    pub multiline: bool,
    /// Entries (lines in content mode) that can be shown: `offset + head_limit`, or
    /// `u64::MAX` without a limit. Lines past it are counted, not kept.
    pub window_end: u64,
}

/// The matcher `rg` builds for the same flags.
pub(super) fn matcher(
    pattern: &str,
    case_insensitive: bool,
    multiline: bool,
) -> Result<RegexMatcher, grep_regex::Error> {
    let mut builder = RegexMatcherBuilder::new();
    builder
        .case_insensitive(case_insensitive)
        .multi_line(true)
        .unicode(true)
        .octal(false);
    if multiline {
        builder.dot_matches_new_line(true);
    } else {
        builder.line_terminator(Some(b'\n'));
    }
    builder.build(pattern)
}

/// One kept line.
pub(super) struct Hit {
    pub line_number: u64,
    pub line: String,
    /// A line around a match (`-A`/`-B`/`-C`), not a match.
    pub context: bool,
}

/// One file with at least one match.
pub(super) struct FileHits {
    pub modified: SystemTime,
    /// Matches (`rg -c`'s count).
    pub matches: u64,
    /// Lines in content mode (matches and context), kept or not.
    pub entries: u64,
    /// The kept lines (content mode).
    pub lines: Vec<Hit>,
}

/// Everything one search found.
#[derive(Default)]
pub(super) struct Findings {
    /// Matching files by display path.
    pub files: BTreeMap<String, FileHits>,
    /// Files over [`MAX_FILE_BYTES`], sorted.
    pub too_large: Vec<String>,
    /// Files whose search stopped at a NUL byte.
    pub binary: u64,
    /// Files and directories that could not be opened or read.
    pub unreadable: u64,
    /// Lines kept across `files` (content mode).
    kept: u64,
}

impl Findings {
    fn add(&mut self, path: String, hits: FileHits, window_end: u64) {
        self.kept += hits.lines.len() as u64;
        self.files.insert(path, hits);
        // Kept lines are bounded by the page: once twice the window (and at least
        // `PRUNE_AFTER` lines) is held, the lines of files past it (in path order) can never
        // be shown and are dropped. The floor keeps pruning rare on small pages.
        if window_end != u64::MAX && self.kept > window_end.saturating_mul(2).max(PRUNE_AFTER) {
            let mut seen = 0u64;
            self.kept = 0;
            for hits in self.files.values_mut() {
                if seen >= window_end {
                    hits.lines = Vec::new();
                }
                seen = seen.saturating_add(hits.entries);
                self.kept += hits.lines.len() as u64;
            }
        }
    }
}

/// Searches `base` (a directory, walked; or a file, searched whatever the filters say, as
/// `rg` does with a named file) for `query`. `None` when the signal stopped it.
pub(super) fn run(
    root: &FsRoot,
    base: &Path,
    filters: Filters,
    query: &Query,
    token: &CancellationToken,
) -> Option<Findings> {
    let shared = Mutex::new(Findings::default());
    // Opened once: a search opens thousands of files beneath it.
    let Ok(opener) = beneath::ReadRoot::open(root.path()) else {
        let mut findings = shared.into_inner();
        findings.unreadable = 1;
        return Some(findings);
    };
    let opener = &opener;
    if base.is_dir() {
        let walked = walk::parallel(root, base, filters, token, || {
            let mut searcher = searcher(query);
            let shared = &shared;
            Box::new(move |entry| {
                search_one(root, opener, entry.path(), query, &mut searcher, shared);
                true
            })
        });
        if walked.cancelled {
            return None;
        }
        shared.lock().unreadable += walked.unreadable;
    } else {
        search_one(root, opener, base, query, &mut searcher(query), &shared);
    }
    let mut findings = shared.into_inner();
    findings.too_large.sort();
    Some(findings)
}

/// A searcher configured as `rg`'s for a walked file.
fn searcher(query: &Query) -> Searcher {
    let content = query.mode == Mode::Content;
    SearcherBuilder::new()
        .line_terminator(LineTerminator::byte(b'\n'))
        .line_number(true)
        .multi_line(query.multiline)
        .before_context(if content { query.before } else { 0 })
        .after_context(if content { query.after } else { 0 })
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .bom_sniffing(true)
        .build()
}

fn search_one(
    root: &FsRoot,
    opener: &beneath::ReadRoot,
    path: &Path,
    query: &Query,
    searcher: &mut Searcher,
    shared: &Mutex<Findings>,
) {
    // The display path is made only for a file the result names (most files are not).
    let display = || {
        root.display(path)
            .unwrap_or_else(|| path.display().to_string())
    };
    let Ok(file) = opener.open_for_reading(root.path(), path) else {
        shared.lock().unreadable += 1;
        return;
    };
    let meta = match file.metadata() {
        Ok(meta) if meta.is_file() => meta,
        // A FIFO, device or directory swapped in after the listing.
        _ => {
            shared.lock().unreadable += 1;
            return;
        }
    };
    if meta.len() > MAX_FILE_BYTES {
        shared.lock().too_large.push(display());
        return;
    }
    let mut reader = Capped { file, read: 0 };
    let mut sink = FileSink {
        mode: query.mode,
        keep: query.window_end,
        lines: Vec::new(),
        matches: 0,
        entries: 0,
        binary: false,
    };
    let searched = searcher.search_reader(&query.matcher, &mut reader, &mut sink);
    if reader.read > MAX_FILE_BYTES {
        // It grew past the cap while being read.
        shared.lock().too_large.push(display());
    } else if searched.is_err() {
        shared.lock().unreadable += 1;
    } else if sink.binary || sink.matches > 0 {
        // rg squashes the count of a file it stopped searching at a NUL byte (a partial
        // count would mislead); lines shown before the NUL stay, as rg prints them.
        let squashed = sink.binary && query.mode == Mode::Count;
        let found = (sink.matches > 0 && !squashed).then(|| {
            let hits = FileHits {
                modified: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                matches: sink.matches,
                entries: sink.entries,
                lines: sink.lines,
            };
            (display(), hits)
        });
        let mut findings = shared.lock();
        findings.binary += u64::from(sink.binary);
        if let Some((path, hits)) = found {
            findings.add(path, hits, query.window_end);
        }
    }
}

/// The file, read at most one byte past the cap (however large it claims to be or grows).
struct Capped {
    file: std::fs::File,
    read: u64,
}

impl Read for Capped {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let room = (MAX_FILE_BYTES + 1).saturating_sub(self.read);
        let len = buf.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        let n = self.file.read(&mut buf[..len])?;
        self.read += n as u64;
        Ok(n)
    }
}

/// What one file's search reports, by mode.
struct FileSink {
    mode: Mode,
    keep: u64,
    lines: Vec<Hit>,
    matches: u64,
    entries: u64,
    binary: bool,
}

impl FileSink {
    fn push(&mut self, line_number: u64, bytes: &[u8], context: bool) {
        self.entries += 1;
        if (self.lines.len() as u64) < self.keep {
            let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
            let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
            let line = String::from_utf8_lossy(bytes);
            self.lines.push(Hit {
                line_number,
                line: line.chars().take(MAX_LINE_CHARS).collect(),
                context,
            });
        }
    }
}

impl Sink for FileSink {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.matches += 1;
        match self.mode {
            // One match decides the file, as `rg -l` stops at it.
            Mode::FilesWithMatches => return Ok(false),
            Mode::Count => {}
            Mode::Content => {
                let first = found.line_number().unwrap_or(0);
                for (index, line) in found.lines().enumerate() {
                    self.push(first + index as u64, line, false);
                }
            }
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> Result<bool, io::Error> {
        if self.mode == Mode::Content {
            self.push(context.line_number().unwrap_or(0), context.bytes(), true);
        }
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(false)
    }
}
