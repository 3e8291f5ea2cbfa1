//! From what a search found to the value: entries ordered (matching files newest first as
//! Claude Code orders them; lines and counts by path, so a page is stable), then `offset`
//! entries skipped and `head_limit` kept.

use super::search::Findings;
use super::{GrepOutput, MatchedFile, MatchedLine, Mode, NotSearched, PathCount};
use std::cmp::Reverse;

/// Which entries to keep.
pub(super) struct Page {
    pub offset: u64,
    /// 0 keeps all.
    pub limit: u64,
    pub line_numbers: bool,
}

impl Page {
    fn holds(&self, index: u64) -> bool {
        index >= self.offset && (self.limit == 0 || index - self.offset < self.limit)
    }

    /// Whether entries follow the page.
    fn truncated(&self, total: u64) -> bool {
        self.limit != 0 && self.offset.saturating_add(self.limit) < total
    }
}

pub(super) fn output(findings: Findings, mode: Mode, page: Page) -> GrepOutput {
    let not_searched = NotSearched {
        too_large: findings.too_large.len() as u64,
        binary: findings.binary,
        unreadable: findings.unreadable,
    };
    let skipped = findings.too_large;
    let offset = page.offset;
    match mode {
        Mode::FilesWithMatches => {
            let mut files: Vec<_> = findings.files.into_iter().collect();
            // Newest first; the path breaks ties so equal times list the same way each time.
            files.sort_by_key(|(path, hits)| (Reverse(hits.modified), path.clone()));
            let total = files.len() as u64;
            let paths = files
                .into_iter()
                .map(|(path, _)| path)
                .skip(to_usize(offset))
                .take(take(&page))
                .collect();
            GrepOutput::FilesWithMatches {
                paths,
                truncated: page.truncated(total),
                total,
                skipped,
                not_searched,
                offset,
            }
        }
        Mode::Count => {
            let total = findings.files.len() as u64;
            let counts = findings
                .files
                .into_iter()
                .map(|(path, hits)| PathCount {
                    path,
                    count: hits.matches,
                })
                .skip(to_usize(offset))
                .take(take(&page))
                .collect();
            GrepOutput::Count {
                counts,
                truncated: page.truncated(total),
                total,
                skipped,
                not_searched,
                offset,
            }
        }
        Mode::Content => {
            let mut total = 0u64;
            let mut files = Vec::new();
            for (path, hits) in findings.files {
                let start = total;
                total += hits.entries;
                let matches: Vec<MatchedLine> = (start..)
                    .zip(hits.lines)
                    .filter(|(index, _)| page.holds(*index))
                    .map(|(_, hit)| MatchedLine {
                        line_number: hit.line_number,
                        line: hit.line,
                        context: hit.context,
                    })
                    .collect();
                if !matches.is_empty() {
                    files.push(MatchedFile { path, matches });
                }
            }
            GrepOutput::Content {
                files,
                truncated: page.truncated(total),
                total,
                skipped,
                not_searched,
                offset,
                line_numbers: page.line_numbers,
            }
        }
    }
}

fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

fn take(page: &Page) -> usize {
    match page.limit {
        0 => usize::MAX,
        limit => to_usize(limit),
    }
}
