//! `dsh-tools run` on a terminal: each in-flight dispatch as a live line (a spinner, its
//! elapsed time and the last line of its output or progress), collapsing to its settled
//! `✓`/`✗` line when it ends. The runtime's progress sink feeds the lines.

use dsh_tools::tool::{ProgressEvent, ProgressSink, ToolExecution, progress_ids};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

/// How often spinners and elapsed times redraw.
const TICK: Duration = Duration::from_millis(100);

/// The live lines of the dispatches in flight, by dispatch id.
pub struct LiveLines {
    bars: MultiProgress,
    live: Mutex<HashMap<String, ProgressBar>>,
}

impl LiveLines {
    pub fn new() -> Arc<Self> {
        Arc::new(LiveLines {
            bars: MultiProgress::new(),
            live: Mutex::new(HashMap::new()),
        })
    }

    /// Shows dispatch `id` as `head` with a spinner until [`end`](Self::end).
    pub fn start(&self, id: &str, head: String) {
        let style = ProgressStyle::with_template("{spinner} {prefix} [{elapsed}] {wide_msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        let bar = self.bars.add(ProgressBar::new_spinner().with_style(style));
        bar.set_prefix(head);
        bar.enable_steady_tick(TICK);
        self.live.lock().insert(id.to_owned(), bar);
    }

    /// Replaces dispatch `id`'s live line by its settled `line`.
    pub fn end(&self, id: &str, line: String) {
        if let Some(bar) = self.live.lock().remove(id) {
            bar.finish_and_clear();
            self.bars.remove(&bar);
        }
        // Printed with the live lines out of the way (they redraw below it).
        self.bars.suspend(|| {
            let _ = writeln!(std::io::stdout().lock(), "{line}");
        });
    }
}

impl ProgressSink for LiveLines {
    fn report(&self, execution: &ToolExecution, event: ProgressEvent) {
        let (_, Some(dispatch)) = progress_ids(execution) else {
            return;
        };
        let shown = match event {
            ProgressEvent::Output { text, .. } => match last_line(&text) {
                Some(line) => line.to_owned(),
                None => return,
            },
            ProgressEvent::Progress {
                progress,
                total,
                message,
            } => {
                let amount = match total {
                    Some(total) => format!("{progress}/{total}"),
                    None => progress.to_string(),
                };
                match message {
                    Some(message) => format!("{amount} {message}"),
                    None => amount,
                }
            }
        };
        if let Some(bar) = self.live.lock().get(dispatch) {
            bar.set_message(shown);
        }
    }
}

/// The last non-blank line of `text`.
fn last_line(text: &str) -> Option<&str> {
    text.lines()
        .rev()
        .map(str::trim_end)
        .find(|l| !l.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_non_blank_line_is_shown() {
        assert_eq!(last_line("a\nb\n\n"), Some("b"));
        assert_eq!(last_line("\n \n"), None);
    }
}
