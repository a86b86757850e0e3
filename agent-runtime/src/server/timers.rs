//! Timers of one agent: `Schedule` directives, cron firings and ticks, in one ordered map.

use std::collections::BTreeMap;
use std::pin::Pin;

use tokio::time::{Instant, Sleep};

use crate::signal::Signal;

/// Identifies a timer: its deadline plus a sequence number, so equal deadlines fire in the
/// order they were armed.
pub(crate) type TimerKey = (Instant, u64);

/// What a timer does when it fires.
#[derive(Debug)]
pub(crate) enum TimerKind {
    /// Deliver this signal (a `Schedule` directive, or a restored one).
    Signal(Signal),
    /// Fire the cron job with this id.
    Cron(String),
    /// Tick the strategy.
    Tick,
}

/// The pending timers, and one `Sleep` allocated on first use and reset to the earliest one.
#[derive(Debug, Default)]
pub(crate) struct Timers {
    entries: BTreeMap<TimerKey, TimerKind>,
    seq: u64,
    sleep: Option<Pin<Box<Sleep>>>,
}

impl Timers {
    pub(crate) fn insert(&mut self, at: Instant, kind: TimerKind) -> TimerKey {
        self.seq += 1;
        let key = (at, self.seq);
        self.entries.insert(key, kind);
        key
    }

    pub(crate) fn remove(&mut self, key: TimerKey) -> Option<TimerKind> {
        self.entries.remove(&key)
    }

    /// The earliest timer due at or before `now`.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Option<TimerKind> {
        let entry = self.entries.first_entry()?;
        (entry.key().0 <= now).then(|| entry.remove())
    }

    /// Pending timers in firing order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Instant, &TimerKind)> {
        self.entries.iter().map(|((at, _), kind)| (*at, kind))
    }

    /// Completes when the earliest timer is due; never, when there is none.
    pub(crate) async fn wait(&mut self) {
        let Some(&(deadline, _)) = self.entries.keys().next() else {
            return std::future::pending().await;
        };
        let sleep = match &mut self.sleep {
            Some(sleep) => {
                if sleep.deadline() != deadline {
                    sleep.as_mut().reset(deadline);
                }
                sleep
            }
            none => none.insert(Box::pin(tokio::time::sleep_until(deadline))),
        };
        sleep.as_mut().await;
    }
}
