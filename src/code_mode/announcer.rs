//! Dispatch events in dispatch-number order: a sub-call's start is announced only after every
//! earlier one was announced or abandoned, and its end only after its start, however the
//! tasks that report them interleave (calls start in submission order, but each reports
//! from its own task).

use super::events::{CodeEvents, DispatchEnd, DispatchStart};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Orders the dispatch events of one run.
pub struct Announcer {
    events: Arc<dyn CodeEvents>,
    state: Mutex<Pending>,
}

#[derive(Default)]
struct Pending {
    /// Every number up to this one was announced or abandoned.
    announced: u64,
    /// Starts (`None`: abandoned) waiting for an earlier number.
    starts: BTreeMap<u64, Option<DispatchStart>>,
    /// Ends whose start is still waiting.
    ends: BTreeMap<u64, DispatchEnd>,
}

impl Announcer {
    /// Announces through `events`.
    pub fn new(events: Arc<dyn CodeEvents>) -> Self {
        Announcer {
            events,
            state: Mutex::new(Pending::default()),
        }
    }

    /// Sub-call `number` started.
    pub fn started(&self, number: u64, event: DispatchStart) {
        self.settle(number, Some(event));
    }

    /// Sub-call `number` never started: it is never announced.
    pub fn abandoned(&self, number: u64) {
        self.settle(number, None);
    }

    /// Sub-call `number` settled.
    pub fn ended(&self, number: u64, event: DispatchEnd) {
        let mut pending = self.state.lock();
        if number <= pending.announced {
            self.events.dispatch_end(event);
        } else {
            pending.ends.insert(number, event);
        }
    }

    /// Emits under the lock, so the order of emission is the order of numbers.
    fn settle(&self, number: u64, start: Option<DispatchStart>) {
        let mut pending = self.state.lock();
        pending.starts.insert(number, start);
        loop {
            let next = pending.announced + 1;
            let Some(start) = pending.starts.remove(&next) else {
                break;
            };
            pending.announced = next;
            if let Some(start) = start {
                self.events.dispatch_start(start);
            }
            if let Some(end) = pending.ends.remove(&next) {
                self.events.dispatch_end(end);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::runtime::LogStream;
    use serde_json::json;

    #[derive(Default)]
    struct Recorder(Mutex<Vec<String>>);

    impl CodeEvents for Recorder {
        fn dispatch_start(&self, event: DispatchStart) {
            self.0.lock().push(format!("start {}", event.id));
        }
        fn dispatch_end(&self, event: DispatchEnd) {
            self.0.lock().push(format!("end {}", event.id));
        }
        fn log(&self, _: &str, _: LogStream, _: &str) {}
    }

    fn start(n: u64) -> DispatchStart {
        DispatchStart {
            id: format!("c:code:{n}"),
            parent: "c".into(),
            name: "t".into(),
            arguments: json!({}),
            time: 0.0,
        }
    }

    fn end(n: u64) -> DispatchEnd {
        DispatchEnd {
            id: format!("c:code:{n}"),
            parent: "c".into(),
            name: "t".into(),
            arguments: json!({}),
            content: vec![],
            is_error: false,
            time: (0.0, 0.0),
        }
    }

    enum Report {
        Started(u64),
        Abandoned(u64),
        Ended(u64),
    }

    fn check(reports: &[Report], expected: &[&str]) {
        let recorder = Arc::new(Recorder::default());
        let announcer = Announcer::new(recorder.clone());
        for report in reports {
            match *report {
                Report::Started(n) => announcer.started(n, start(n)),
                Report::Abandoned(n) => announcer.abandoned(n),
                Report::Ended(n) => announcer.ended(n, end(n)),
            }
        }
        assert_eq!(*recorder.0.lock(), expected);
    }

    #[test]
    fn events_follow_dispatch_numbers_whatever_order_tasks_report_in() {
        use Report::*;
        check(
            &[Started(1), Ended(1), Started(2), Ended(2)],
            &[
                "start c:code:1",
                "end c:code:1",
                "start c:code:2",
                "end c:code:2",
            ],
        );
        check(
            &[Started(2), Started(1), Ended(2), Ended(1)],
            &[
                "start c:code:1",
                "start c:code:2",
                "end c:code:2",
                "end c:code:1",
            ],
        );
        check(
            &[Started(3), Ended(3), Started(2), Started(1)],
            &[
                "start c:code:1",
                "start c:code:2",
                "start c:code:3",
                "end c:code:3",
            ],
        );
        check(
            &[Started(2), Abandoned(3), Started(4), Abandoned(1), Ended(4)],
            &["start c:code:2", "start c:code:4", "end c:code:4"],
        );
        check(&[Abandoned(1), Abandoned(2)], &[]);
    }
}
