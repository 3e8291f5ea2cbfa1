//! Accumulating dropped input into the single `Skipped` report the caller logs.

use std::borrow::Cow;

use super::ReadEvent;

/// Bad input dropped since the last event. Consecutive problems (garbage, then a bad
/// header, then more garbage) are one report naming the first cause, so a burst of
/// noise costs the caller one log line.
#[derive(Default)]
pub(super) struct SkipReport {
    first_reason: Option<Cow<'static, str>>,
    bytes: usize,
}

impl SkipReport {
    /// Records a problem that made `bytes` bytes unusable.
    pub(super) fn note(&mut self, reason: impl Into<Cow<'static, str>>, bytes: usize) {
        if self.first_reason.is_none() {
            self.first_reason = Some(reason.into());
        }
        self.bytes += bytes;
    }

    /// Counts more dropped bytes against the problem already noted.
    pub(super) fn add_bytes(&mut self, bytes: usize) {
        self.bytes += bytes;
    }

    /// The pending report as an event, leaving nothing pending.
    pub(super) fn take(&mut self) -> Option<ReadEvent> {
        let reason = self.first_reason.take()?;
        let bytes = std::mem::take(&mut self.bytes);
        Some(ReadEvent::Skipped {
            reason: format!("{reason} ({bytes} bytes skipped)"),
        })
    }
}
