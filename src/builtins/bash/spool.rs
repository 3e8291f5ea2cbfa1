//! One stream of a command with spilling on: the first bytes up to the in-memory window
//! are held; once the stream outgrows it, everything (what was held, then each read as it
//! arrives) goes to a spill file, so memory stays bounded and the whole stream is kept.
//! The value then shows the stream's head and tail with a marker naming the file.

use super::capture::HeadTail;
use crate::spill::preview::{join, saved_marker, unsaved_marker};
use crate::spill::{SpillRef, SpillStore, SpillWriter};
use std::sync::Arc;

/// Where bytes past the window go.
enum Sink {
    /// Spilling is off: the middle is dropped (counted in the marker).
    Off,
    /// Not needed yet.
    Ready(Arc<SpillStore>),
    /// Streaming into a file.
    Writing(SpillWriter),
    /// The file could not be written: the middle is lost, and the marker says why.
    Failed(String),
}

/// A captured stream.
pub struct Spool {
    window: HeadTail,
    budget: usize,
    /// Bytes of the stream so far.
    seen: u64,
    /// `stdout` or `stderr`.
    what: &'static str,
    sink: Sink,
}

/// A finished stream: the text for the value and, when it was spilled, the file.
#[derive(Debug)]
pub struct Spooled {
    /// The whole stream, or its head and tail with a marker.
    pub text: String,
    /// The file holding the whole stream.
    pub spilled: Option<SpillRef>,
    /// Whether the text is not the whole stream.
    pub truncated: bool,
}

impl Spool {
    /// A stream holding up to `budget` bytes in memory, spilling into `spill` past it.
    pub fn new(what: &'static str, budget: usize, spill: Option<Arc<SpillStore>>) -> Self {
        // Even, so the window holds exactly `budget` bytes (two equal halves).
        let budget = budget / 2 * 2;
        Spool {
            window: HeadTail::new(budget),
            budget,
            seen: 0,
            what,
            sink: spill.map_or(Sink::Off, Sink::Ready),
        }
    }

    /// Takes bytes read from the pipe (blocking only on the page cache when spilling).
    pub fn push(&mut self, bytes: &[u8]) {
        self.seen += bytes.len() as u64;
        let outgrown = self.window.len() + bytes.len() > self.budget;
        let sink = std::mem::replace(&mut self.sink, Sink::Off);
        self.sink = match sink {
            Sink::Ready(store) if outgrown && !self.window.truncated() => {
                let label = format!("bash-{}", self.what);
                let held = self.window.contents();
                let opened = store.writer(&label).and_then(|mut writer| {
                    writer.write(&held)?;
                    writer.write(bytes)?;
                    Ok(writer)
                });
                match opened {
                    Ok(writer) => Sink::Writing(writer),
                    Err(fault) => self.failed(fault.0),
                }
            }
            Sink::Writing(mut writer) => match writer.write(bytes) {
                Ok(()) => Sink::Writing(writer),
                Err(fault) => self.failed(fault.0),
            },
            other => other,
        };
        self.window.push(bytes);
    }

    fn failed(&self, why: String) -> Sink {
        tracing::warn!("spill: bash {} was not saved whole: {why}", self.what);
        Sink::Failed(why)
    }

    /// The stream's text, its head and tail cut to `preview` bytes each when it did not fit.
    pub fn finish(self, preview: usize) -> Spooled {
        let truncated = self.window.truncated();
        let (sink, what, seen) = (self.sink, self.what, self.seen);
        if !truncated {
            // A writer opened for the last read only (the window was exactly full) is
            // dropped, and its file with it: the value holds everything.
            return Spooled {
                text: String::from_utf8_lossy(&self.window.contents()).into_owned(),
                spilled: None,
                truncated: false,
            };
        }
        let head = lossy(&self.window.head()[..preview.min(self.window.head().len())]);
        let tail_bytes = self.window.tail();
        let tail = lossy(&tail_bytes[tail_bytes.len().saturating_sub(preview)..]);
        let shown = head.len() + tail.len();
        let (marker, spilled) = match sink {
            Sink::Writing(writer) => match writer.finish() {
                Ok(saved) => (
                    saved_marker(what, shown, seen, saved.lines, &saved.path),
                    Some(saved),
                ),
                Err(fault) => (unsaved_marker(what, shown, seen, &fault.0), None),
            },
            Sink::Failed(why) => (unsaved_marker(what, shown, seen, &why), None),
            Sink::Off | Sink::Ready(_) => {
                // Spilling is off: the whole window is kept, as before spilling existed.
                return Spooled {
                    text: self.window.text(),
                    spilled: None,
                    truncated: true,
                };
            }
        };
        Spooled {
            text: join(&head, &tail, &marker, None),
            spilled,
            truncated: true,
        }
    }
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use dsh_tools_protocol::SpillConfig;

    fn store(dir: &std::path::Path) -> Arc<SpillStore> {
        SpillStore::new(&SpillConfig {
            dir: Some(dir.join("s").display().to_string()),
            ..SpillConfig::default()
        })
    }

    #[test]
    fn a_stream_within_the_window_stays_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let mut spool = Spool::new("stdout", 10, Some(store(dir.path())));
        spool.push(b"0123456789");
        let done = spool.finish(2);
        assert_eq!((done.text.as_str(), done.truncated), ("0123456789", false));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        assert!(done.spilled.is_none());
    }

    #[test]
    fn a_stream_past_the_window_is_saved_whole() {
        let dir = tempfile::tempdir().unwrap();
        // Held: a store that goes away removes its files.
        let store = store(dir.path());
        let mut spool = Spool::new("stdout", 10, Some(store.clone()));
        let mut written = Vec::new();
        for i in 0..100u8 {
            let chunk = [b'a' + i % 26, b'\n'];
            written.extend_from_slice(&chunk);
            spool.push(&chunk);
        }
        let done = spool.finish(4);
        let saved = done.spilled.unwrap();
        assert_eq!(std::fs::read(&saved.path).unwrap(), written);
        assert_eq!((saved.bytes, saved.lines), (200, 100));
        let marker = format!(
            "[... 192 bytes not shown: the whole stdout (200 bytes, 100 lines) is saved in {} ...]",
            saved.path.display()
        );
        assert_eq!(done.text, format!("a\nb\n{marker}\nu\nv\n"));
    }

    #[test]
    fn without_spilling_the_middle_is_dropped_as_before() {
        let mut spool = Spool::new("stdout", 4, None);
        spool.push(b"abcdefgh");
        let done = spool.finish(1);
        assert_eq!(done.text, "ab\n[... 4 bytes omitted ...]\ngh");
        assert!(done.truncated && done.spilled.is_none());
    }
}
